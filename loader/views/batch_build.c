/* Batch provenance: the answer built from an observing loader's last
 * batch, byte offsets of records read from the shards, pieces decoded. */
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "pipeline/pipeline.h"
#include "shards/shards.h"

typedef struct provenance {
    ordo_provenance pub; /* first: ordo_provenance_free casts back */
    ordo_recipe *recipe;
    ordo_batch_sample *samples;
    ordo_batch_piece *pieces;
    uint32_t *tokens;
    unsigned char *digests;
} provenance;

/* Byte offset in the file of line `line` (from 0) of a plain .jsonl
 * chunk's bytes, or -1 when the chunk has fewer lines. */
static int64_t line_offset(const char *data, size_t len, uint64_t chunk_offset, uint64_t line)
{
    size_t at = 0;
    for (uint64_t i = 0; i < line; i++) {
        const char *nl = memchr(data + at, '\n', len - at);
        if (!nl)
            return -1;
        at = (size_t)(nl - data) + 1;
    }
    return (int64_t)(chunk_offset + at);
}

/* The chunk the last piece's record was found in, kept while the next
 * pieces read it: the loader's chunk cache holds it, or (its budget spent)
 * a copy of our own. */
typedef struct held_chunk {
    const ordo__shard *shard;
    uint32_t chunk;
    char *data;
    size_t len;
    int owned;
} held_chunk;

/* The byte offset of a piece's record: .txt 0, .jsonl from its chunk's
 * lines (the chunk as the replay read it, from the loader's chunk cache),
 * -1 for compressed and Parquet shards. */
static ordo_status record_byte(const ordo_recipe *r, ordo__chunk_cache *cache, const ordo__piece *p,
                               held_chunk *held, int64_t *byte, ordo_error *err)
{
    const ordo__shard *shard = &r->sources[p->source].shards[p->shard];
    const ordo__chunk *chunk = &shard->chunks[p->chunk];
    *byte = shard->format == ORDO_FORMAT_TXT ? 0 : -1;
    if (shard->format != ORDO_FORMAT_JSONL)
        return ORDO_OK;
    if (!held->data || held->shard != shard || held->chunk != p->chunk) {
        if (held->owned)
            free(held->data);
        *held = (held_chunk){shard, p->chunk, NULL, 0, 0};
        char *path = ordo__shard_path(r, shard);
        ordo_status status = path
                                 ? ordo__chunk_cache_load(cache, path, shard, p->chunk, &held->data,
                                                          &held->len, &held->owned, err)
                                 : ordo__error(err, ORDO_NOMEM, "out of memory");
        free(path);
        if (status != ORDO_OK)
            return status;
    }
    *byte = line_offset(held->data, held->len, chunk->offset, p->record - chunk->first_record);
    return ORDO_OK;
}

static ordo_status alloc_answer(provenance *pv, const ordo_batch *b, size_t pieces, int lanes,
                                ordo_error *err)
{
    size_t rows = (size_t)b->rows, cells = rows * (size_t)b->sample_len;
    pv->samples = calloc(rows ? rows : 1, sizeof *pv->samples);
    pv->pieces = calloc(pieces ? pieces : 1, sizeof *pv->pieces);
    pv->tokens = malloc((cells ? cells : 1) * sizeof *pv->tokens);
    pv->digests = malloc((size_t)lanes * ORDO_DIGEST_SIZE);
    if (!pv->samples || !pv->pieces || !pv->tokens || !pv->digests)
        return ordo__error(err, ORDO_NOMEM, "out of memory describing a batch");
    memcpy(pv->tokens, b->tokens, cells * sizeof *pv->tokens);
    memcpy(pv->digests, b->lane_digests, (size_t)lanes * ORDO_DIGEST_SIZE);
    return ORDO_OK;
}

