/* Opening a recipe from its plan document (recipe_plan.c writes it): the
 * resolved recipe is parsed as the ledger would give it (its shards'
 * digests as recorded, no shard read or hashed) and the chunk tables and
 * token estimates come from the document, checked against the recipe. The
 * content is checked chunk by chunk as it is read, against the chunk
 * digests of the plan. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe.h"
#include "recipe_plan.h"

/* Reads a chunk from its plan bytes; see recipe_plan.h. */
void ordo__plan_chunk_get(const unsigned char in[ORDO__PLAN_CHUNK], ordo__chunk *c)
{
    *c = (ordo__chunk){.offset = ordo__get_le(in, 8),
                       .length = ordo__get_le(in + 8, 8),
                       .raw_length = ordo__get_le(in + 16, 8),
                       .first_record = ordo__get_le(in + 24, 8),
                       .aux_offset = ordo__get_le(in + 32, 8),
                       .records = (uint32_t)ordo__get_le(in + 40, 4),
                       .aux_length = (uint32_t)ordo__get_le(in + 44, 4)};
    memcpy(c->digest, in + 48, ORDO_DIGEST_SIZE);
}

static ordo_status ORDO_PRINTF(2, 3) bad(ordo_error *err, const char *fmt, ...)
{
    char text[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return ordo__error(err, ORDO_INVALID, "plan: %s", text);
}

static int get_u64(json_t *object, const char *key, uint64_t *out)
{
    json_t *v = json_object_get(object, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* Decodes a base64 member into *out (the caller's, free) of *size bytes. */
static int get_base64(json_t *object, const char *key, unsigned char **out, size_t *size)
{
    const char *text = json_string_value(json_object_get(object, key));
    size_t len = text ? json_string_length(json_object_get(object, key)) : 0;
    *out = NULL;
    if (!text || len % 4 != 0 || len / 4 * 3 > INT_MAX || !(*out = malloc(len / 4 * 3 + 1)))
        return -1;
    int n = len ? ordo__base64_decode_into(text, len, *out) : 0;
    *size = n < 0 ? 0 : (size_t)n;
    return n < 0 ? -1 : 0;
}

/* The chunks of a shard from its plan bytes, each checked to lie in the
 * shard's file and its locator in the shard's aux bytes. */
static ordo_status read_chunks(ordo__shard *shard, const char *where, const unsigned char *table,
                               ordo_error *err)
{
    shard->chunks = calloc(shard->chunk_count ? shard->chunk_count : 1, sizeof *shard->chunks);
    if (!shard->chunks)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a plan");
    for (uint32_t c = 0; c < shard->chunk_count; c++) {
        ordo__chunk *k = &shard->chunks[c];
        ordo__plan_chunk_get(table + (size_t)ORDO__PLAN_CHUNK * c, k);
        if (k->offset > shard->size || k->length > shard->size - k->offset)
            return bad(err, "%s chunk %u: bytes %llu..+%llu lie past the shard's %llu", where, c,
                       (unsigned long long)k->offset, (unsigned long long)k->length,
                       (unsigned long long)shard->size);
        if (k->aux_offset > shard->aux_size || k->aux_length > shard->aux_size - k->aux_offset)
            return bad(err, "%s chunk %u: its locator lies past the %llu aux bytes", where, c,
                       (unsigned long long)shard->aux_size);
        if (k->records > k->raw_length)
            return bad(err, "%s chunk %u: %u documents in %llu bytes", where, c, k->records,
                       (unsigned long long)k->raw_length);
    }
    return ORDO_OK;
}

/* One shard's entry: the recipe's path, digest and size, then its table. */
static ordo_status read_shard(ordo__shard *shard, const char *source, size_t i, json_t *entry,
                              ordo_error *err)
{
    char where[96 + 256];
    snprintf(where, sizeof where, "source '%s' shards[%zu] ('%.255s')", source, i, shard->path);
    const char *path = json_string_value(json_object_get(entry, "path"));
    const char *hex = json_string_value(json_object_get(entry, "sha256"));
    char want[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(shard->sha256, want);
    uint64_t bytes = 0, count = 0, filtered = 0;
    if (!json_is_object(entry) || !path || strcmp(path, shard->path) != 0)
        return bad(err, "%s: the plan names another shard ('%.255s')", where, path ? path : "");
    if (!hex || strcmp(hex, want) != 0)
        return bad(err, "%s: its SHA-256 is %.64s in the plan, %s in the recipe", where,
                   hex ? hex : "missing", want);
    if (get_u64(entry, "bytes", &bytes) || bytes != shard->size)
        return bad(err, "%s: 'bytes' is not the recipe's %llu", where,
                   (unsigned long long)shard->size);
    if (get_u64(entry, "records", &shard->records) || get_u64(entry, "skipped", &shard->skipped) ||
        get_u64(entry, "filtered", &filtered) || get_u64(entry, "chunk_count", &count) ||
        count > UINT32_MAX)
        return bad(err, "%s needs records, skipped, filtered and chunk_count", where);
    shard->chunk_count = (uint32_t)count;
    shard->counts = (ordo__counts){.read = shard->records + shard->skipped + filtered,
                                   .passed = shard->records,
                                   .filtered = filtered,
                                   .empty = shard->skipped};
    unsigned char *table = NULL;
    size_t size = 0;
    ordo_status status = ORDO_OK;
    size_t aux_size = 0;
    if (get_base64(entry, "aux", &shard->aux, &aux_size))
        status = bad(err, "%s: 'aux' is not base64", where);
    shard->aux_size = aux_size;
    if (status == ORDO_OK && (get_base64(entry, "chunks", &table, &size) ||
                              size != (size_t)ORDO__PLAN_CHUNK * shard->chunk_count))
        status = bad(err, "%s: 'chunks' is not base64 of %u chunks of %d bytes", where,
                     shard->chunk_count, ORDO__PLAN_CHUNK);
    if (status == ORDO_OK)
        status = read_chunks(shard, where, table, err);
    free(table);
    return status;
}

static ordo_status read_source(ordo__source *src, size_t s, json_t *entry, ordo_error *err)
{
    const char *name = json_string_value(json_object_get(entry, "name"));
    json_t *shards = json_object_get(entry, "shards");
    json_t *estimate = json_object_get(entry, "estimate");
    if (!name || strcmp(name, src->name) != 0)
        return bad(err, "sources[%zu] is not the recipe's source '%s'", s, src->name);
    if (!json_is_array(shards) || json_array_size(shards) != src->shard_count)
        return bad(err, "source '%s' needs its %u shards", src->name, src->shard_count);
    if (get_u64(estimate, "records", &src->sample_records) ||
        get_u64(estimate, "bytes", &src->sample_bytes) ||
        get_u64(estimate, "tokens", &src->sample_tokens) || !src->sample_bytes ||
        !src->sample_tokens)
        return bad(err, "source '%s' needs an estimate of positive bytes and tokens", src->name);
    for (uint32_t i = 0; i < src->shard_count; i++) {
        ordo_status status =
            read_shard(&src->shards[i], src->name, i, json_array_get(shards, i), err);
        if (status != ORDO_OK)
            return status;
    }
    return ORDO_OK;
}

/* The recipe the document holds, parsed as resolved (its shards listed
 * with digests, so no file is globbed or hashed); checked to be `id`. */
static ordo_status read_recipe(json_t *doc, const char *id, const char *data_root,
                               ordo_recipe **out, ordo_error *err)
{
    const char *named = json_string_value(json_object_get(doc, "recipe_id"));
    json_t *recipe = json_object_get(doc, "recipe");
    if (!named || !json_is_object(recipe))
        return bad(err, "needs 'recipe_id' and 'recipe'");
    if (id && strcmp(named, id) != 0)
        return ordo__error(err, ORDO_CONFLICT, "plan: the plan is of recipe %.64s, not %s", named,
                           id);
    size_t i;
    json_t *source;
    json_array_foreach(json_object_get(recipe, "sources"), i, source)
    {
        if (!json_is_object(source) || json_object_get(source, "paths"))
            return bad(err, "recipe sources[%zu] is not resolved (a plan lists shards)", i);
    }
    char *text = json_dumps(recipe, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a plan");
    ordo_status status = ordo_recipe_parse(text, strlen(text), data_root, 0, out, err);
    free(text);
    if (status == ORDO_OK && strcmp((*out)->id, named) != 0)
        status = bad(err, "its recipe's id is %s, not the 'recipe_id' %.64s", (*out)->id, named);
    return status;
}

static ordo_status read_plan(json_t *doc, const char *id, const char *data_root, ordo_recipe **out,
                             ordo_error *err)
{
    const char *format = json_string_value(json_object_get(doc, "format"));
    json_t *version = json_object_get(doc, "version");
    json_t *sources = json_object_get(doc, "sources");
    if (!json_is_object(doc) || !format || strcmp(format, ORDO__PLAN_NAME) != 0)
        return bad(err, "not an ordo plan (its 'format' is not \"" ORDO__PLAN_NAME "\")");
    if (!json_is_integer(version) || json_integer_value(version) != ORDO_PLAN_VERSION)
        return ordo__error(err, ORDO_VERSION, "plan: version %lld, this library reads version %d",
                           json_is_integer(version) ? (long long)json_integer_value(version) : -1,
                           ORDO_PLAN_VERSION);
    ordo_status status = read_recipe(doc, id, data_root, out, err);
    ordo_recipe *r = *out;
    if (status == ORDO_OK &&
        (!json_is_array(sources) || json_array_size(sources) != r->source_count))
        status = bad(err, "needs 'sources', the recipe's %u", r->source_count);
    for (uint32_t s = 0; status == ORDO_OK && s < r->source_count; s++)
        status = read_source(&r->sources[s], s, json_array_get(sources, s), err);
    if (status == ORDO_OK)
        status = ordo__recipe_finish_plan(r, err);
    for (uint32_t s = 0; status == ORDO_OK && s < r->source_count; s++)
        for (uint32_t i = 0; status == ORDO_OK && i < r->sources[s].shard_count; i++)
            status = ordo__recipe_chunks_fit(r, &r->sources[s].shards[i], err);
    return status;
}

/* Opens a recipe from its plan document; see ordo.h. */
ordo_status ordo_recipe_open_plan(const char *plan, size_t size, const char *id,
                                  const char *data_root, ordo_recipe **recipe, ordo_error *err)
{
    *recipe = NULL;
    json_error_t jerr;
    json_t *doc = json_loadb(plan, size, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc)
        return bad(err, "malformed at line %d, column %d (byte %d): %s", jerr.line, jerr.column,
                   jerr.position, jerr.text);
    ordo_recipe *r = NULL;
    ordo_status status = read_plan(doc, id, data_root ? data_root : ".", &r, err);
    json_decref(doc);
    if (status != ORDO_OK) {
        ordo_recipe_free(r);
        return status;
    }
    r->planned = 1;
    *recipe = r;
    return ordo__ok(err);
}
