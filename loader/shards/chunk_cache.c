/* Loaded chunks kept for the reads of one loader (shards.h, "Chunk
 * cache"): a chunk is read, checked against its digest and inflated once,
 * then its bytes are shared by every read of it until the cache is freed.
 * The bytes a read sees are the same cached or not. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "shards.h"

#define BUCKETS 1024

typedef struct entry {
    const ordo__shard *shard;
    uint32_t index;
    int loading; /* a read is loading it: others wait for it */
    char *data;
    size_t len;
    struct entry *next;
} entry;

struct ordo__chunk_cache {
    pthread_mutex_t mutex;
    pthread_cond_t loaded;
    uint64_t budget, used;
    entry *buckets[BUCKETS];
};

/* A new empty cache holding at most `budget` bytes; NULL: out of memory. */
ordo__chunk_cache *ordo__chunk_cache_new(uint64_t budget)
{
    ordo__chunk_cache *cache = calloc(1, sizeof *cache);
    if (!cache)
        return NULL;
    pthread_mutex_init(&cache->mutex, NULL);
    pthread_cond_init(&cache->loaded, NULL);
    cache->budget = budget;
    return cache;
}

/* Frees the cache and every chunk it holds (NULL: nothing). */
void ordo__chunk_cache_free(ordo__chunk_cache *cache)
{
    if (!cache)
        return;
    for (size_t b = 0; b < BUCKETS; b++)
        for (entry *e = cache->buckets[b], *next; e; e = next) {
            next = e->next;
            free(e->data);
            free(e);
        }
    pthread_cond_destroy(&cache->loaded);
    pthread_mutex_destroy(&cache->mutex);
    free(cache);
}

static size_t bucket_of(const ordo__shard *shard, uint32_t index)
{
    uint64_t h = ((uint64_t)(uintptr_t)shard >> 4) * 0x9E3779B97F4A7C15ull ^ index;
    h *= 0xBF58476D1CE4E5B9ull;
    return (size_t)(h >> 54) % BUCKETS;
}

static entry **find(ordo__chunk_cache *cache, size_t bucket, const ordo__shard *shard,
                    uint32_t index)
{
    entry **at = &cache->buckets[bucket];
    while (*at && ((*at)->shard != shard || (*at)->index != index))
        at = &(*at)->next;
    return at;
}

/* What a chunk's entry counts against the budget: its larger length. */
static uint64_t charge(const ordo__chunk *chunk)
{
    return chunk->raw_length > chunk->length ? chunk->raw_length : chunk->length;
}

/* Under the lock: the held entry (waiting while another read loads it),
 * or a new one marked loading that the caller loads (*mine set), or NULL
 * when the budget is spent (the caller loads its own copy). */
static entry *claim(ordo__chunk_cache *cache, size_t bucket, const ordo__shard *shard,
                    uint32_t index, int *mine)
{
    *mine = 0;
    for (;;) {
        entry *e = *find(cache, bucket, shard, index);
        if (!e)
            break;
        if (!e->loading)
            return e;
        pthread_cond_wait(&cache->loaded, &cache->mutex);
    }
    uint64_t size = charge(&shard->chunks[index]);
    entry *e = cache->used + size <= cache->budget ? calloc(1, sizeof *e) : NULL;
    if (!e)
        return NULL;
    *e = (entry){shard, index, 1, NULL, 0, cache->buckets[bucket]};
    cache->buckets[bucket] = e;
    cache->used += size;
    *mine = 1;
    return e;
}

_Atomic uint64_t ordo__chunk_cache_loads;

/* Chunk `index` of `shard` loaded as ordo__chunk_load loads it, from the
 * cache when it holds it; see shards.h. */
ordo_status ordo__chunk_cache_load(ordo__chunk_cache *cache, const char *path,
                                   const ordo__shard *shard, uint32_t index, char **data,
                                   size_t *len, int *owned, ordo_error *err)
{
    size_t bucket = bucket_of(shard, index);
    int mine = 0;
    entry *e = NULL;
    if (cache) { /* NULL: loaded as ordo__chunk_load loads it, the caller's */
        pthread_mutex_lock(&cache->mutex);
        e = claim(cache, bucket, shard, index, &mine);
        pthread_mutex_unlock(&cache->mutex);
    }
    *owned = e == NULL;
    if (e && !mine) {
        *data = e->data;
        *len = e->len;
        return ORDO_OK;
    }
    atomic_fetch_add(&ordo__chunk_cache_loads, 1);
    ordo_status status =
        ordo__chunk_load(path, shard->format, &shard->chunks[index], index, data, len, err);
    if (!e)
        return status;
    pthread_mutex_lock(&cache->mutex);
    if (status == ORDO_OK) {
        e->data = *data;
        e->len = *len;
        e->loading = 0;
    } else { /* not held: a waiting read loads it again (and reports the error) */
        *find(cache, bucket, shard, index) = e->next;
        cache->used -= charge(&shard->chunks[index]);
        free(e);
    }
    pthread_cond_broadcast(&cache->loaded);
    pthread_mutex_unlock(&cache->mutex);
    return status;
}
