/*
 * record_run: a small end-to-end use of libordo's ledger API.
 *
 *   record_run LEDGER
 *
 * Records a recipe and two runs of it with synthetic microbatches: "baseline"
 * at world size 4 for 120 steps, and "elastic" that runs at world size 4 to
 * step 60, checkpoints, and resumes at world size 2 (a new segment with a
 * new lane plan). Both feed the same lanes, so every batch digest matches.
 * Running it again changes nothing: every write is idempotent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ordo.h"

#define LANES 8
#define SEQ_LEN 16
#define MICROBATCH 2
#define STEPS 120

static const char recipe[] =
    "{\"name\": \"demo-synthetic\", \"seed\": 1234, \"seq_len\": 16, \"global_batch\": 16,"
    " \"lanes\": 8, \"flush_every\": 4, \"shuffle\": false,"
    " \"tokenizer\": {\"kind\": \"bytes\"}, \"sources\": []}";

/* A lane's microbatch for a step: token ids derived from (lane, step) only,
 * then its lane digest (uint32 little-endian ids, row after row). */
static void lane_digest(int lane, int64_t step, unsigned char out[ORDO_DIGEST_SIZE])
{
    unsigned char bytes[MICROBATCH * SEQ_LEN * 4];
    for (int i = 0; i < MICROBATCH * SEQ_LEN; i++) {
        uint32_t token = (uint32_t)((step * 7919 + lane * 104729 + i * 31) % 50257);
        for (int b = 0; b < 4; b++)
            bytes[4 * i + b] = (unsigned char)(token >> (8 * b));
    }
    ordo_sha256(bytes, sizeof bytes, out);
}

static int check(ordo_status status, const ordo_error *err)
{
    if (status != ORDO_OK) {
        fprintf(stderr, "record_run: %s\n", err->message);
        exit(1);
    }
    return 0;
}

static void add_segment(ordo_ledger *ledger, int64_t run, int world, int64_t start,
                        int64_t resumed_from)
{
    int ranks[LANES];
    for (int lane = 0; lane < LANES; lane++)
        ranks[lane] = lane % world; /* rank r owns lanes r, r+W, r+2W, ... */
    ordo_segment_spec spec = {.world_size = world,
                              .start_step = start,
                              .lanes = LANES,
                              .lane_ranks = ranks,
                              .lane_binding = ORDO_BINDING_LOGICAL,
                              .workers = "{\"read\":1,\"tokenize\":2}",
                              .resumed_from = resumed_from};
    ordo_segment_list_free(NULL); /* every free accepts NULL */
    ordo_segment_list *segments = NULL;
    ordo_error err;
    check(ordo_segments_list(ledger, run, &segments, &err), &err);
    int present = 0;
    for (size_t i = 0; i < segments->count; i++)
        present |= segments->items[i].start_step == start && segments->items[i].world_size == world;
    ordo_segment_list_free(segments);
    if (!present) {
        int64_t id;
        check(ordo_segment_add(ledger, run, &spec, &id, &err), &err);
    }
}

static void record_steps(ordo_ledger *ledger, int64_t run, int64_t from, int64_t to)
{
    size_t count = (size_t)(to - from + 1);
    ordo_step *steps = calloc(count, sizeof *steps);
    unsigned char *lanes = malloc(count * LANES * ORDO_DIGEST_SIZE);
    if (!steps || !lanes)
        exit(1);
    for (size_t i = 0; i < count; i++) {
        int64_t step = from + (int64_t)i;
        unsigned char *mine = lanes + i * LANES * ORDO_DIGEST_SIZE;
        for (int lane = 0; lane < LANES; lane++)
            lane_digest(lane, step, mine + lane * ORDO_DIGEST_SIZE);
        ordo_step_init(&steps[i], step);
        ordo_batch_digest(mine, LANES, steps[i].batch_digest);
        steps[i].lane_digests = mine;
        steps[i].lane_count = LANES;
        steps[i].tokens = LANES * MICROBATCH * SEQ_LEN;
        steps[i].has_loss = 1;
        steps[i].loss = 4.0 / (1.0 + 0.02 * (double)step);
    }
    ordo_record_result result;
    ordo_error err;
    ordo_status status = ordo_steps_record(ledger, run, steps, count, &result, &err);
    if (status != ORDO_CONFLICT) /* conflicts are counted below, not fatal */
        check(status, &err);
    printf("  steps %lld-%lld: %zu new, %zu already recorded, %zu conflicts\n", (long long)from,
           (long long)to, result.inserted, result.unchanged, result.conflicts);
    free(steps);
    free(lanes);
}

static void checkpoint(ordo_ledger *ledger, int64_t run, int64_t step)
{
    /* Per lane: flush epoch and samples delivered since the flush (4 bytes). */
    unsigned char state[LANES * 4];
    for (int lane = 0; lane < LANES; lane++) {
        state[4 * lane] = (unsigned char)(step / 4);
        state[4 * lane + 1] = 0;
        state[4 * lane + 2] = (unsigned char)(step % 4 * MICROBATCH);
        state[4 * lane + 3] = 0;
    }
    ordo_error err;
    check(ordo_checkpoint_record(ledger, run, step, LANES, state, sizeof state, &err), &err);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: record_run LEDGER\n");
        return 2;
    }
    ordo_ledger *ledger = NULL;
    ordo_error err;
    check(ordo_ledger_open(argv[1], 0, &ledger, &err), &err);
    char recipe_id[ORDO_DIGEST_HEX_SIZE];
    check(ordo_recipe_put(ledger, recipe, strlen(recipe), recipe_id, &err), &err);
    printf("recipe %s\n", recipe_id);

    int64_t baseline, elastic;
    ordo_run_spec spec = {
        .name = "baseline", .recipe_id = recipe_id, .group_tag = "demo", .lanes = LANES};
    check(ordo_run_create(ledger, &spec, &baseline, &err), &err);
    printf("run baseline (world size 4)\n");
    add_segment(ledger, baseline, 4, 1, 0);
    record_steps(ledger, baseline, 1, STEPS);
    for (int64_t step = 30; step <= STEPS; step += 30)
        checkpoint(ledger, baseline, step);

    spec.name = "elastic";
    spec.baseline = "baseline";
    check(ordo_run_create(ledger, &spec, &elastic, &err), &err);
    printf("run elastic (world size 4, resumed at 2 after step 60)\n");
    add_segment(ledger, elastic, 4, 1, 0);
    record_steps(ledger, elastic, 1, 60);
    checkpoint(ledger, elastic, 60);
    add_segment(ledger, elastic, 2, 61, 60);
    record_steps(ledger, elastic, 61, STEPS);
    checkpoint(ledger, elastic, STEPS);
    ordo_ledger_close(ledger);
    return 0;
}
