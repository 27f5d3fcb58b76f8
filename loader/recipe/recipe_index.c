/* The recipe's plan: chunk tables and token estimates, computed once and
 * kept in the ledger (a resumed run never re-measures them). */
#include <stdlib.h>
#include <string.h>

#include "estimate.h"

/* What a shard's chunk table is made under; see ordo__shard_key. */
ordo__shard_key ordo__shard_key_of(const ordo_recipe *r, const ordo__source *src,
                                   const ordo__shard *shard)
{
    return (ordo__shard_key){src->text_field, src->filter_key ? src->filter_key : "",
                             shard->format == ORDO_FORMAT_JSONL ? r->chunk_records : 0};
}

/* The chunk limit of a recipe; see recipe.h. */
uint64_t ordo__chunk_limit(const ordo_recipe *r)
{
    uint64_t limit = ORDO__CHUNK_BUDGET / (uint64_t)(r->lanes > 0 ? r->lanes : 1);
    return limit < ORDO__CHUNK_MIN   ? ORDO__CHUNK_MIN
           : limit > ORDO__CHUNK_MAX ? ORDO__CHUNK_MAX
                                     : limit;
}

/* An index made for a recipe with fewer lanes may hold chunks too large for
 * this one: checked before any lane reads them; see recipe.h. */
ordo_status ordo__recipe_chunks_fit(const ordo_recipe *r, const ordo__shard *shard, ordo_error *err)
{
    uint64_t limit = ordo__chunk_limit(r);
    for (uint32_t c = 0; c < shard->chunk_count; c++)
        if (shard->chunks[c].raw_length > limit)
            return ordo__error(err, ORDO_INVALID,
                               "shard '%s': chunk %u at byte %llu holds %llu bytes; with %d "
                               "lanes a chunk may hold at most %llu (256 MiB / lanes, at least "
                               "4 MiB: every lane holds its chunks in memory)",
                               shard->path, c, (unsigned long long)shard->chunks[c].offset,
                               (unsigned long long)shard->chunks[c].raw_length, r->lanes,
                               (unsigned long long)limit);
    return ORDO_OK;
}

/* A shard indexer's bytes done within its shard, as the recipe's bytes
 * done of all its shards. */
typedef struct {
    ordo_progress_fn progress;
    void *context;
    uint64_t before, size, total; /* bytes of the shards before this one; its own */
} shard_progress;

static void within_shard(void *context, uint64_t bytes_done)
{
    const shard_progress *p = context;
    p->progress(p->before + (bytes_done < p->size ? bytes_done : p->size), p->total, p->context);
}

static ordo_status index_shards(ordo_recipe *r, ordo_ledger *ledger, ordo_progress_fn progress,
                                void *context, ordo_error *err)
{
    uint64_t total = 0, done = 0;
    r->indexed_shards = 0;
    for (uint32_t s = 0; s < r->source_count; s++)
        for (uint32_t i = 0; i < r->sources[s].shard_count; i++)
            total += r->sources[s].shards[i].size;
    for (uint32_t s = 0; s < r->source_count; s++) {
        ordo__source *src = &r->sources[s];
        for (uint32_t i = 0; i < src->shard_count; i++) {
            ordo__shard *shard = &src->shards[i];
            int found = 0;
            ordo__shard_key key = ordo__shard_key_of(r, src, shard);
            ordo_status status =
                ledger ? ordo__chunk_table_load(ledger, shard, &key, &found, err) : ORDO_OK;
            /* An index is made from the file's bytes under its digest. */
            if (status == ORDO_OK && !found)
                status = ordo__shard_check_whole(r, shard, err);
            if (status == ORDO_OK && !found) {
                char *path = ordo__shard_path(r, shard);
                shard_progress within = {progress, context, done, shard->size, total};
                ordo__index_spec spec = {.read = {src->text_field, src->filter, 0, 0},
                                         .per_chunk = r->chunk_records,
                                         .chunk_limit = ordo__chunk_limit(r),
                                         .lanes = r->lanes,
                                         .progress = progress ? within_shard : NULL,
                                         .progress_context = &within};
                status = path ? ordo__shard_index(path, shard, &spec, err)
                              : ordo__error(err, ORDO_NOMEM, "out of memory");
                free(path);
                r->indexed_shards++;
                if (status == ORDO_OK && ledger)
                    status = ordo__chunk_table_store(ledger, shard, &key, err);
            }
            if (status == ORDO_OK)
                status = ordo__recipe_chunks_fit(r, shard, err);
            if (status == ORDO_OK && ledger)
                status = ordo__chunk_table_link(ledger, r->id, src->name, i, shard, &key, err);
            if (status == ORDO_OK && ledger)
                status = ordo__shard_remember(ledger, r, shard, err);
            if (status != ORDO_OK)
                return status;
            done += shard->size;
            if (progress)
                progress(done, total, context);
        }
    }
    return ORDO_OK;
}

