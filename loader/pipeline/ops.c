/* The stateless operators run by the worker pools: read and tokenize. */
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "shards/shards.h"

/* Room for one more document in the work's arrays; 0: out of memory. */
static int room_for_doc(ordo__work *w)
{
    if (w->doc_count < w->doc_cap)
        return 1;
    size_t cap = w->doc_cap ? 2 * w->doc_cap : 64;
    size_t *grown = realloc(w->doc_len, cap * sizeof *grown);
    if (!grown)
        return 0;
    w->doc_len = grown;
    uint64_t *records = realloc(w->doc_record, cap * sizeof *records);
    if (!records)
        return 0;
    w->doc_record = records;
    w->doc_cap = cap;
    return 1;
}

static int keep_doc(void *context, const char *text, size_t len, uint64_t record)
{
    ordo__work *w = context;
    if (w->read_from && !w->synced) { /* the first document read must be the packer's */
        if (record + 1 < w->read_from)
            return 0; /* a reader that cannot skip records: not counted, as if skipped */
        if (record + 1 != w->read_from && !w->from_bound)
            return 1; /* not a document there: the packer refuses the read */
        w->synced = 1;
    }
    uint64_t index = w->seen++; /* documents of a unit's range only */
    if (w->count && index < w->first)
        return 0; /* count 0: every document */
    if (w->count && index - w->first >= w->count)
        return 1; /* past the range: the rest of the chunk (its bytes checked) is not parsed */
    if (w->text_len + len > w->text_cap) {
        size_t cap = w->text_cap ? w->text_cap : 4096;
        while (cap < w->text_len + len)
            cap *= 2;
        char *grown = realloc(w->text, cap);
        if (!grown)
            return w->oom = 1;
        w->text = grown;
        w->text_cap = cap;
    }
    if (!room_for_doc(w))
        return w->oom = 1;
    w->doc_record[w->doc_count] = record;
    memcpy(w->text + w->text_len, text, len);
    w->text_len += len;
    w->doc_len[w->doc_count++] = len;
    if (w->limit && w->text_len >= w->limit && index + 1 < w->end_doc) {
        w->more = 1; /* read on from the next record when the packer gets there */
        w->next_record = record + 1;
        return 1; /* the records after it are not parsed */
    }
    return 0;
}

/* A unit read from the record of its document first + from_doc: the
 * documents before it are left empty (the tokenizer skips them too) and,
 * where the format reads lines, their records are not parsed. 0: out of
 * memory. */
static int resume_inside(ordo__work *w, const ordo__shard *shard, ordo__read_spec *spec)
{
    if (shard->format == ORDO_FORMAT_JSONL || shard->format == ORDO_FORMAT_JSONL_ZST) {
        spec->skip_records = w->read_from - 1;
        spec->skip_docs = w->first + w->from_doc; /* the chunk's documents before it */
    }
    w->seen = w->first + w->from_doc;
    for (uint64_t d = 0; d < w->from_doc; d++) {
        if (!room_for_doc(w))
            return 0;
        w->doc_record[w->doc_count] = UINT64_MAX;
        w->doc_len[w->doc_count++] = 0;
    }
    return 1;
}

_Atomic uint64_t ordo__cached_read_bytes;

/* Read: fetch and decompress the chunk, split records, extract texts. */
void ordo__op_read(const ordo_recipe *r, ordo__chunk_cache *cache, ordo__work *w)
{
    const ordo__source *src = &r->sources[w->source];
    const ordo__shard *shard = &src->shards[w->ref.shard];
    const ordo__chunk *chunk = &shard->chunks[w->ref.chunk];
    w->text_len = 0;
    w->doc_count = 0;
    w->seen = 0;
    w->oom = 0;
    w->synced = 0;
    w->more = 0;
    w->end_doc = w->count ? (uint64_t)w->first + w->count : chunk->records;
    char *path = ordo__shard_path(r, shard);
    ordo__read_spec spec = {src->text_field, src->filter, 0, 0};
    w->read_from = w->from_record;
    if (!w->read_from && shard->counts.read == shard->records)
        w->read_from = w->first + w->from_doc ? w->first + w->from_doc + 1 : 0; /* record = doc */
    if (w->read_from && !resume_inside(w, shard, &spec))
        w->oom = 1;
    w->status = !path    ? ordo__error(&w->err, ORDO_NOMEM, "out of memory")
                : w->oom ? ORDO_OK
                         : ordo__chunk_read_cached(cache, path, shard, w->ref.chunk, &spec,
                                                   keep_doc, w, NULL, &w->err);
    if (w->status == ORDO_OK && w->oom)
        w->status = ordo__error(&w->err, ORDO_NOMEM, "out of memory reading '%s'", path);
    if (cache)
        atomic_fetch_add(&ordo__cached_read_bytes, w->text_len);
    if (w->status == ORDO_OK && w->count && w->doc_count == 0 && !w->read_from)
        w->status =
            ordo__error(&w->err, ORDO_CONFLICT,
                        "shard '%s': chunk at byte %llu has no documents %u to %u (the "
                        "file changed)",
                        path, (unsigned long long)chunk->offset, w->first, w->first + w->count - 1);
    free(path);
}

