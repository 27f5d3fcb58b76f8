/* BPE merges of one piece (internal). */
#ifndef ORDO_BPE_MERGE_H
#define ORDO_BPE_MERGE_H

#include "tokenizer.h"

/* The rank of a byte string, or UINT32_MAX when it is not a token. */
uint32_t ordo__bpe_rank(const ordo__bpe *bpe, const unsigned char *p, size_t n);

typedef struct ordo__piece_cache ordo__piece_cache;

/* For a piece of 3 or more bytes: its hash (also the key of its piece
 * cache entry: ordo__piece_cache_*_hashed), with its filter word, its
 * first rank table slot and its piece cache entry (cache may be NULL)
 * starting to load. Its rank, then, from ordo__bpe_rank_of_hash. */
uint64_t ordo__bpe_rank_prefetch(const ordo__bpe *bpe, const unsigned char *p, size_t n,
                                 const ordo__piece_cache *cache);
uint32_t ordo__bpe_rank_of_hash(const ordo__bpe *bpe, const unsigned char *p, size_t n,
                                uint64_t hash);

/* How many ranks the rank file spans (holes included). */
uint32_t ordo__bpe_count(const ordo__bpe *bpe);

/* The bytes of rank r (owned by the tokenizer; *len 0 for a hole). */
const unsigned char *ordo__bpe_token_bytes(const ordo__bpe *bpe, uint32_t r, size_t *len);

/* The merge table (bpe_pairs.c): token pair (a, b) to the token of their
 * bytes put together. A slot is a << 44 | b << 24 | (c + 1); 0 is empty;
 * open addressing, at most half full. Owned by the tokenizer. */
#define ORDO__BPE_PAIR_LIMIT ((uint32_t)1 << 20)
#define ORDO__BPE_PAIR_FILTER_BITS 21
typedef struct {
    uint64_t *slots;
    uint64_t *filter; /* a bit per pair hash: most pairs that merge to nothing stop here */
    uint64_t mask;
    unsigned shift;
} ordo__bpe_pairs;

/* Fills *pairs from the rank file (its ranks must be below
 * ORDO__BPE_PAIR_LIMIT); the caller frees it with ordo__bpe_pairs_free. */
ordo_status ordo__bpe_pairs_build(ordo__bpe_pairs *pairs, const ordo__bpe *bpe, ordo_error *err);
void ordo__bpe_pairs_free(ordo__bpe_pairs *pairs);

/* The tokenizer's merge table, its ranks of single bytes (256) and of
 * two-byte strings (65536, by first byte << 8 | second). */
const ordo__bpe_pairs *ordo__bpe_pairs_of(const ordo__bpe *bpe);
const uint32_t *ordo__bpe_byte_ranks(const ordo__bpe *bpe);
const uint32_t *ordo__bpe_pair_ranks(const ordo__bpe *bpe);

static inline uint64_t ordo__bpe_pair_key(uint32_t a, uint32_t b)
{
    return (uint64_t)a << 44 | (uint64_t)b << 24;
}

static inline uint64_t ordo__bpe_pair_hash(uint64_t key)
{
    return (key >> 24) * 0x9e3779b97f4a7c15ull;
}

static inline uint64_t ordo__bpe_pair_slot(const ordo__bpe_pairs *pairs, uint64_t key)
{
    return ordo__bpe_pair_hash(key) >> pairs->shift;
}

static inline uint64_t ordo__bpe_pair_bit(uint64_t key)
{
    return (ordo__bpe_pair_hash(key) >> 20) & (((uint64_t)1 << ORDO__BPE_PAIR_FILTER_BITS) - 1);
}

/* Starts loading the table slot ordo__bpe_pair(pairs, a, b) reads first
 * (the filter is small enough to stay in cache; prefetching it too was
 * slower). */
static inline void ordo__bpe_pair_prefetch(const ordo__bpe_pairs *pairs, uint32_t a, uint32_t b)
{
    __builtin_prefetch(&pairs->slots[ordo__bpe_pair_slot(pairs, ordo__bpe_pair_key(a, b))]);
}

/* The token of a's bytes then b's, or UINT32_MAX when there is none. */
static inline uint32_t ordo__bpe_pair(const ordo__bpe_pairs *pairs, uint32_t a, uint32_t b)
{
    uint64_t key = ordo__bpe_pair_key(a, b), bit = ordo__bpe_pair_bit(key);
    if (!(pairs->filter[bit >> 6] >> (bit & 63) & 1))
        return UINT32_MAX;
    for (uint64_t i = ordo__bpe_pair_slot(pairs, key);; i = (i + 1) & pairs->mask) {
        uint64_t slot = pairs->slots[i];
        if (!slot)
            return UINT32_MAX;
        if ((slot & ~(uint64_t)0xffffff) == key)
            return (uint32_t)(slot & 0xffffff) - 1;
    }
}

/* Appends the tokens of one piece (len >= 1): repeatedly merges the
 * adjacent pair whose concatenation has the lowest rank, leftmost first,
 * exactly as tiktoken does; long pieces use a heap so the work is
 * O(n log n), not quadratic. */
ordo_status ordo__bpe_merge(const ordo__bpe *bpe, const unsigned char *piece, size_t len,
                            ordo__tokens *out, ordo_error *err);

/* ordo__bpe_merge of a piece known not to be a token itself (len >= 2). */
ordo_status ordo__bpe_merge_parts(const ordo__bpe *bpe, const unsigned char *piece, size_t len,
                                  ordo__tokens *out, ordo_error *err);

/* The tokenizer's owner number in the per-thread piece caches
 * (piece_cache.h). */
uint64_t ordo__bpe_cache_owner(const ordo__bpe *bpe);

/* Encodes with the compiled split pattern `pattern` (a pcre2_code), or
 * with the encoding's scanner when pattern is NULL; takes no piece once
 * `out` holds `stop` ids (SIZE_MAX: the whole text), so what it appends is
 * always a prefix of the whole text's ids, piece by piece. *complete
 * (when not NULL): 1 when every piece was taken. */
ordo_status ordo__bpe_encode_with(const ordo__bpe *bpe, const void *pattern, const char *text,
                                  size_t len, size_t stop, ordo__tokens *out, int *complete,
                                  ordo_error *err);

/* The end offsets of the pieces of valid UTF-8 text (tests compare the
 * scanners with PCRE2 this way), split as ordo__bpe_encode_with would. */
ordo_status ordo__bpe_split_with(const ordo__bpe *bpe, const void *pattern, const char *text,
                                 size_t len, ordo__tokens *ends, ordo_error *err);

#endif
