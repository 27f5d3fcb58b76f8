/* How often a source repeats (ordo_recipe_passes): a small source of
 * weight 0.3 whose passes are reckoned by hand from the bytes written,
 * checked against the plan and against where the loader's lanes really
 * start their second pass. */
#include "corpus.h"
#include "fixtures.h"
#include "testing.h"

#define SMALL_DOCS 40
#define LANES 2
#define BATCH 10
#define SEQ_LEN 16

/* Writes small.jsonl (SMALL_DOCS documents of plain letters: with the
 * bytes tokenizer one token per byte) and the recipe; returns the letters
 * written, the tokens of one pass without end-of-text. */
static uint64_t write_small_recipe(void)
{
    FILE *out = fopen(test_path("small.jsonl"), "w");
    ASSERT(out != NULL);
    uint64_t letters = 0;
    for (int i = 0; i < SMALL_DOCS; i++) {
        int len = 100 + i * 37 % 57;
        fprintf(out, "{\"text\": \"");
        for (int j = 0; j < len; j++)
            fputc('a' + (i + j) % 26, out);
        fprintf(out, "\"}\n");
        letters += (uint64_t)len;
    }
    ASSERT(fclose(out) == 0);
    corpus_jsonl("big", "big", 2, 300, 50, 300, 7);
    corpus_recipe("r.json", LANES, BATCH, SEQ_LEN, 1, 0,
                  "[{\"name\": \"big\", \"paths\": [\"big/*.jsonl\"], \"weight\": 0.7},"
                  " {\"name\": \"small\", \"paths\": [\"small.jsonl\"], \"weight\": 0.3}]");
    return letters;
}

static ordo_recipe *indexed(void)
{
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_load(test_path("r.json"), &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, NULL, NULL, NULL, &err), &err);
    return r;
}

/* Weight 0.3 of 10 samples a step is 3 samples (48 tokens) a step; one
 * pass is the letters plus one end-of-text per document, so pass k+1
 * starts at the first step t with 48 t > k × tokens, and 1000 steps hold
 * 48000 / tokens passes: 9.3 here. */
TEST(passes_of_a_small_source_are_reckoned_from_its_bytes)
{
    uint64_t tokens = write_small_recipe() + SMALL_DOCS;
    ordo_recipe *r = indexed();
    ordo_source_plan plans[2];
    ordo_error err;
    ASSERT_OK(ordo_recipe_passes(r, 1000, plans, &err), &err);
    const ordo_source_plan *small = &plans[1];
    ASSERT_EQ_STR(small->name, "small");
    ASSERT_EQ_INT(small->documents, SMALL_DOCS);
    ASSERT_EQ_INT(small->tokens_per_pass, tokens);
    ASSERT(small->tokens_per_byte > 0.9 && small->tokens_per_byte < 1); /* letters of the line */
    ASSERT(small->samples >= 2999 && small->samples <= 3001);
    int64_t expected_passes = (int64_t)((3000 * SEQ_LEN + tokens - 1) / tokens);
    ASSERT_EQ_INT(expected_passes, 10); /* the 10th pass begins: 9.3 passes */
    ASSERT_EQ_INT(small->pass_count, expected_passes);
    double passes = 3000.0 * SEQ_LEN / (double)tokens;
    ASSERT(small->passes > passes - 0.01 && small->passes < passes + 0.01);
    ASSERT_EQ_INT(small->pass_start[0], 1);
    for (int64_t k = 1; k < expected_passes; k++) {
        int64_t step = (int64_t)(k * tokens / (3 * SEQ_LEN)) + 1;
        ASSERT(small->pass_start[k] >= step - 1 && small->pass_start[k] <= step + 1);
    }
    ASSERT_EQ_INT(small->last_pass_start, small->pass_start[expected_passes - 1]);
    ASSERT_EQ_INT(small->pass_start[expected_passes], 0);
    ASSERT(small->lane_bytes_min <= small->lane_bytes_max);
    ASSERT(small->lane_bytes_min + small->lane_bytes_max <= small->bytes);
    ASSERT(small->lane_bytes_min + small->lane_bytes_max + LANES >= small->bytes);
    ASSERT(small->lane_pass2_first <= small->pass_start[1] &&
           small->lane_pass2_last >= small->pass_start[1]);
    ASSERT(plans[0].samples + plans[1].samples == 1000 * BATCH);
    ordo_recipe_free(r);
}

