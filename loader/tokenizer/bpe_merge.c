/* BPE merges: a scan over a bit mask of part starts for pieces of up to 64
 * bytes, an array scan (as tiktoken) up to 128, and a heap with
 * a linked list for long ones, giving the same tokens. */
#include <stdlib.h>
#include <string.h>

#include "bpe_merge.h"

#define SHORT_PIECE 128

/* tiktoken's loop over token ids: n parts, ids[i] the token of part i;
 * ranks[i] the token of parts i and i+1 together (ranks are ids). */
static ordo_status merge_short(const ordo__bpe *bpe, const unsigned char *piece, size_t len,
                               ordo__tokens *out, ordo_error *err)
{
    const ordo__bpe_pairs *pairs = ordo__bpe_pairs_of(bpe);
    const uint32_t *byte_rank = ordo__bpe_byte_ranks(bpe), *pair_rank = ordo__bpe_pair_ranks(bpe);
    uint32_t ids[SHORT_PIECE], ranks[SHORT_PIECE];
    size_t n = len;
    for (size_t i = 0; i < len; i++)
        ids[i] = byte_rank[piece[i]];
    for (size_t i = 0; i + 1 < n; i++)
        ranks[i] = pair_rank[piece[i] << 8 | piece[i + 1]];
    while (n > 1) {
        uint32_t best = UINT32_MAX;
        size_t at = 0;
        for (size_t i = 0; i + 1 < n; i++)
            if (ranks[i] < best) {
                best = ranks[i];
                at = i;
            }
        if (best == UINT32_MAX)
            break;
        ids[at] = best;
        for (size_t i = at + 1; i + 1 < n; i++)
            ids[i] = ids[i + 1];
        for (size_t i = at + 1; i + 2 < n; i++)
            ranks[i] = ranks[i + 1];
        n--;
        if (at + 1 < n)
            ranks[at] = ordo__bpe_pair(pairs, ids[at], ids[at + 1]);
        if (at > 0)
            ranks[at - 1] = ordo__bpe_pair(pairs, ids[at - 1], ids[at]);
    }
    ordo_status status = ordo__tokens_reserve(out, n, err);
    if (status != ORDO_OK)
        return status;
    memcpy(out->ids + out->count, ids, n * sizeof *ids);
    out->count += n;
    return ORDO_OK;
}

/* Pieces of at most 64 bytes, the same merges without moving anything:
 * bit i of `starts` is set while a part begins at byte i; ids[i] is that
 * part's token and ranks[i] the token of it and the next part together
 * (UINT32_MAX: none, or no part begins there). The ids are written
 * straight into out. */
static ordo_status merge_masked(const ordo__bpe *bpe, const unsigned char *piece, size_t len,
                                ordo__tokens *out, ordo_error *err)
{
    const ordo__bpe_pairs *pairs = ordo__bpe_pairs_of(bpe);
    const uint32_t *byte_rank = ordo__bpe_byte_ranks(bpe), *pair_rank = ordo__bpe_pair_ranks(bpe);
    uint32_t ids[64], ranks[64];
    for (size_t i = 0; i < len; i++)
        ids[i] = byte_rank[piece[i]];
    for (size_t i = 0; i + 1 < len; i++)
        ranks[i] = pair_rank[piece[i] << 8 | piece[i + 1]];
    if (len)
        ranks[len - 1] = UINT32_MAX; /* the last part has no next */
    uint64_t starts = len == 64 ? UINT64_MAX : ((uint64_t)1 << len) - 1;
    for (;;) {
        /* rank << 32 | byte: the leftmost lowest, over the parts alone (a
         * piece of three-byte characters soon has a third as many parts
         * as bytes: UDHR +8%) */
        uint64_t low = UINT64_MAX;
        for (uint64_t left = starts; left; left &= left - 1) {
            size_t i = (size_t)__builtin_ctzll(left);
            uint64_t key = (uint64_t)ranks[i] << 32 | i;
            low = key < low ? key : low;
        }
        if (low >> 32 == UINT32_MAX)
            break;
        size_t at = (uint32_t)low;
        ids[at] = (uint32_t)(low >> 32);
        uint64_t later = starts & ~(((uint64_t)2 << at) - 1); /* at <= 62 */
        size_t gone = (size_t)__builtin_ctzll(later);
        starts &= ~((uint64_t)1 << gone);
        ranks[gone] = UINT32_MAX;
        later &= later - 1;
        uint64_t earlier = starts & (((uint64_t)1 << at) - 1);
        size_t after = later ? (size_t)__builtin_ctzll(later) : at;
        size_t before = earlier ? 63 - (size_t)__builtin_clzll(earlier) : at;
        /* both lookups' table slots load together; the filter is near */
        ordo__bpe_pair_prefetch(pairs, ids[at], ids[after]);
        ordo__bpe_pair_prefetch(pairs, ids[before], ids[at]);
        ranks[at] = later ? ordo__bpe_pair(pairs, ids[at], ids[after]) : UINT32_MAX;
        if (earlier)
            ranks[before] = ordo__bpe_pair(pairs, ids[before], ids[at]);
    }
    ordo_status status = ordo__tokens_reserve(out, (size_t)__builtin_popcountll(starts), err);
    if (status != ORDO_OK)
        return status;
    for (; starts; starts &= starts - 1)
        out->ids[out->count++] = ids[__builtin_ctzll(starts)];
    return ORDO_OK;
}

