/* Running the tokenizer.json BPE model on one piece, as the library's
 * BPE::merge_word and Word::merge_all do: the piece's characters (or
 * bytes) become symbols (with continuing_subword_prefix,
 * end_of_word_suffix, byte_fallback and unk_token as the library applies
 * them), then the listed merge of lowest rank, leftmost first, is applied
 * until none is left. Short pieces scan an array; long ones use a heap
 * over a linked list (the library's own algorithm), O(n log n). */
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"

#define SHORT_WORD ORDO__HF_SHORT_WORD

typedef struct ordo__hf_heap_entry {
    uint32_t rank, pos, id;
} heap_entry;

/* ---- merging ids[0..n) in place; returns the new count ---------------- */

static uint32_t find(const ordo__hf_bpe *b, uint32_t left, uint32_t right)
{
    return ordo__hf_pair_rank(b, left, right);
}

/* find, and starts loading the merged id of the rank found (read when the
 * merge is applied). */
static uint32_t find_ahead(const ordo__hf_bpe *b, uint32_t left, uint32_t right)
{
    uint32_t rank = find(b, left, right);
#if defined(__GNUC__)
    if (rank != ORDO__HF_NONE)
        __builtin_prefetch(&b->merges.ids[rank]);
#endif
    return rank;
}

/* ranks[i] is the rank of the merge of ids[i] and ids[i + 1]; the merged
 * id is read only when a merge is applied. */
static size_t merge_short(const ordo__hf_bpe *b, ordo__hf_scratch *s, size_t n)
{
    uint32_t *ids = s->ids, *ranks = s->ranks;
    for (size_t i = 0; i + 1 < n; i++)
        ordo__hf_merge_prefetch(&b->merges, ids[i], ids[i + 1]);
    for (size_t i = 0; i + 1 < n; i++)
        ranks[i] = find_ahead(b, ids[i], ids[i + 1]);
    while (n > 1) {
        size_t at;
        uint32_t best = ordo__hf_lowest(ranks, n - 1, &at);
        if (best == ORDO__HF_NONE)
            break;
        ids[at] = b->merges.ids[best];
        ordo__hf_close_gap(ids, ranks, at, n);
        n--;
        if (at + 1 < n)
            ranks[at] = find_ahead(b, ids[at], ids[at + 1]);
        if (at > 0)
            ranks[at - 1] = find_ahead(b, ids[at - 1], ids[at]);
    }
    return n;
}

static int before(heap_entry a, heap_entry b)
{
    return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos);
}

static void heap_push(ordo__hf_scratch *s, size_t *size, heap_entry e)
{
    size_t i = (*size)++;
    while (i > 0 && before(e, s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = e;
}

static heap_entry heap_pop(ordo__hf_scratch *s, size_t *size)
{
    heap_entry top = s->heap[0], last = s->heap[--*size];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= *size)
            break;
        if (child + 1 < *size && before(s->heap[child + 1], s->heap[child]))
            child++;
        if (!before(s->heap[child], last))
            break;
        s->heap[i] = s->heap[child];
        i = child;
    }
    if (*size)
        s->heap[i] = last;
    return top;
}

static void push_pair(const ordo__hf_bpe *b, ordo__hf_scratch *s, size_t *size, uint32_t left,
                      uint32_t right)
{
    uint32_t rank = find(b, s->ids[left], s->ids[right]);
    if (rank != ORDO__HF_NONE)
        heap_push(s, size, (heap_entry){rank, left, b->merges.ids[rank]});
}

/* Word::merge_all without dropout: a popped entry is stale when its
 * symbol is gone, has no successor, or the pair there no longer merges
 * into the entry's token. Dead symbols have prev == NONE - 1. */
static ordo_status merge_long(const ordo__hf_bpe *b, ordo__hf_scratch *s, size_t n, size_t *count,
                              ordo_error *err)
{
    const uint32_t dead = ORDO__HF_NONE - 1;
    if (s->heap_cap < 3 * n) { /* n - 1 pairs, then at most 2 more per merge */
        heap_entry *grown = realloc(s->heap, 3 * n * sizeof *grown);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory merging a %zu-symbol word", n);
        s->heap = grown;
        s->heap_cap = 3 * n;
    }
    size_t size = 0;
    for (size_t i = 0; i < n; i++) {
        s->prev[i] = i ? (uint32_t)(i - 1) : ORDO__HF_NONE;
        s->next[i] = i + 1 < n ? (uint32_t)(i + 1) : ORDO__HF_NONE;
    }
    for (size_t i = 0; i + 1 < n; i++)
        ordo__hf_merge_prefetch(&b->merges, s->ids[i], s->ids[i + 1]);
    for (size_t i = 0; i + 1 < n; i++)
        push_pair(b, s, &size, (uint32_t)i, (uint32_t)i + 1);
    while (size > 0) {
        heap_entry top = heap_pop(s, &size);
        uint32_t pos = top.pos, right = s->next[pos];
        if (s->prev[pos] == dead || right == ORDO__HF_NONE)
            continue;
        uint32_t rank = find(b, s->ids[pos], s->ids[right]);
        if (rank == ORDO__HF_NONE || b->merges.ids[rank] != top.id)
            continue;
        s->ids[pos] = top.id;
        s->next[pos] = s->next[right];
        s->prev[right] = dead;
        if (s->next[pos] != ORDO__HF_NONE)
            s->prev[s->next[pos]] = pos;
        if (s->prev[pos] != ORDO__HF_NONE)
            push_pair(b, s, &size, s->prev[pos], pos);
        if (s->next[pos] != ORDO__HF_NONE)
            push_pair(b, s, &size, pos, s->next[pos]);
    }
    size_t k = 0;
    for (uint32_t i = 0; i != ORDO__HF_NONE; i = s->next[i])
        s->ids[k++] = s->ids[i];
    *count = k;
    return ORDO_OK;
}

/* Merges s->ids[0..n) and appends the result; see hf_model.h. */
ordo_status ordo__hf_bpe_merge_emit(const ordo__hf_bpe *b, ordo__hf_scratch *s, size_t n,
                                    ordo__tokens *out, ordo_error *err)
{
    if (n == 0) /* every character dropped (not in the vocab, no unk_token) */
        return ORDO_OK;
    if (n >= ORDO__HF_NONE - 1) /* symbol positions are 32-bit */
        return ordo__error(err, ORDO_INVALID, "a word of %zu symbols is too long to merge", n);
    ordo_status status = ORDO_OK;
    if (n <= SHORT_WORD) {
        if ((status = ordo__hf_scratch_reserve(s, n + ORDO__HF_SLACK, err)) == ORDO_OK)
            n = merge_short(b, s, n);
    } else
        status = merge_long(b, s, n, &n, err);
    if (status == ORDO_OK)
        status = ordo__tokens_reserve(out, n, err);
    if (status != ORDO_OK)
        return status;
    memcpy(out->ids + out->count, s->ids, n * sizeof *s->ids);
    out->count += n;
    return ORDO_OK;
}
