/* A recipe's index read from a ledger instead of the shards: how many
 * shards it read. */
#include "corpus.h"
#include "fixtures.h"

static ordo_recipe *load(const char *path, ordo_ledger *ledger)
{
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_load(path, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, ledger, NULL, NULL, &err), &err);
    return r;
}

TEST(recipe_index_counts_the_shards_it_read)
{
    corpus_jsonl("data", "doc", 3, 40, 5, 200, 32);
    const char *path = corpus_recipe("r.json", 4, 8, 16, 2, 0,
                                     "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], "
                                     "\"weight\": 1}]");
    ordo_ledger *ledger = fixture_open("index.db");
    ordo_recipe *r = load(path, ledger);
    ASSERT_EQ_INT(ordo_recipe_indexed_shards(r), 3);
    ordo_recipe_free(r);
    r = load(path, ledger);
    ASSERT_EQ_INT(ordo_recipe_indexed_shards(r), 0);
    ordo_recipe_free(r);
    r = load(path, NULL);
    ASSERT_EQ_INT(ordo_recipe_indexed_shards(r), 3);
    ordo_recipe_free(r);
    ordo_ledger_close(ledger);
}