typedef struct {
    uint32_t rank;
    uint32_t node;
    uint32_t version;
} heap_entry;

typedef struct {
    size_t *start;
    uint32_t *next, *prev, *version;
    unsigned char *dead;
    heap_entry *heap;
    size_t heap_size;
} long_state;

static int before(const long_state *s, heap_entry a, heap_entry b)
{
    return a.rank < b.rank || (a.rank == b.rank && s->start[a.node] < s->start[b.node]);
}

static void heap_push(long_state *s, heap_entry e)
{
    size_t i = s->heap_size++;
    while (i > 0 && before(s, e, s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = e;
}

static heap_entry heap_pop(long_state *s)
{
    heap_entry top = s->heap[0], last = s->heap[--s->heap_size];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= s->heap_size)
            break;
        if (child + 1 < s->heap_size && before(s, s->heap[child + 1], s->heap[child]))
            child++;
        if (!before(s, s->heap[child], last))
            break;
        s->heap[i] = s->heap[child];
        i = child;
    }
    if (s->heap_size)
        s->heap[i] = last;
    return top;
}

/* Rank of node n merged with its successor (UINT32_MAX at the end). */
static uint32_t pair_rank(const ordo__bpe *bpe, const unsigned char *piece, size_t len,
                          const long_state *s, uint32_t n)
{
    uint32_t m = s->next[n];
    if (m == UINT32_MAX)
        return UINT32_MAX;
    size_t end = s->next[m] == UINT32_MAX ? len : s->start[s->next[m]];
    return ordo__bpe_rank(bpe, piece + s->start[n], end - s->start[n]);
}

static void push_pair(const ordo__bpe *bpe, const unsigned char *piece, size_t len, long_state *s,
                      uint32_t n)
{
    uint32_t rank = pair_rank(bpe, piece, len, s, n);
    if (rank != UINT32_MAX)
        heap_push(s, (heap_entry){rank, n, ++s->version[n]});
    else
        ++s->version[n]; /* invalidates older entries */
}

static ordo_status merge_long(const ordo__bpe *bpe, const unsigned char *piece, size_t len,
                              ordo__tokens *out, ordo_error *err)
{
    long_state s = {malloc(len * sizeof(size_t)),
                    malloc(len * sizeof(uint32_t)),
                    malloc(len * sizeof(uint32_t)),
                    calloc(len, sizeof(uint32_t)),
                    calloc(len, 1),
                    malloc(3 * len * sizeof(heap_entry)),
                    0};
    ordo_status status = ORDO_OK;
    if (!s.start || !s.next || !s.prev || !s.version || !s.dead || !s.heap)
        status = ordo__error(err, ORDO_NOMEM, "out of memory merging a %zu-byte piece", len);
    for (size_t i = 0; status == ORDO_OK && i < len; i++) {
        s.start[i] = i;
        s.next[i] = i + 1 < len ? (uint32_t)(i + 1) : UINT32_MAX;
        s.prev[i] = i > 0 ? (uint32_t)(i - 1) : UINT32_MAX;
    }
    for (size_t i = 0; status == ORDO_OK && i < len; i++)
        push_pair(bpe, piece, len, &s, (uint32_t)i);
    while (status == ORDO_OK && s.heap_size > 0) {
        heap_entry e = heap_pop(&s);
        if (s.dead[e.node] || e.version != s.version[e.node])
            continue;
        uint32_t gone = s.next[e.node];
        s.dead[gone] = 1;
        s.next[e.node] = s.next[gone];
        if (s.next[gone] != UINT32_MAX)
            s.prev[s.next[gone]] = e.node;
        push_pair(bpe, piece, len, &s, e.node);
        if (s.prev[e.node] != UINT32_MAX)
            push_pair(bpe, piece, len, &s, s.prev[e.node]);
    }
    for (uint32_t n = 0; status == ORDO_OK && n != UINT32_MAX; n = s.next[n]) {
        size_t end = s.next[n] == UINT32_MAX ? len : s.start[s.next[n]];
        status =
            ordo__tokens_push(out, ordo__bpe_rank(bpe, piece + s.start[n], end - s.start[n]), err);
    }
    free(s.start), free(s.next), free(s.prev), free(s.version), free(s.dead), free(s.heap);
    return status;
}

/* Merges a piece that is no token itself; see bpe_merge.h. */
ordo_status ordo__bpe_merge_parts(const ordo__bpe *bpe, const unsigned char *piece, size_t len,
                                  ordo__tokens *out, ordo_error *err)
{
    if (len <= 64)
        return merge_masked(bpe, piece, len, out, err);
    return len <= SHORT_PIECE ? merge_short(bpe, piece, len, out, err)
                              : merge_long(bpe, piece, len, out, err);
}

/* Merges one piece; see bpe_merge.h. */
ordo_status ordo__bpe_merge(const ordo__bpe *bpe, const unsigned char *piece, size_t len,
                            ordo__tokens *out, ordo_error *err)
{
    uint32_t whole = ordo__bpe_rank(bpe, piece, len);
    if (whole != UINT32_MAX)
        return ordo__tokens_push(out, whole, err);
    return ordo__bpe_merge_parts(bpe, piece, len, out, err);
}
