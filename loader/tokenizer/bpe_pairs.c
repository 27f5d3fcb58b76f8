/* The merge table of a rank file: for every two tokens a, b whose bytes
 * put together are a token c, the pair (a, b) gives c. Merging a piece
 * only ever joins two tokens, so this answers what the rank of their
 * concatenated bytes would, from two ids instead of a string. */
#include <stdlib.h>

#include "bpe_merge.h"

/* Inserts (a, b) -> c (each below 2^20; the table has room). */
static void insert(ordo__bpe_pairs *pairs, uint32_t a, uint32_t b, uint32_t c)
{
    uint64_t key = ordo__bpe_pair_key(a, b);
    uint64_t i = ordo__bpe_pair_slot(pairs, key);
    while (pairs->slots[i])
        i = (i + 1) & pairs->mask;
    pairs->slots[i] = key | (c + 1);
    uint64_t bit = ordo__bpe_pair_bit(key);
    pairs->filter[bit >> 6] |= (uint64_t)1 << (bit & 63);
}

typedef struct {
    uint32_t a, b, c;
} triple;

typedef struct {
    triple *items;
    size_t count, capacity;
} triples;

static int add(triples *t, uint32_t a, uint32_t b, uint32_t c)
{
    if (t->count == t->capacity) {
        size_t cap = t->capacity ? t->capacity * 2 : 4096;
        triple *grown = realloc(t->items, cap * sizeof *grown);
        if (!grown)
            return -1;
        t->items = grown;
        t->capacity = cap;
    }
    t->items[t->count++] = (triple){a, b, c};
    return 0;
}

/* Every (a, b, c) of the rank file: each split of each token c into two
 * tokens (c the first rank of its bytes). */
static int collect(const ordo__bpe *bpe, triples *t)
{
    uint32_t count = ordo__bpe_count(bpe);
    for (uint32_t c = 0; c < count; c++) {
        size_t len;
        const unsigned char *p = ordo__bpe_token_bytes(bpe, c, &len);
        if (len < 2 || ordo__bpe_rank(bpe, p, len) != c) /* a hole, or a later duplicate */
            continue;
        for (size_t k = 1; k < len; k++) {
            uint32_t a = ordo__bpe_rank(bpe, p, k);
            if (a == UINT32_MAX)
                continue;
            uint32_t b = ordo__bpe_rank(bpe, p + k, len - k);
            if (b != UINT32_MAX && add(t, a, b, c) != 0)
                return -1;
        }
    }
    return 0;
}

/* Builds the merge table; see bpe_merge.h. */
ordo_status ordo__bpe_pairs_build(ordo__bpe_pairs *pairs, const ordo__bpe *bpe, ordo_error *err)
{
    if (ordo__bpe_count(bpe) >= ORDO__BPE_PAIR_LIMIT)
        return ordo__error(err, ORDO_INVALID,
                           "a rank file of %u ranks is more than the merge table holds",
                           ordo__bpe_count(bpe));
    triples t = {0};
    if (collect(bpe, &t) != 0) {
        free(t.items);
        return ordo__error(err, ORDO_NOMEM, "out of memory building the merge table");
    }
    unsigned bits = 4;
    while (((size_t)1 << bits) < t.count * 2) /* at most half full */
        bits++;
    pairs->mask = ((uint64_t)1 << bits) - 1;
    pairs->shift = 64 - bits;
    pairs->slots = calloc((size_t)1 << bits, sizeof *pairs->slots);
    pairs->filter = calloc(((size_t)1 << ORDO__BPE_PAIR_FILTER_BITS) / 64, sizeof *pairs->filter);
    if (!pairs->slots || !pairs->filter) {
        free(t.items);
        return ordo__error(err, ORDO_NOMEM, "out of memory building the merge table");
    }
    for (size_t i = 0; i < t.count; i++)
        insert(pairs, t.items[i].a, t.items[i].b, t.items[i].c);
    free(t.items);
    return ORDO_OK;
}

/* Frees the table's slots. */
void ordo__bpe_pairs_free(ordo__bpe_pairs *pairs)
{
    free(pairs->slots);
    free(pairs->filter);
    pairs->slots = NULL;
    pairs->filter = NULL;
}