/* The step at which each lane's packer of `source` first stands past its
 * first pass (its position beyond unit `units`), from the checkpoint after
 * every step (flush_every 1: a checkpoint after step t holds the positions
 * at the start of step t). */
static void real_pass2(const ordo_recipe *r, uint32_t source, int64_t steps, int64_t *first)
{
    ordo__unit_list lists[LANES];
    ordo_error err;
    ASSERT_OK(ordo__units_partition(r, source, 0, LANES, lists, &err), &err);
    ordo_loader_options options = {.world_size = 1, .read_workers = 1, .tokenize_workers = 1};
    ordo_loader *loader = NULL;
    ASSERT_OK(ordo_loader_open(r, &options, &loader, &err), &err);
    for (int l = 0; l < LANES; l++)
        first[l] = 0;
    ordo_batch batch;
    for (int64_t step = 1; step <= steps + 1; step++) {
        ASSERT_OK(ordo_loader_next(loader, &batch, &err), &err);
        unsigned char *state = NULL;
        size_t size = 0;
        ASSERT_OK(ordo_loader_checkpoint(loader, &state, &size, &err), &err);
        ordo__state s;
        ASSERT_OK(ordo__state_decode(state, size, &s, &err), &err);
        ordo_free(state);
        for (int l = 0; l < LANES; l++) {
            ordo__pos pos = s.lanes[l].positions[source];
            int past = pos.unit > lists[l].count ||
                       (pos.unit == lists[l].count && (pos.doc || pos.offset));
            if (past && !first[l])
                first[l] = step - 1; /* positions at the start of `step` */
        }
        ordo__state_free(&s);
    }
    ordo_loader_close(loader);
    for (int l = 0; l < LANES; l++)
        ordo__unit_list_free(&lists[l]);
}

/* The plan's second-pass step is where the loader's lanes start theirs:
 * each within 15% (the slot plan deals a source's samples to lanes by a
 * seeded permutation, so a lane's share wanders a little). A plan that
 * counted end-of-text twice, or the file's bytes, or samples per lane as
 * per step, would be off by far more. */
TEST(passes_start_where_the_lanes_really_start_them)
{
    write_small_recipe();
    ordo_recipe *r = indexed();
    ordo_source_plan plans[2];
    ordo_error err;
    ASSERT_OK(ordo_recipe_passes(r, 300, plans, &err), &err);
    int64_t planned = plans[1].pass_start[1], first[LANES];
    ASSERT(planned > 50);
    real_pass2(r, 1, planned * 3 / 2, first);
    for (int l = 0; l < LANES; l++) {
        ASSERT(first[l] > 0);
        int64_t off = first[l] > planned ? first[l] - planned : planned - first[l];
        if (off * 100 > planned * 15)
            test_fail(__FILE__, __LINE__, "lane %d starts pass 2 at step %lld, the plan says %lld",
                      l, (long long)first[l], (long long)planned);
    }
    ordo_recipe_free(r);
}

/* Passes follow the schedule: a small source off for the first 100 steps
 * and 0.3 from step 101 starts its first pass at step 101 and its second
 * when its 3 samples a step since then hold more than one pass. */
