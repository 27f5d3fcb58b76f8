/* The per-thread piece cache: direct-mapped, 16,384 entries (1.5 MB), keyed by the
 * owner and the piece's bytes (compared whole, so a hash collision is a
 * miss, never a wrong answer). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "piece_cache.h"
#include "thread_state.h"

#define ENTRIES 16384

typedef struct {
    uint64_t owner; /* 0: empty */
    uint8_t length, count;
    unsigned char bytes[ORDO__CACHE_BYTES];
    uint32_t ids[ORDO__CACHE_IDS];
} entry;

struct ordo__piece_cache {
    entry entries[ENTRIES];
};

static atomic_uint_fast64_t next_owner = 1;

/* A new owner number; see piece_cache.h. */
uint64_t ordo__piece_cache_owner(void)
{
    return atomic_fetch_add(&next_owner, 1);
}

/* The thread's cache; see piece_cache.h. */
ordo__piece_cache *ordo__piece_cache_get(void)
{
    ordo__thread_state *state = ordo__thread_state_get();
    if (!state)
        return NULL;
    if (!state->cache)
        state->cache = calloc(1, sizeof *state->cache);
    return state->cache;
}

/* A hash of a piece, 8 bytes at a time (the last word holds the tail);
 * see piece_cache.h. */
uint64_t ordo__piece_cache_hash(const unsigned char *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull * (n + 1);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    uint64_t tail = 0;
    memcpy(&tail, p + i, n - i);
    h = (h ^ tail) * 0x94d049bb133111ebull;
    h ^= h >> 29;
    return h;
}

static size_t find_at(const ordo__piece_cache *cache, size_t slot, uint64_t owner,
                      const unsigned char *p, size_t n, uint32_t *ids)
{
    if (n > ORDO__CACHE_BYTES)
        return 0;
    const entry *e = &cache->entries[slot];
    if (e->owner != owner || e->length != n || memcmp(e->bytes, p, n) != 0)
        return 0;
    memcpy(ids, e->ids, e->count * sizeof *ids);
    return e->count;
}

static void put_at(ordo__piece_cache *cache, size_t slot, uint64_t owner, const unsigned char *p,
                   size_t n, const uint32_t *ids, size_t count)
{
    if (n > ORDO__CACHE_BYTES || count == 0 || count > ORDO__CACHE_IDS)
        return;
    entry *e = &cache->entries[slot];
    e->owner = owner;
    e->length = (uint8_t)n;
    e->count = (uint8_t)count;
    memcpy(e->bytes, p, n);
    memcpy(e->ids, ids, count * sizeof *ids);
}

/* The slot of a piece whose hash the caller has. */
static size_t slot_of_hash(uint64_t owner, uint64_t hash)
{
    return (size_t)(((hash ^ owner) * 0x9e3779b97f4a7c15ull) >> 50) & (ENTRIES - 1);
}

/* Looks a piece up by its hash; see piece_cache.h. */
size_t ordo__piece_cache_find_hashed(ordo__piece_cache *cache, uint64_t owner, uint64_t hash,
                                     const unsigned char *p, size_t n, uint32_t *ids)
{
    return find_at(cache, slot_of_hash(owner, hash), owner, p, n, ids);
}

/* Stores a piece by its hash; see piece_cache.h. */
void ordo__piece_cache_put_hashed(ordo__piece_cache *cache, uint64_t owner, uint64_t hash,
                                  const unsigned char *p, size_t n, const uint32_t *ids,
                                  size_t count)
{
    put_at(cache, slot_of_hash(owner, hash), owner, p, n, ids, count);
}

/* Starts loading the entry of a hash; see piece_cache.h. */
void ordo__piece_cache_prefetch_hashed(const ordo__piece_cache *cache, uint64_t owner,
                                       uint64_t hash)
{
#if defined(__GNUC__)
    __builtin_prefetch(&cache->entries[slot_of_hash(owner, hash)]);
#else
    (void)cache, (void)owner, (void)hash;
#endif
}
