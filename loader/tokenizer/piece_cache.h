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

/* The calling thread's cache, made on first use and freed when the thread
 * ends; NULL when memory runs out (callers then merge as usual). */
ordo__piece_cache *ordo__piece_cache_get(void);

/* The ids cached for piece p[0..n) of `owner`, copied to ids (room for
 * ORDO__CACHE_IDS): their count, or 0 when not cached. */
size_t ordo__piece_cache_find(ordo__piece_cache *cache, uint64_t owner, const unsigned char *p,
                              size_t n, uint32_t *ids);

/* The same keyed by a hash of the piece the caller has already (any
 * good 64-bit hash of its bytes; the same hash for find and put). */
size_t ordo__piece_cache_find_hashed(ordo__piece_cache *cache, uint64_t owner, uint64_t hash,
                                     const unsigned char *p, size_t n, uint32_t *ids);
void ordo__piece_cache_put_hashed(ordo__piece_cache *cache, uint64_t owner, uint64_t hash,
                                  const unsigned char *p, size_t n, const uint32_t *ids,
                                  size_t count);
void ordo__piece_cache_prefetch_hashed(const ordo__piece_cache *cache, uint64_t owner,
                                       uint64_t hash);

/* Starts loading the entry of piece p[0..n), to be looked up soon. */
void ordo__piece_cache_prefetch(const ordo__piece_cache *cache, uint64_t owner,
                                const unsigned char *p, size_t n);

/* Remembers the ids of a piece (ignored when the piece or its ids are too
 * long for an entry). */
void ordo__piece_cache_put(ordo__piece_cache *cache, uint64_t owner, const unsigned char *p,
                           size_t n, const uint32_t *ids, size_t count);

#endif
