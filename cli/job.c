/* The job simulator: plays every rank's loader in lockstep and records each
 * step's lane digests and batch digest, and the checkpoints. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "progress.h"

#define RECORD_BATCH 256

typedef struct {
    job *j;
    ordo_loader **loaders;
    int lanes; /* lanes of the whole job */
    int source_count;
    ordo_step *steps;       /* pending records */
    unsigned char *digests; /* RECORD_BATCH × lanes × 32 */
    int64_t *sources;       /* RECORD_BATCH × source_count */
    size_t pending;
    int64_t checkpoint_bytes;
    int flush_every;             /* steps per flush epoch */
    unsigned char **lane_states; /* RECORD_BATCH: the pending steps' epoch lane states */
    progress bar;                /* steps done, on stderr */
    uint64_t tokens;             /* delivered since the first step played */
} player;

int job_parse_workers(const char *text, int *read_workers, int *tokenize_workers)
{
    char buffer[128];
    if (strlen(text) >= sizeof buffer)
        return -1;
    strcpy(buffer, text);
    for (char *part = strtok(buffer, ","); part; part = strtok(NULL, ",")) {
        char *eq = strchr(part, '=');
        char *end = NULL;
        if (!eq)
            return -1;
        *eq = '\0';
        long n = strtol(eq + 1, &end, 10);
        if (!*(eq + 1) || *end || n < 1 || n > 256)
            return -1;
        if (strcmp(part, "read") == 0)
            *read_workers = (int)n;
        else if (strcmp(part, "tokenize") == 0)
            *tokenize_workers = (int)n;
        else
            return -1;
    }
    return 0;
}

static int flush_records(const char *command, player *p)
{
    if (p->pending == 0)
        return EXIT_OK;
    ordo_record_result result;
    ordo_error err;
    ordo_status status =
        ordo_steps_record(p->j->ledger, p->j->run_id, p->steps, p->pending, &result, &err);
    if (status != ORDO_OK && status != ORDO_CONFLICT)
        return progress_break(&p->bar), cli_fail(command, &err);
    if (result.conflicts || result.diverged)
        progress_break(&p->bar);
    if (result.conflicts)
        fprintf(stderr,
                "ordo %s: %zu steps differ from what run '%s' recorded before "
                "(first: step %lld); kept as conflicts\n",
                command, result.conflicts, p->j->run_name, (long long)result.first_conflict_step);
    if (result.diverged) /* the library recorded each as a divergence event */
        fprintf(stderr,
                "ordo %s: %zu steps of run '%s' differ from its baseline (first: step "
                "%lld); kept as divergence events\n",
                command, result.diverged, p->j->run_name, (long long)result.divergences[0].step);
    for (size_t i = 0; i < p->pending; i++) {
        ordo_free(p->lane_states[i]);
        p->lane_states[i] = NULL;
    }
    p->pending = 0;
    return EXIT_OK;
}

/* Every rank's checkpoint after the last step, joined: *merged is the
 * caller's (ordo_free). */
static ordo_status merged_state(player *p, unsigned char **merged, size_t *size, ordo_error *err)
{
    int world = p->j->world_size;
    unsigned char **states = calloc((size_t)world, sizeof *states);
    size_t *sizes = calloc((size_t)world, sizeof *sizes);
    ordo_status status = states && sizes ? ORDO_OK : ORDO_NOMEM;
    if (status != ORDO_OK) {
        err->status = status;
        snprintf(err->message, sizeof err->message, "out of memory taking a checkpoint");
    }
    for (int r = 0; status == ORDO_OK && r < world; r++)
        status = ordo_loader_checkpoint(p->loaders[r], &states[r], &sizes[r], err);
    *merged = NULL;
    *size = 0;
    if (status == ORDO_OK)
        status = ordo_checkpoint_merge((const unsigned char *const *)states, sizes, world, merged,
                                       size, err);
    for (int r = 0; states && r < world; r++)
        ordo_free(states[r]);
    free(states);
    free(sizes);
    return status;
}

/* The first step played in each flush epoch after the first carries every
 * lane's state at the epoch's start (design §4): ordo batch then
 * regenerates any step with at most one epoch of replay. */
static int keep_lane_state(const char *command, player *p, int64_t first)
{
    ordo_step *s = &p->steps[p->pending - 1];
    int64_t flush = p->flush_every;
    if (p->j->rank_bound || s->step <= flush || (s->step != first && (s->step - 1) % flush != 0))
        return EXIT_OK;
    ordo_error err = {0};
    unsigned char *state = NULL;
    size_t size = 0;
    if (merged_state(p, &state, &size, &err) != ORDO_OK)
        return progress_break(&p->bar), cli_fail(command, &err);
    p->lane_states[p->pending - 1] = state;
    s->lane_state = state;
    s->lane_state_size = size;
    return EXIT_OK;
}

