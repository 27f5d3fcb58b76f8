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

/* Every (a, b, c) of the rank file, three ids each in *t: each split of
 * each token c into two tokens (c the first rank of its bytes). */
static ordo_status collect(const ordo__bpe *bpe, ordo__tokens *t, ordo_error *err)
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
            if (b == UINT32_MAX)
                continue;
            ordo_status status = ordo__tokens_reserve(t, 3, err);
            if (status != ORDO_OK)
                return status;
            t->ids[t->count++] = a, t->ids[t->count++] = b, t->ids[t->count++] = c;
        }
    }
    return ORDO_OK;
}

/* Builds the merge table; see bpe_merge.h. */
ordo_status ordo__bpe_pairs_build(ordo__bpe_pairs *pairs, const ordo__bpe *bpe, ordo_error *err)
{
    if (ordo__bpe_count(bpe) >= ORDO__BPE_PAIR_LIMIT)
        return ordo__error(err, ORDO_INVALID,
                           "a rank file of %u ranks is more than the merge table holds",
                           ordo__bpe_count(bpe));
    ordo__tokens t = {0};
    ordo_status status = collect(bpe, &t, err);
    if (status != ORDO_OK) {
        free(t.ids);
        return status;
    }
    unsigned bits = 4;
    while (((size_t)1 << bits) < t.count / 3 * 2) /* at most half full */
        bits++;
    pairs->mask = ((uint64_t)1 << bits) - 1;
    pairs->shift = 64 - bits;
    pairs->slots = calloc((size_t)1 << bits, sizeof *pairs->slots);
    pairs->filter = calloc(((size_t)1 << ORDO__BPE_PAIR_FILTER_BITS) / 64, sizeof *pairs->filter);
    if (!pairs->slots || !pairs->filter) {
        free(t.ids);
        return ordo__error(err, ORDO_NOMEM, "out of memory building the merge table");
    }
    for (size_t i = 0; i + 2 < t.count; i += 3)
        insert(pairs, t.ids[i], t.ids[i + 1], t.ids[i + 2]);
    free(t.ids);
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
