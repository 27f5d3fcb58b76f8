/* BPE merges of one piece (internal). */
#ifndef ORDO_BPE_MERGE_H
#define ORDO_BPE_MERGE_H

#include "tokenizer.h"

/* The rank of a byte string, or UINT32_MAX when it is not a token. */
uint32_t ordo__bpe_rank(const ordo__bpe *bpe, const unsigned char *p, size_t n);

/* Appends the tokens of one piece (len >= 1): repeatedly merges the
 * adjacent pair whose concatenation has the lowest rank, leftmost first,
 * exactly as tiktoken does; long pieces use a heap so the work is
 * O(n log n), not quadratic. */
ordo_status ordo__bpe_merge(const ordo__bpe *bpe, const unsigned char *piece, size_t len,
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