/* Fills sample `row` and its pieces from the loader's notes. */
static ordo_status fill_sample(provenance *pv, batch_job *job, const ordo_batch *b, int row,
                               size_t *next, held_chunk *held, ordo_error *err)
{
    const ordo__pieces *noted = ordo__loader_row_pieces(job->loader, row);
    const ordo_recipe *r = job->recipe;
    ordo_batch_sample *s = &pv->samples[row];
    int per_lane = b->rows / b->lane_count;
    s->lane = b->lanes[row / per_lane];
    s->source = b->sources[row];
    s->source_name = r->sources[s->source].name;
    s->tokens = pv->tokens + (size_t)row * (size_t)b->sample_len;
    s->pieces = pv->pieces + *next;
    s->piece_count = (int)noted->count;
    for (size_t i = 0; i < noted->count; i++) {
        const ordo__piece *p = &noted->items[i];
        ordo_batch_piece *out = &pv->pieces[(*next)++];
        *out = (ordo_batch_piece){.shard = r->sources[p->source].shards[p->shard].path,
                                  .record = p->record,
                                  .start = p->start,
                                  .end = p->end,
                                  .length = p->length,
                                  .at = (int)p->at};
        ordo_status status = record_byte(r, job->loader->chunk_cache, p, held, &out->byte, err);
        if (status != ORDO_OK) {
            ordo_error was = *err;
            return ordo__error(err, status, "lane %d: %s", s->lane, was.message);
        }
    }
    return ORDO_OK;
}

/* Builds the answer; see batch.h. */
ordo_status ordo__provenance_build(batch_job *job, const ordo_batch *b, ordo_provenance **out,
                                   ordo_error *err)
{
    size_t pieces = 0;
    for (int row = 0; row < b->rows; row++) {
        const ordo__pieces *noted = ordo__loader_row_pieces(job->loader, row);
        if (!noted)
            return ordo__error(err, ORDO_INVALID, "the loader noted no pieces for row %d", row);
        pieces += noted->count;
    }
    provenance *pv = calloc(1, sizeof *pv);
    ordo_status status = pv ? alloc_answer(pv, b, pieces, job->lanes, err)
                            : ordo__error(err, ORDO_NOMEM, "out of memory");
    size_t next = 0;
    held_chunk held = {0};
    for (int row = 0; status == ORDO_OK && row < b->rows; row++)
        status = fill_sample(pv, job, b, row, &next, &held, err);
    if (held.owned)
        free(held.data);
    if (status != ORDO_OK) {
        ordo_provenance_free(pv ? &pv->pub : NULL);
        return status;
    }
    pv->recipe = job->recipe;
    job->recipe = NULL;
    pv->pub = (ordo_provenance){.step = job->step,
                                .from_step = job->from,
                                .from = job->from_kind,
                                .lanes = job->lanes,
                                .per_lane = b->rows / b->lane_count,
                                .sample_len = b->sample_len,
                                .rows = b->rows,
                                .lane_digests = pv->digests,
                                .samples = pv->samples,
                                .recipe = pv->recipe};
    ordo_batch_digest(pv->digests, job->lanes, pv->pub.batch_digest);
    *out = &pv->pub;
    return ORDO_OK;
}

/* Frees a provenance; see ordo.h. */
void ordo_provenance_free(ordo_provenance *p)
{
    provenance *pv = (provenance *)p;
    if (!pv)
        return;
    ordo_recipe_free(pv->recipe);
    free(pv->samples);
    free(pv->pieces);
    free(pv->tokens);
    free(pv->digests);
    free(pv);
}

/* Decodes a piece's tokens, bos and eos left out; see ordo.h. */
ordo_status ordo_provenance_piece_text(const ordo_provenance *p, int row, int piece, char **text,
                                       size_t *len, ordo_error *err)
{
    *text = NULL;
    *len = 0;
    if (row < 0 || row >= p->rows || piece < 0 || piece >= p->samples[row].piece_count)
        return ordo__error(err, ORDO_INVALID, "no piece %d of sample %d", piece, row);
    const ordo_recipe *r = p->recipe;
    const ordo_batch_piece *bp = &p->samples[row].pieces[piece];
    const uint32_t *ids = p->samples[row].tokens + bp->at;
    size_t count = (size_t)(bp->end - bp->start);
    if (bp->start == 0 && ordo__bos_id(r) != ORDO__NO_TOKEN && count > 0)
        ids++, count--;
    if (bp->end == bp->length && count > 0)
        count--; /* eos */
    if (r->tokenizer)
        return ordo_tokenizer_decode(r->tokenizer, ids, count, text, len, err);
    char *bytes = malloc(count ? count : 1);
    if (!bytes)
        return ordo__error(err, ORDO_NOMEM, "out of memory decoding");
    for (size_t i = 0; i < count; i++) {
        if (ids[i] > 255) {
            free(bytes);
            return ordo__error(err, ORDO_INVALID, "token %u of sample %d is not a byte", ids[i],
                               row);
        }
        bytes[i] = (char)ids[i];
    }
    *text = bytes;
    *len = count;
    return ordo__ok(err);
}