/* Flat chunk lists and integer shares; see recipe.h. */
ordo_status ordo__recipe_finish_plan(ordo_recipe *r, ordo_error *err)
{
    for (uint32_t s = 0; s < r->source_count; s++) {
        ordo__source *src = &r->sources[s];
        uint64_t count = 0;
        for (uint32_t i = 0; i < src->shard_count; i++)
            count += src->shards[i].chunk_count;
        if (count > UINT32_MAX)
            return ordo__error(err, ORDO_INVALID, "source '%s' has more than 2^32 chunks",
                               src->name);
        free(src->chunks);
        src->chunks = malloc((count ? count : 1) * sizeof *src->chunks);
        if (!src->chunks)
            return ordo__error(err, ORDO_NOMEM, "out of memory planning a recipe");
        src->chunk_count = 0;
        for (uint32_t i = 0; i < src->shard_count; i++)
            for (uint32_t c = 0; c < src->shards[i].chunk_count; c++)
                src->chunks[src->chunk_count++] = (ordo__chunk_ref){i, c};
        /* the rank-bound contrast mixes by the first entry's shares */
        src->share = r->mix[0].shares[s] ? r->mix[0].shares[s] : 1;
        uint64_t docs = 0; /* documents kept, what units are cut from */
        for (uint32_t i = 0; i < src->shard_count; i++)
            for (uint32_t c = 0; c < src->shards[i].chunk_count; c++)
                docs += src->shards[i].chunks[c].records;
        if (docs == 0)
            return ordo__error(err, ORDO_INVALID,
                               "source '%s' has no documents (every record is blank, empty or "
                               "filtered out): add documents or remove the source",
                               src->name);
        if (docs < (uint64_t)r->lanes)
            return ordo__error(err, ORDO_INVALID,
                               "source '%s' has %llu document%s, fewer than the recipe's %d "
                               "lanes: every lane reads documents of its own, so use at most "
                               "%llu lanes or add documents",
                               src->name, (unsigned long long)docs, docs == 1 ? "" : "s", r->lanes,
                               (unsigned long long)docs);
    }
    return ORDO_OK;
}

static ordo_status estimate_all(ordo_recipe *r, ordo_ledger *ledger, ordo_error *err)
{
    for (uint32_t s = 0; s < r->source_count; s++) {
        ordo__source *src = &r->sources[s];
        int found = 0;
        ordo__estimate sample = {0};
        ordo_status status =
            ledger ? ordo__estimate_load(ledger, r->id, src->name, &sample, &found, err) : ORDO_OK;
        if (status == ORDO_OK && found) {
            src->sample_records = sample.records;
            src->sample_bytes = sample.bytes;
            src->sample_tokens = sample.tokens;
        } else if (status == ORDO_OK) {
            status = ordo__estimate_source(r, s, err);
            sample = (ordo__estimate){src->sample_records, src->sample_bytes, src->sample_tokens};
            if (status == ORDO_OK && ledger)
                status = ordo__estimate_store(ledger, r->id, src->name, &sample, err);
        }
        if (status != ORDO_OK)
            return status;
    }
    return ORDO_OK;
}

static ordo_status index_locked(ordo_recipe *r, ordo_ledger *ledger, ordo_progress_fn progress,
                                void *context, ordo_error *err)
{
    ordo_status status = ORDO_OK;
    if (ledger) {
        char id[ORDO_DIGEST_HEX_SIZE];
        status = ordo_recipe_put(ledger, r->canonical, strlen(r->canonical), id, err);
    }
    if (status == ORDO_OK)
        status = index_shards(r, ledger, progress, context, err);
    if (status == ORDO_OK)
        status = ordo__recipe_finish_plan(r, err);
    if (status == ORDO_OK)
        status = estimate_all(r, ledger, err);
    return status;
}

/* Makes (or reloads) the recipe's plan; see ordo.h. */
ordo_status ordo_recipe_index(ordo_recipe *r, ordo_ledger *ledger, ordo_progress_fn progress,
                              void *context, ordo_error *err)
{
    if (r->planned)
        return ordo__ok(err);
    ordo_status status = index_locked(r, ledger, progress, context, err);
    if (status == ORDO_OK)
        r->planned = 1;
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* Shards the last ordo_recipe_index read; see ordo.h. */
int ordo_recipe_indexed_shards(const ordo_recipe *recipe)
{
    return recipe->indexed_shards;
}

/* Shard files hashed whole since the recipe was opened; see ordo.h. */
void ordo_recipe_hashed(const ordo_recipe *recipe, int *shards, uint64_t *bytes)
{
    if (shards)
        *shards = recipe->hashed_shards;
    if (bytes)
        *bytes = recipe->hashed_bytes;
}