TEST(passes_follow_the_mixture_schedule)
{
    uint64_t tokens = write_small_recipe() + SMALL_DOCS;
    corpus_recipe("r.json", LANES, BATCH, SEQ_LEN, 1, 0,
                  "[{\"name\": \"big\", \"paths\": [\"big/*.jsonl\"]},"
                  " {\"name\": \"small\", \"paths\": [\"small.jsonl\"]}],"
                  " \"schedule\": [{\"step\": 1, \"weights\": {\"big\": 1}},"
                  " {\"step\": 101, \"weights\": {\"big\": 0.7, \"small\": 0.3}}]");
    ordo_recipe *r = indexed();
    ordo_source_plan plans[2];
    ordo_error err;
    ASSERT_OK(ordo_recipe_passes(r, 400, plans, &err), &err);
    const ordo_source_plan *small = &plans[1];
    ASSERT(small->samples >= 899 && small->samples <= 901);
    ASSERT_EQ_INT(small->pass_start[0], 101);
    int64_t step = 100 + (int64_t)(tokens / (3 * SEQ_LEN)) + 1;
    ASSERT(small->pass_start[1] >= step - 1 && small->pass_start[1] <= step + 1);
    ASSERT_EQ_INT(plans[0].pass_start[0], 1);
    ordo_recipe_free(r);
}

/* A horizon out of range and a recipe that is not indexed are refused,
 * naming the number. */
TEST(passes_refuse_a_bad_horizon_and_an_unindexed_recipe)
{
    write_small_recipe();
    ordo_recipe *r = NULL;
    ordo_error err;
    ordo_source_plan plans[2];
    ASSERT_OK(ordo_recipe_load(test_path("r.json"), &r, &err), &err);
    ASSERT_STATUS(ordo_recipe_passes(r, 10, plans, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "not indexed");
    ASSERT_OK(ordo_recipe_index(r, NULL, NULL, NULL, &err), &err);
    ASSERT_STATUS(ordo_recipe_passes(r, 0, plans, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "0 steps");
    ASSERT_STATUS(ordo_recipe_passes(r, ORDO_PASS_STEPS_MAX + 1, plans, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "100000001");
    ordo_recipe_free(r);
}

/* A recipe opened from the ledger alone plans the same passes as the one
 * indexed from its files, with the shards gone; one the ledger has not
 * indexed is ORDO_NOTFOUND saying so. */
TEST(passes_of_a_stored_recipe_need_no_shard)
{
    write_small_recipe();
    ordo_ledger *ledger = fixture_open("plan.db");
    ordo_recipe *r = NULL, *stored = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_load(test_path("r.json"), &r, &err), &err);
    char id[ORDO_DIGEST_HEX_SIZE];
    snprintf(id, sizeof id, "%s", ordo_recipe_id(r));
    ASSERT_OK(ordo_recipe_put(ledger, ordo_recipe_canonical(r), strlen(ordo_recipe_canonical(r)),
                              id, &err),
              &err);
    ASSERT_STATUS(ordo_recipe_open_stored(ledger, id, test_path(""), &stored, &err), ORDO_NOTFOUND,
                  &err);
    ASSERT_CONTAINS(err.message, "run ordo index");
    ASSERT_OK(ordo_recipe_index(r, ledger, NULL, NULL, &err), &err);
    ASSERT(remove(test_path("small.jsonl")) == 0);
    ASSERT_OK(ordo_recipe_open_stored(ledger, id, test_path(""), &stored, &err), &err);
    ordo_source_plan a[2], b[2];
    ASSERT_OK(ordo_recipe_passes(r, 1000, a, &err), &err);
    ASSERT_OK(ordo_recipe_passes(stored, 1000, b, &err), &err);
    for (int s = 0; s < 2; s++) {
        char *ja = ordo_source_plan_json(&a[s]), *jb = ordo_source_plan_json(&b[s]);
        ASSERT_EQ_STR(ja, jb);
        ordo_free(ja);
        ordo_free(jb);
    }
    ordo_recipe_free(stored);
    ordo_recipe_free(r);
    ordo_ledger_close(ledger);
}