static int checkpoint(const char *command, player *p, int64_t step)
{
    int rc = flush_records(command, p);
    ordo_error err = {0};
    unsigned char *merged = NULL;
    size_t size = 0;
    ordo_status status = rc == EXIT_OK ? merged_state(p, &merged, &size, &err) : ORDO_OK;
    if (rc == EXIT_OK && status == ORDO_OK)
        status =
            ordo_checkpoint_record(p->j->ledger, p->j->run_id, step, p->lanes, merged, size, &err);
    ordo_free(merged);
    p->checkpoint_bytes = (int64_t)size;
    if (rc == EXIT_OK && status != ORDO_OK) {
        progress_break(&p->bar);
        rc = err.message[0] ? cli_fail(command, &err) : EXIT_FAILURE_;
    }
    return rc;
}

/* A loader failed at `step`: the ledger keeps what it must of why (a
 * changed chunk becomes an event of the run), then the job stops. */
static int stopped(const char *command, const job *j, int64_t step, const ordo_error *why)
{
    ordo_error err;
    int recorded = 0;
    if (j->ledger && j->run_id &&
        ordo_event_record_stop(j->ledger, j->run_id, step, why, &recorded, &err) != ORDO_OK)
        fprintf(stderr, "ordo %s: recording why it stopped failed: %s\n", command, err.message);
    return cli_fail(command, why);
}

/* One step: every rank's batch, lane digests placed by lane number. */
static int play_step(const char *command, player *p, int64_t number)
{
    ordo_step *s = &p->steps[p->pending];
    unsigned char *digests = p->digests + p->pending * (size_t)p->lanes * ORDO_DIGEST_SIZE;
    int64_t *sources = p->sources + p->pending * (size_t)p->source_count;
    int64_t step = 0, tokens = 0, pad = 0;
    memset(sources, 0, (size_t)p->source_count * sizeof *sources);
    for (int r = 0; r < p->j->world_size; r++) {
        ordo_batch b;
        ordo_error err;
        if (ordo_loader_next(p->loaders[r], &b, &err) != ORDO_OK)
            return progress_break(&p->bar), stopped(command, p->j, number, &err);
        for (int i = 0; i < b.lane_count; i++)
            memcpy(digests + (size_t)b.lanes[i] * ORDO_DIGEST_SIZE,
                   b.lane_digests + (size_t)i * ORDO_DIGEST_SIZE, ORDO_DIGEST_SIZE);
        for (int i = 0; i < b.source_count; i++)
            sources[i] += b.source_tokens[i];
        tokens += (int64_t)b.rows * b.sample_len;
        pad += b.pad_tokens;
        step = b.step;
    }
    ordo_step_init(s, step);
    s->lane_digests = digests;
    s->lane_count = p->lanes;
    ordo_batch_digest(digests, p->lanes, s->batch_digest);
    s->tokens = tokens;
    s->pad_tokens = pad;
    s->source_tokens = sources;
    s->source_count = p->source_count;
    p->pending++;
    p->tokens += (uint64_t)tokens;
    return EXIT_OK;
}

static int open_loaders(const char *command, player *p, int64_t first)
{
    const job *j = p->j;
    for (int r = 0; r < j->world_size; r++) {
        ordo_loader_options o = {.rank = r,
                                 .world_size = j->world_size,
                                 .read_workers = j->read_workers,
                                 .tokenize_workers = j->tokenize_workers,
                                 .lane_binding =
                                     j->rank_bound ? ORDO_BINDING_RANK : ORDO_BINDING_LOGICAL,
                                 .resume = j->resume,
                                 .resume_size = j->resume_size,
                                 .ledger = j->resume ? j->ledger : NULL,
                                 .run_id = j->resume_run_id};
        ordo_error err;
        if (ordo_loader_open(j->recipe, &o, &p->loaders[r], &err) != ORDO_OK)
            return stopped(command, j, first, &err);
    }
    return EXIT_OK;
}