/* Frees what a work item holds (not the item). */
void ordo__work_release(ordo__work *w)
{
    free(w->text);
    free(w->doc_len);
    free(w->doc_record);
    free(w->tokens.ids);
    free(w->doc_offset);
    w->text = NULL;
    w->doc_len = NULL;
    w->doc_record = NULL;
    w->tokens = (ordo__tokens){0};
    w->doc_offset = NULL;
    w->text_cap = w->doc_cap = w->offset_cap = 0;
}

_Atomic uint64_t ordo__tokenized_tokens;

/* Names the document a tokenizer refused: its shard and record. */
static void tokenize_failed(const ordo_recipe *r, ordo__work *w, size_t d)
{
    const ordo__shard *shard = &r->sources[w->source].shards[w->ref.shard];
    char *path = ordo__shard_path(r, shard);
    uint64_t record = shard->chunks[w->ref.chunk].first_record + w->doc_record[d];
    ordo__error_prefix(&w->err, "shard '%s' record %llu: ", path ? path : "?",
                       (unsigned long long)record);
    free(path);
}

/* Tokenize: every document as [bos] tokens eos (end-of-text). */
void ordo__op_tokenize(const ordo_recipe *r, ordo__work *w)
{
    w->tokens.count = 0;
    if (w->status != ORDO_OK)
        return;
    if (w->doc_count > w->offset_cap) {
        size_t *grown = realloc(w->doc_offset, w->doc_count * sizeof *grown);
        if (!grown) {
            w->status = ordo__error(&w->err, ORDO_NOMEM, "out of memory tokenizing");
            return;
        }
        w->doc_offset = grown;
        w->offset_cap = w->doc_count;
    }
    uint32_t eot = ordo__eot_id(r), bos = ordo__bos_id(r);
    size_t at = 0, stop = w->token_limit ? (size_t)w->token_limit : SIZE_MAX;
    w->cut = 0;
    for (size_t d = 0; d < w->doc_count && w->status == ORDO_OK; d++) {
        w->doc_offset[d] = w->tokens.count;
        if (d < w->from_doc) { /* before a resumed packer's document: never packed */
            at += w->doc_len[d];
            continue;
        }
        if (bos != ORDO__NO_TOKEN)
            w->status = ordo__tokens_push(&w->tokens, bos, &w->err);
        int complete = 1;
        if (w->status == ORDO_OK)
            w->status = ordo__tokenize_upto(r, w->text + at, w->doc_len[d], stop, &w->tokens,
                                            &complete, &w->err);
        if (w->status != ORDO_OK)
            tokenize_failed(r, w, d);
        if (w->status == ORDO_OK && !complete) { /* the limit is reached inside it */
            w->cut = 1;
            w->doc_count = d + 1;
            break;
        }
        if (w->status == ORDO_OK)
            w->status = ordo__tokens_push(&w->tokens, eot, &w->err);
        at += w->doc_len[d];
    }
    atomic_fetch_add(&ordo__tokenized_tokens, w->tokens.count);
}

/* The rank-bound shuffle window; see pipeline.h. */
size_t ordo__rank_window(const ordo_recipe *r)
{
    return r->shuffle ? (size_t)r->flush_every * (size_t)(r->global_batch / r->lanes) : 0;
}
