/* Merging several short words side by side (hf_model.h): each word is
 * merged exactly as merge_short in hf_bpe_merge.c merges it (the listed
 * merge of lowest rank, leftmost first, until none is left), but the
 * words take turns, one merge each: the two table lookups a merge needs
 * are prefetched when it is applied and read at the word's next turn, by
 * when the other words' turns have hidden their latency. */
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"
#include "piece_cache.h"

#define QUEUE 16

typedef struct word {
    const char *piece;
    uint64_t hash; /* the piece's, for the cache */
    uint32_t len, n;
    int done;
    uint32_t stale[2];       /* pair positions to look up at the next turn */
    ordo__hf_probe probe[2]; /* their lookups, started */
    uint32_t ids[ORDO__HF_SHORT_WORD + ORDO__HF_SLACK], ranks[ORDO__HF_SHORT_WORD + ORDO__HF_SLACK];
} word;

struct ordo__hf_batch {
    size_t count;
    word words[QUEUE];
};

ORDO__HF_INLINE void prefetch(const void *p)
{
#if defined(__GNUC__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

/* Starts loading the slot of pair (i, i + 1), when its bits allow a merge. */
ORDO__HF_INLINE void prefetch_pair(const ordo__hf_bpe *b, const word *w, size_t i)
{
    uint32_t left = w->ids[i], right = w->ids[i + 1];
    if (ordo__hf_pair_may_merge(b, left, right))
        ordo__hf_merge_prefetch(&b->merges, left, right);
}

static void rank_pair(const ordo__hf_bpe *b, word *w, size_t i)
{
    uint32_t rank = ordo__hf_pair_rank(b, w->ids[i], w->ids[i + 1]);
    w->ranks[i] = rank;
    if (rank != ORDO__HF_NONE)
        prefetch(&b->merges.ids[rank]);
}

/* Pair (i, i + 1) becomes stale[k], its lookup started; or, when its
 * bits rule a merge out, its rank is NONE at once. */
ORDO__HF_INLINE void start_pair(const ordo__hf_bpe *b, word *w, int k, size_t i)
{
    uint32_t left = w->ids[i], right = w->ids[i + 1];
    if (ordo__hf_pair_may_merge(b, left, right)) {
        w->stale[k] = (uint32_t)i;
        w->probe[k] = ordo__hf_merge_start(&b->merges, left, right);
    } else
        w->ranks[i] = ORDO__HF_NONE;
}

/* One turn: the lookups the last merge started are finished, then the
 * merge of lowest rank (leftmost) is applied, or the word is done. */
static void turn(const ordo__hf_bpe *b, word *w)
{
    for (int k = 0; k < 2; k++)
        if (w->stale[k] != ORDO__HF_NONE) {
            uint32_t rank = ordo__hf_merge_finish(&b->merges, &w->probe[k]);
            w->ranks[w->stale[k]] = rank;
            if (rank != ORDO__HF_NONE)
                prefetch(&b->merges.ids[rank]);
        }
    size_t at, n = w->n;
    uint32_t best = ordo__hf_lowest(w->ranks, n - 1, &at);
    w->stale[0] = w->stale[1] = ORDO__HF_NONE;
    if (best == ORDO__HF_NONE) {
        w->done = 1;
        return;
    }
    w->ids[at] = b->merges.ids[best];
    ordo__hf_close_gap(w->ids, w->ranks, at, n);
    w->n = (uint32_t)--n;
    if (at + 1 < n)
        start_pair(b, w, 0, at);
    if (at > 0)
        start_pair(b, w, 1, at - 1);
    if (n == 1)
        w->done = 1;
}

static void merge_all(const ordo__hf_bpe *b, struct ordo__hf_batch *q)
{
    for (size_t k = 0; k < q->count; k++)
        for (size_t i = 0; !q->words[k].done && i + 1 < q->words[k].n; i++)
            prefetch_pair(b, &q->words[k], i);
    for (size_t k = 0; k < q->count; k++)
        for (size_t i = 0; !q->words[k].done && i + 1 < q->words[k].n; i++)
            rank_pair(b, &q->words[k], i);
    for (int active = 1; active;) {
        active = 0;
        for (size_t k = 0; k < q->count; k++)
            if (!q->words[k].done) {
                turn(b, &q->words[k]);
                active = 1;
            }
    }
}

/* Merges and appends what is queued; see hf_model.h. */
ordo_status ordo__hf_batch_flush(const ordo__hf_bpe *b, ordo__hf_scratch *s, ordo__tokens *out,
                                 ordo_error *err)
{
    struct ordo__hf_batch *q = s->batch;
    if (!q || q->count == 0)
        return ORDO_OK;
    merge_all(b, q);
    size_t total = 0;
    for (size_t k = 0; k < q->count; k++)
        total += q->words[k].n;
    ordo_status status = ordo__tokens_reserve(out, total, err);
    for (size_t k = 0; status == ORDO_OK && k < q->count; k++) {
        const word *w = &q->words[k];
        memcpy(out->ids + out->count, w->ids, w->n * sizeof *w->ids);
        out->count += w->n;
        if (s->cache && w->piece)
            ordo__piece_cache_put_hashed(s->cache, b->owner, w->hash,
                                         (const unsigned char *)w->piece, w->len, w->ids, w->n);
    }
    q->count = 0;
    return status;
}

/* Queues a word; see hf_model.h. */
ordo_status ordo__hf_batch_add(const ordo__hf_bpe *b, ordo__hf_scratch *s, const char *piece,
                               size_t len, uint64_t hash, const uint32_t *ids, size_t n, int done,
                               ordo__tokens *out, ordo_error *err)
{
    if (!s->batch) {
        if (!(s->batch = malloc(sizeof *s->batch)))
            return ordo__error(err, ORDO_NOMEM, "out of memory merging words");
        s->batch->count = 0;
    }
    struct ordo__hf_batch *q = s->batch;
    word *w = &q->words[q->count++];
    w->piece = done ? NULL : piece;
    w->hash = hash;
    w->len = (uint32_t)len;
    w->n = (uint32_t)n;
    w->done = done || n < 2;
    w->stale[0] = w->stale[1] = ORDO__HF_NONE;
    memcpy(w->ids, ids, n * sizeof *ids);
    return q->count == QUEUE ? ordo__hf_batch_flush(b, s, out, err) : ORDO_OK;
}

/* Nothing queued; see hf_model.h. */
int ordo__hf_batch_empty(const ordo__hf_scratch *s)
{
    return !s->batch || s->batch->count == 0;
}

/* Drops what is queued; see hf_model.h. */
void ordo__hf_batch_clear(ordo__hf_scratch *s)
{
    if (s->batch)
        s->batch->count = 0;
}
