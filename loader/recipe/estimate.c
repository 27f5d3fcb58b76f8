/* TokenEstimation (docs/recipe.md, "How a lane's data is decided": token-ratio
 * mixing): tokens per byte of each source, measured by
 * tokenizing whole chunks taken in a seeded order until the sample holds
 * estimate_records documents (or the source is exhausted). */
#include <stdlib.h>

#include "estimate.h"
#include "shards/shards.h"
#include "core/core.h"

typedef struct {
    const ordo_recipe *recipe;
    const char *path;      /* the shard being read */
    uint64_t first_record; /* its chunk's first record */
    ordo__tokens tokens;
    uint64_t count;
    ordo_status status;
    ordo_error *err;
} count_context;

static int count_doc(void *context, const char *text, size_t len, uint64_t record)
{
    count_context *c = context;
    c->tokens.count = 0;
    c->status = ordo__tokenize(c->recipe, text, len, &c->tokens, c->err);
    if (c->status != ORDO_OK)
        ordo__error_prefix(c->err, "shard '%s' record %llu: ", c->path,
                           (unsigned long long)(c->first_record + record));
    c->count += c->tokens.count + ordo__doc_specials(c->recipe); /* + [bos] and eos */
    return c->status != ORDO_OK;
}

static ordo_status sample_chunk(const ordo_recipe *r, ordo__source *source, uint32_t index,
                                count_context *counter, ordo_error *err)
{
    const ordo__chunk_ref ref = source->chunks[index];
    const ordo__shard *shard = &source->shards[ref.shard];
    const ordo__chunk *chunk = &shard->chunks[ref.chunk];
    char *path = ordo__shard_path(r, shard);
    ordo__read_spec spec = {source->text_field, source->filter, 0, 0};
    ordo__counts counts = {0};
    counter->path = path;
    counter->first_record = chunk->first_record;
    ordo_status status =
        path ? ordo__chunk_read(path, shard, ref.chunk, &spec, count_doc, counter, &counts, err)
             : ordo__error(err, ORDO_NOMEM, "out of memory");
    if (status == ORDO_OK)
        status = counter->status;
    if (status == ORDO_OK) {
        source->sample_records += counts.passed;
        source->sample_bytes += chunk->raw_length;
    }
    free(path);
    return status;
}

/* Measures one source; see estimate.h. */
ordo_status ordo__estimate_source(const ordo_recipe *r, uint32_t index, ordo_error *err)
{
    ordo__source *source = &r->sources[index];
    if (source->chunk_count == 0)
        return ordo__error(err, ORDO_INVALID, "source '%s' has no documents", source->name);
    uint32_t *order = malloc(source->chunk_count * sizeof *order);
    if (!order)
        return ordo__error(err, ORDO_NOMEM, "out of memory estimating tokens");
    for (uint32_t i = 0; i < source->chunk_count; i++)
        order[i] = i;
    ordo__rng rng;
    ordo__rng_seed(&rng, r->seed, "token-estimate", index, 0);
    ordo__rng_permute(&rng, order, source->chunk_count);
    count_context counter = {r, NULL, 0, {0}, 0, ORDO_OK, err};
    source->sample_records = source->sample_bytes = 0;
    ordo_status status = ORDO_OK;
    for (uint32_t i = 0; status == ORDO_OK && i < source->chunk_count &&
                         source->sample_records < (uint64_t)r->estimate_records;
         i++)
        status = sample_chunk(r, source, order[i], &counter, err);
    source->sample_tokens = counter.count;
    free(counter.tokens.ids);
    free(order);
    if (status == ORDO_OK && source->sample_bytes == 0)
        status = ordo__error(err, ORDO_INVALID, "source '%s' has no bytes to estimate from",
                             source->name);
    return status;
}
