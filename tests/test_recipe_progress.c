/* Progress while a recipe is indexed (ordo_recipe_index's ordo_progress_fn):
 * within a shard, as its indexer reads it, not only once per shard. */
#include "corpus.h"
#include "fixtures.h"

typedef struct {
    uint64_t done[4096], total[4096];
    int calls;
} seen_progress;

static void note(uint64_t done, uint64_t total, void *context)
{
    seen_progress *s = context;
    if (s->calls < 4096) {
        s->done[s->calls] = done;
        s->total[s->calls] = total;
    }
    s->calls++;
}

/* One shard of 400 documents in chunks of 16 lines: the indexer reports
 * after each chunk, so a single large shard shows progress while it is
 * read; bytes only grow, up to the shard's size. */
TEST(recipe_index_reports_progress_within_a_shard)
{
    corpus_jsonl("data", "doc", 1, 400, 20, 300, 9);
    const char *path = test_path("recipe.json");
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fputs("{\"seed\": 1, \"seq_len\": 16, \"global_batch\": 4, \"lanes\": 4, \"chunk_records\": 16,"
          " \"tokenizer\": {\"kind\": \"bytes\"},"
          " \"sources\": [{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1}]}",
          f);
    ASSERT(fclose(f) == 0);
    ordo_recipe *recipe = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_load(path, &recipe, &err), &err);
    ordo_source_info source;
    ASSERT_OK(ordo_recipe_source(recipe, 0, &source, &err), &err);
    static seen_progress seen;
    ASSERT_OK(ordo_recipe_index(recipe, NULL, note, &seen, &err), &err);
    ASSERT(seen.calls >= 25); /* 400 / 16 chunks, and the shard's end */
    int partial = 0;
    for (int i = 0; i < seen.calls && i < 4096; i++) {
        ASSERT(seen.total[i] == source.bytes);
        ASSERT(seen.done[i] <= seen.total[i]);
        ASSERT(i == 0 || seen.done[i] >= seen.done[i - 1]);
        partial += seen.done[i] > 0 && seen.done[i] < seen.total[i];
    }
    ASSERT(partial >= 20);
    ASSERT(seen.done[seen.calls - 1] == source.bytes);
    ordo_recipe_free(recipe);
}
