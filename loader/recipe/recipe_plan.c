/* A recipe's plan as a document (docs/api.md, "GET /api/recipes/{id}/plan"):
 * the resolved recipe with the chunk tables (chunk digests included) and
 * token estimates the ledger holds for it, written from the ledger alone
 * (no shard, no tokenizer file is read), so that a rank can open the recipe
 * without hashing or indexing the corpus (recipe_plan_read.c). */
#include <stdlib.h>
#include <string.h>

#include "recipe.h"
#include "recipe_plan.h"

/* One chunk as its ORDO__PLAN_CHUNK bytes; see recipe_plan.h. */
void ordo__plan_chunk_put(const ordo__chunk *c, unsigned char out[ORDO__PLAN_CHUNK])
{
    ordo__put_le(out, c->offset, 8);
    ordo__put_le(out + 8, c->length, 8);
    ordo__put_le(out + 16, c->raw_length, 8);
    ordo__put_le(out + 24, c->first_record, 8);
    ordo__put_le(out + 32, c->aux_offset, 8);
    ordo__put_le(out + 40, c->records, 4);
    ordo__put_le(out + 44, c->aux_length, 4);
    memcpy(out + 48, c->digest, ORDO_DIGEST_SIZE);
}

static json_t *base64_of(const unsigned char *data, size_t size)
{
    char *text = ordo__base64_encode(data, size);
    json_t *s = text ? json_string(text) : NULL;
    free(text);
    return s;
}

/* The plan's entry of one shard, or NULL when out of memory. */
static json_t *shard_json(const ordo__shard *shard, const char *hex)
{
    size_t n = shard->chunk_count;
    unsigned char *table = malloc(n * ORDO__PLAN_CHUNK + 1);
    if (!table)
        return NULL;
    for (size_t i = 0; i < n; i++)
        ordo__plan_chunk_put(&shard->chunks[i], table + ORDO__PLAN_CHUNK * i);
    json_t *chunks = base64_of(table, n * ORDO__PLAN_CHUNK);
    json_t *aux = base64_of(shard->aux ? shard->aux : (const unsigned char *)"", shard->aux_size);
    free(table);
    return chunks && aux
               ? json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:o}", "path", shard->path,
                           "sha256", hex, "bytes", (json_int_t)shard->size, "records",
                           (json_int_t)shard->records, "skipped", (json_int_t)shard->skipped,
                           "filtered", (json_int_t)shard->counts.filtered, "chunk_count",
                           (json_int_t)n, "chunks", chunks, "aux", aux)
               : (json_decref(chunks), json_decref(aux), NULL);
}

static ordo_status not_indexed(const char *id, const char *what, const char *name, ordo_error *err)
{
    return ordo__error(err, ORDO_NOTFOUND,
                       "recipe %s is not indexed in this ledger (no %s for '%s'): run ordo index",
                       id, what, name);
}

/* The entries of a source's shards from the ledger's links. */
static ordo_status source_shards(ordo_ledger *ledger, const char *id, const char *name,
                                 json_t *shards, json_t *out, ordo_error *err)
{
    size_t i;
    json_t *entry;
    json_array_foreach(shards, i, entry)
    {
        const char *path = json_string_value(json_object_get(entry, "path"));
        const char *hex = json_string_value(json_object_get(entry, "sha256"));
        ordo__shard shard = {.path = (char *)path};
        ordo_error hex_err;
        if (!path || !hex || ordo_digest_from_hex(hex, shard.sha256, &hex_err) != ORDO_OK)
            return ordo__error(err, ORDO_NOTLEDGER,
                               "ledger: recipe %s: source '%s' shards[%zu] is damaged", id, name,
                               i);
        int found = 0;
        ordo_status status =
            ordo__recipe_shard_load(ledger, id, name, (uint32_t)i, &shard, &found, err);
        shard.size = (uint64_t)json_integer_value(json_object_get(entry, "bytes"));
        json_t *item = status == ORDO_OK && found ? shard_json(&shard, hex) : NULL;
        free(shard.chunks);
        free(shard.aux);
        if (status != ORDO_OK)
            return status;
        if (!found)
            return not_indexed(id, "chunk table", path, err);
        if (!item || json_array_append_new(out, item) != 0)
            return ordo__error(err, ORDO_NOMEM, "out of memory writing a plan");
    }
    return ORDO_OK;
}

