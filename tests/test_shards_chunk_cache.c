/* The chunk cache of an observing loader (shards.h, "Chunk cache"): a
 * chunk is loaded and checked once however many reads ask for it at once,
 * its bytes are those ordo__chunk_load gives, a chunk that changed is
 * refused every time and never kept, and past its budget a read gets its
 * own copy. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "corpus.h"
#include "fixtures.h"
#include "testing.h"

/* A .jsonl source of 600 documents in chunks of 8 lines (75 chunks),
 * indexed. */
static ordo_recipe *chunked(ordo_ledger **ledger)
{
    corpus_jsonl("data", "doc", 1, 600, 30, 90, 5);
    const char text[] =
        "{\"name\": \"cache\", \"seed\": 9, \"seq_len\": 32, \"global_batch\": 8, \"lanes\": 4,"
        " \"flush_every\": 2, \"chunk_records\": 8, \"tokenizer\": {\"kind\": \"bytes\"},"
        " \"sources\": [{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1}]}";
    test_write_file(test_path("cache.json"), text, sizeof text - 1);
    ordo_recipe *r = NULL;
    ordo_error err;
    *ledger = fixture_open("l.db");
    ASSERT_OK(ordo_recipe_load(test_path("cache.json"), &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, *ledger, NULL, NULL, &err), &err);
    ASSERT_EQ_INT(r->sources[0].shards[0].chunk_count, 75);
    return r;
}

/* The chunk's bytes as an uncached read gives them equal `data`. */
static void expect_bytes(const char *path, const ordo__shard *shard, uint32_t index,
                         const char *data, size_t len)
{
    char *want = NULL;
    size_t want_len = 0;
    ordo_error err;
    ASSERT_OK(
        ordo__chunk_load(path, shard->format, &shard->chunks[index], index, &want, &want_len, &err),
        &err);
    ASSERT_EQ_INT(len, want_len);
    ASSERT(memcmp(data, want, len) == 0);
    free(want);
}

typedef struct {
    ordo__chunk_cache *cache;
    const char *path;
    const ordo__shard *shard;
    const char *seen[75];
    int failed;
} reader;

/* Loads every chunk, from the last one down to the first. */
static void *read_all(void *context)
{
    reader *r = context;
    for (uint32_t i = 75; i-- > 0;) {
        char *data = NULL;
        size_t len = 0;
        int owned = 1;
        ordo_error err;
        if (ordo__chunk_cache_load(r->cache, r->path, r->shard, i, &data, &len, &owned, &err) !=
                ORDO_OK ||
            owned)
            r->failed = 1;
        r->seen[i] = data;
    }
    return NULL;
}

TEST(chunk_cache_loads_each_chunk_once_for_concurrent_reads)
{
    ordo_ledger *ledger = NULL;
    ordo_recipe *r = chunked(&ledger);
    const ordo__shard *shard = &r->sources[0].shards[0];
    char *path = ordo__shard_path(r, shard);
    ordo__chunk_cache *cache = ordo__chunk_cache_new((uint64_t)64 << 20);
    ASSERT(cache != NULL);
    uint64_t loads = atomic_load(&ordo__chunk_cache_loads);
    reader readers[4];
    pthread_t threads[4];
    for (int t = 0; t < 4; t++) {
        readers[t] = (reader){.cache = cache, .path = path, .shard = shard};
        ASSERT(pthread_create(&threads[t], NULL, read_all, &readers[t]) == 0);
    }
    for (int t = 0; t < 4; t++)
        pthread_join(threads[t], NULL);
    ASSERT_EQ_INT(atomic_load(&ordo__chunk_cache_loads) - loads, 75);
    for (uint32_t i = 0; i < 75; i++) {
        for (int t = 0; t < 4; t++) {
            ASSERT(!readers[t].failed);
            ASSERT(readers[t].seen[i] == readers[0].seen[i]); /* one copy, shared */
        }
        char *data = NULL;
        size_t len = 0;
        int owned = 1;
        ordo_error err;
        ASSERT_OK(ordo__chunk_cache_load(cache, path, shard, i, &data, &len, &owned, &err), &err);
        ASSERT(!owned && data == readers[0].seen[i]);
        expect_bytes(path, shard, i, data, len);
    }
    ASSERT_EQ_INT(atomic_load(&ordo__chunk_cache_loads) - loads, 75);
    ordo__chunk_cache_free(cache);
    free(path);
    ordo_recipe_free(r);
    ordo_ledger_close(ledger);
}

TEST(chunk_cache_refuses_a_changed_chunk_each_time_and_keeps_within_its_budget)
{
    ordo_ledger *ledger = NULL;
    ordo_recipe *r = chunked(&ledger);
    const ordo__shard *shard = &r->sources[0].shards[0];
    const ordo__chunk *first = &shard->chunks[0];
    char *path = ordo__shard_path(r, shard);
    /* a budget of the first chunk and a byte: the first is kept, the
     * second read gets its own copy, loaded again each time */
    ordo__chunk_cache *cache = ordo__chunk_cache_new(first->length + 1);
    char *data = NULL, *again = NULL;
    size_t len = 0;
    int owned = 1;
    ordo_error err;
    ASSERT_OK(ordo__chunk_cache_load(cache, path, shard, 0, &data, &len, &owned, &err), &err);
    ASSERT(!owned);
    uint64_t loads = atomic_load(&ordo__chunk_cache_loads);
    for (int i = 0; i < 2; i++) {
        ASSERT_OK(ordo__chunk_cache_load(cache, path, shard, 1, &again, &len, &owned, &err), &err);
        ASSERT(owned);
        expect_bytes(path, shard, 1, again, len);
        free(again);
    }
    ASSERT_EQ_INT(atomic_load(&ordo__chunk_cache_loads) - loads, 2);
    /* chunk 2 changed since it was indexed (same size): refused naming
     * shard and chunk, twice (not kept); once it is back it loads */
    size_t size = 0;
    char *original = test_read_file(path, &size);
    ASSERT(original != NULL);
    char *changed = malloc(size);
    memcpy(changed, original, size);
    const ordo__chunk *third = &shard->chunks[2];
    changed[third->offset + third->length - 3] ^= 1; /* inside the last record's text */
    test_write_file(path, changed, size);
    ordo__chunk_cache *fresh = ordo__chunk_cache_new((uint64_t)64 << 20);
    for (int i = 0; i < 2; i++) {
        ASSERT_EQ_INT(ordo__chunk_cache_load(fresh, path, shard, 2, &again, &len, &owned, &err),
                      ORDO_CONFLICT);
        ASSERT_CONTAINS(err.message, "doc-0.jsonl");
        ASSERT_CONTAINS(err.message, "changed since it was indexed: chunk 2 ");
    }
    test_write_file(path, original, size);
    ASSERT_OK(ordo__chunk_cache_load(fresh, path, shard, 2, &again, &len, &owned, &err), &err);
    ASSERT(!owned);
    expect_bytes(path, shard, 2, again, len);
    ordo__chunk_cache_free(fresh);
    ordo__chunk_cache_free(cache);
    free(changed);
    free(original);
    free(path);
    ordo_recipe_free(r);
    ordo_ledger_close(ledger);
}