/* The step just played against the digest the manifest expects for it. */
static int check_expected(const char *command, player *p)
{
    const job *j = p->j;
    const ordo_step *s = &p->steps[p->pending - 1];
    int64_t at = s->step - j->expected_first;
    if (!j->expected || at < 0 || (uint64_t)at >= j->expected_count ||
        memcmp(s->batch_digest, j->expected + (size_t)at * ORDO_DIGEST_SIZE, ORDO_DIGEST_SIZE) == 0)
        return EXIT_OK;
    char got[ORDO_DIGEST_HEX_SIZE], want[ORDO_DIGEST_HEX_SIZE], detail[256];
    ordo_digest_to_hex(s->batch_digest, got);
    ordo_digest_to_hex(j->expected + (size_t)at * ORDO_DIGEST_SIZE, want);
    int rc = flush_records(command, p); /* the evidence goes into the ledger */
    progress_break(&p->bar);
    snprintf(detail, sizeof detail, "{\"digest\":\"%s\",\"expected\":\"%s\"}", got, want);
    ordo_error err;
    ordo_event_record(j->ledger, j->run_id, s->step, ORDO_EVENT_REPLAY_MISMATCH, detail, &err);
    fprintf(stderr,
            "ordo %s: REPLAY MISMATCH at step %lld: batch digest %s, the manifest expects %s;\n"
            "  this job is not seeing the data the run saw; stopping%s\n",
            command, (long long)s->step, got, want, rc == EXIT_OK ? "" : " (recording failed)");
    return EXIT_FAILURE_;
}

static int play(const char *command, player *p, int64_t first)
{
    const job *j = p->j;
    int rc = open_loaders(command, p, first);
    if (rc == EXIT_OK && j->opened)
        rc = j->opened(p->j, j->opened_context);
    for (int64_t step = first; rc == EXIT_OK && step <= j->last_step; step++) {
        rc = play_step(command, p, step);
        if (rc == EXIT_OK)
            rc = keep_lane_state(command, p, first);
        if (rc == EXIT_OK)
            rc = check_expected(command, p);
        if (rc == EXIT_OK && p->pending == RECORD_BATCH)
            rc = flush_records(command, p);
        int due = j->checkpoint_every > 0 && step % j->checkpoint_every == 0;
        if (rc == EXIT_OK && (due || step == j->last_step))
            rc = checkpoint(command, p, step);
        if (rc == EXIT_OK)
            progress_update(&p->bar, (uint64_t)(step - first + 1),
                            (uint64_t)(j->last_step - first + 1), p->tokens);
    }
    if (rc == EXIT_OK)
        rc = flush_records(command, p);
    return rc;
}

int job_play(const char *command, job *j)
{
    ordo_recipe_info info;
    ordo_recipe_describe(j->recipe, &info);
    int64_t first = 1;
    ordo_error err;
    if (j->resume &&
        ordo_checkpoint_describe(j->resume, j->resume_size, NULL, &first, &err) != ORDO_OK)
        return cli_fail(command, &err);
    first = j->resume ? first + 1 : 1;
    player p = {.j = j,
                .loaders = calloc((size_t)j->world_size, sizeof(ordo_loader *)),
                .lanes = j->rank_bound ? j->world_size : info.lanes,
                .source_count = info.source_count,
                .flush_every = info.flush_every,
                .lane_states = calloc(RECORD_BATCH, sizeof(unsigned char *))};
    p.steps = calloc(RECORD_BATCH, sizeof *p.steps);
    p.digests = malloc(RECORD_BATCH * (size_t)p.lanes * ORDO_DIGEST_SIZE);
    p.sources =
        malloc(RECORD_BATCH * (size_t)(p.source_count ? p.source_count : 1) * sizeof *p.sources);
    progress_start(&p.bar, command, PROGRESS_STEPS, isatty(STDERR_FILENO), j->quiet,
                   progress_clock());
    int rc = p.loaders && p.steps && p.digests && p.sources && p.lane_states
                 ? play(command, &p, first)
                 : EXIT_FAILURE_;
    progress_end(&p.bar, rc == EXIT_OK ? PROGRESS_DONE : PROGRESS_FAILED);
    for (int r = 0; p.loaders && r < j->world_size; r++)
        ordo_loader_close(p.loaders[r]);
    free(p.loaders);
    for (size_t i = 0; p.lane_states && i < p.pending; i++)
        ordo_free(p.lane_states[i]);
    free(p.lane_states);
    free(p.steps);
    free(p.digests);
    free(p.sources);
    if (rc == EXIT_OK && !j->quiet)
        printf("run %s: steps %lld-%lld at world size %d (%s lanes), checkpoint %lld bytes "
               "(%.1f per lane)\n",
               j->run_name, (long long)first, (long long)j->last_step, j->world_size,
               j->rank_bound ? "rank-bound" : "logical", (long long)p.checkpoint_bytes,
               (double)p.checkpoint_bytes / p.lanes);
    return rc;
}