static ordo_status sources_json(ordo_ledger *ledger, const char *id, json_t *recipe, json_t *out,
                                ordo_error *err)
{
    size_t i;
    json_t *source, *all = json_object_get(recipe, "sources");
    if (!json_is_array(all) || json_array_size(all) == 0)
        return ordo__error(err, ORDO_NOTFOUND,
                           "recipe %s is not indexed in this ledger (it has no sources): run "
                           "ordo index",
                           id);
    json_array_foreach(all, i, source)
    {
        const char *name = json_string_value(json_object_get(source, "name"));
        json_t *shards = json_object_get(source, "shards");
        if (!name || !json_is_array(shards))
            return ordo__error(err, ORDO_NOTFOUND,
                               "recipe %s is not indexed in this ledger (sources[%zu] lists no "
                               "shards): run ordo index",
                               id, i);
        ordo__estimate sample = {0};
        int found = 0;
        ordo_status status = ordo__estimate_load(ledger, id, name, &sample, &found, err);
        if (status == ORDO_OK && !found)
            return not_indexed(id, "token estimate", name, err);
        json_t *list = json_array();
        json_t *item =
            json_pack("{s:s, s:{s:I, s:I, s:I}, s:o}", "name", name, "estimate", "records",
                      (json_int_t)sample.records, "bytes", (json_int_t)sample.bytes, "tokens",
                      (json_int_t)sample.tokens, "shards", list);
        if (status == ORDO_OK && (!item || json_array_append_new(out, item) != 0))
            status = ordo__error(err, ORDO_NOMEM, "out of memory writing a plan");
        if (status == ORDO_OK)
            status = source_shards(ledger, id, name, shards, list, err);
        if (status != ORDO_OK)
            return status;
    }
    return ORDO_OK;
}

/* Writes the plan of a recipe the ledger indexed; see ordo.h. */
ordo_status ordo_recipe_plan_export(ordo_ledger *ledger, const char *id, char **plan, size_t *size,
                                    ordo_error *err)
{
    *plan = NULL;
    if (size)
        *size = 0;
    char *canonical = NULL;
    ordo_status status = ordo_recipe_get(ledger, id, &canonical, err);
    if (status != ORDO_OK)
        return status;
    json_t *recipe = json_loads(canonical, 0, NULL);
    free(canonical);
    json_t *sources = json_array();
    json_t *doc =
        recipe && sources
            ? json_pack("{s:s, s:i, s:s, s:O, s:O}", "format", ORDO__PLAN_NAME, "version",
                        ORDO_PLAN_VERSION, "recipe_id", id, "recipe", recipe, "sources", sources)
            : NULL;
    if (!recipe)
        status = ordo__error(err, ORDO_NOTLEDGER, "ledger: recipe %s is damaged", id);
    else if (!doc)
        status = ordo__error(err, ORDO_NOMEM, "out of memory writing a plan");
    else
        status = sources_json(ledger, id, recipe, sources, err);
    char *text = status == ORDO_OK ? json_dumps(doc, JSON_COMPACT) : NULL;
    if (status == ORDO_OK && !text)
        status = ordo__error(err, ORDO_NOMEM, "out of memory writing a plan");
    json_decref(doc);
    json_decref(sources);
    json_decref(recipe);
    if (status != ORDO_OK)
        return status;
    *plan = text;
    if (size)
        *size = strlen(text);
    return ordo__ok(err);
}
