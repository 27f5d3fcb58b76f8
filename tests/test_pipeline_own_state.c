/* What the Python face needs from the library: a rank resumed from its own
 * state at the same world size. */
#include <stdlib.h>
#include <string.h>

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

/* Lane digests of `steps` batches of rank `rank` of `world`, from `state`. */
static void play(const ordo_recipe *r, const char *binding, int rank, int world,
                 const unsigned char *state, size_t size, int steps, unsigned char *digests,
                 unsigned char **after, size_t *after_size)
{
    ordo_loader_options o = {.rank = rank,
                             .world_size = world,
                             .read_workers = 1,
                             .tokenize_workers = 1,
                             .resume = state,
                             .resume_size = size};
    ordo_loader *l = NULL;
    ordo_batch b;
    ordo_error err;
    ASSERT_OK(ordo_lane_binding_parse(binding, &o.lane_binding, &err), &err);
    ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
    for (int s = 0; s < steps; s++) {
        ASSERT_OK(ordo_loader_next(l, &b, &err), &err);
        if (digests)
            memcpy(digests + (size_t)s * b.lane_count * 32, b.lane_digests,
                   (size_t)b.lane_count * 32);
    }
    if (after)
        ASSERT_OK(ordo_loader_checkpoint(l, after, after_size, &err), &err);
    ordo_loader_close(l);
}

TEST(loader_resumes_a_ranks_own_state_at_the_same_world_size)
{
    corpus_jsonl("data", "doc", 3, 60, 5, 200, 31);
    const char *path = corpus_recipe("r.json", 8, 16, 16, 2, 4,
                                     "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], "
                                     "\"weight\": 1}]");
    ordo_recipe *r = load(path, NULL);
    const char *bindings[] = {"logical", "rank"};
    const int worlds[] = {2, 4, 8};
    for (int k = 0; k < 2; k++)
        for (int w = 0; w < 3; w++)
            for (int rank = 0; rank < worlds[w]; rank++) {
                unsigned char *state = NULL, whole[8 * 8 * 32], resumed[5 * 8 * 32];
                size_t size = 0;
                play(r, bindings[k], rank, worlds[w], NULL, 0, 3, NULL, &state, &size);
                play(r, bindings[k], rank, worlds[w], NULL, 0, 8, whole, NULL, NULL);
                play(r, bindings[k], rank, worlds[w], state, size, 5, resumed, NULL, NULL);
                int lanes = k == 0 ? 8 / worlds[w] : 1;
                ASSERT(memcmp(whole + 3 * lanes * 32, resumed, (size_t)5 * lanes * 32) == 0);
                ordo_free(state);
            }
    /* another rank's state lacks this rank's lanes: refused, naming the
     * lane and the way out */
    unsigned char *state = NULL;
    size_t size = 0;
    play(r, "logical", 0, 2, NULL, 0, 1, NULL, &state, &size);
    ordo_loader_options o = {.rank = 1,
                             .world_size = 2,
                             .read_workers = 1,
                             .tokenize_workers = 1,
                             .resume = state,
                             .resume_size = size};
    ordo_loader *l = NULL;
    ordo_error err;
    ASSERT_STATUS(ordo_loader_open(r, &o, &l, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "covers 4 of 8 lanes, not lane 4 that rank 1 owns");
    ASSERT_CONTAINS(err.message, "ordo_checkpoint_merge");
    ordo_free(state);
    ordo_recipe_free(r);
}
