/* A per-thread cache of merged pieces (internal): a piece's bytes to the
 * ids the merge gave them, for one tokenizer (its owner number). A hit
 * returns exactly what the merge would: the cache only skips work, so
 * output never depends on it. Short pieces only. */
#ifndef ORDO_PIECE_CACHE_H
#define ORDO_PIECE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define ORDO__CACHE_BYTES 30 /* longest piece kept */
#define ORDO__CACHE_IDS 14   /* most ids kept for one piece */

typedef struct ordo__piece_cache ordo__piece_cache;

/* A fresh owner number for a tokenizer being loaded (never 0, never
 * reused in this process), so a cache never serves another tokenizer. */
uint64_t ordo__piece_cache_owner(void);

/* The calling thread's cache (thread_state.h), made on first use and
 * freed when the thread ends; NULL when memory runs out (callers then
 * merge as usual). */
ordo__piece_cache *ordo__piece_cache_get(void);

/* A good 64-bit hash of piece p[0..n), for the calls below when the
 * caller has none of its own. */
uint64_t ordo__piece_cache_hash(const unsigned char *p, size_t n);

/* The ids cached for piece p[0..n) of `owner`, copied to ids (room for
 * ORDO__CACHE_IDS): their count, or 0 when not cached. Keyed by a hash
 * of the piece (any good 64-bit hash of its bytes, the same one for
 * find, put and prefetch; the bytes are compared, so a collision is only
 * a miss). put ignores a piece or ids too long for an entry. */
size_t ordo__piece_cache_find_hashed(ordo__piece_cache *cache, uint64_t owner, uint64_t hash,
                                     const unsigned char *p, size_t n, uint32_t *ids);
void ordo__piece_cache_put_hashed(ordo__piece_cache *cache, uint64_t owner, uint64_t hash,
                                  const unsigned char *p, size_t n, const uint32_t *ids,
                                  size_t count);
void ordo__piece_cache_prefetch_hashed(const ordo__piece_cache *cache, uint64_t owner,
                                       uint64_t hash);

#endif
