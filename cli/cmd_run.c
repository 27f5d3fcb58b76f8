/* ordo run / ordo resume: the job simulator's commands. */
#define _DEFAULT_SOURCE /* realpath */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "progress.h"

static const char run_help[] =
    "usage: ordo run RECIPE --name NAME --world-size W --steps N [options]\n\n"
    "Plays a data-parallel job of W ranks in lockstep, each a loader over its\n"
    "lanes, and records every step's lane digests and batch digest, the segment\n"
    "with its lane plan, and checkpoints. Indexes the recipe first if needed.\n"
    "Steps are numbered from 1; step N is the last. While it plays, stderr\n"
    "shows the steps done of all, steps and tokens per second and the time\n"
    "left: a bar redrawn in place on a terminal, otherwise a line every 5\n"
    "seconds (\"run: step 40 of 100 (40%), 12.5 steps/s, 1.6M tokens/s, ETA 5\n"
    "s\"); then a final line (\"run: 100 steps in 8.0 s, ...\").\n\n"
    "  --db PATH               the ledger (default: $ORDO_DB, else ./ordo.db)\n"
    "  --name NAME             the run to record\n"
    "  --world-size W          data-parallel ranks\n"
    "  --steps N               last step\n"
    "  --checkpoint-every K    checkpoint every K steps (and always at step N)\n"
    "  --workers read=R,tokenize=T   workers per operator (default 1 each)\n"
    "  --lane-binding logical|rank   logical lanes (default) or the standard\n"
    "                          rank-sharded loader, kept for contrast\n"
    "  --group TAG             ablation group\n"
    "  --baseline RUN          run this one is checked against\n"
    "  --quiet                 no progress on stderr, no summary line (errors\n"
    "                          still print)\n"
    "  -h, --help              this help\n";

static const char resume_help[] =
    "usage: ordo resume NAME --world-size W --steps N [options]\n"
    "       ordo resume --manifest FILE|URL --steps N [options]\n\n"
    "Continues run NAME from its latest checkpoint (or the one at --from-step;\n"
    "from step 0 when it has none) at a new world size, as a new segment,\n"
    "until step N. Every shard is re-hashed first; a changed file refuses the\n"
    "resume. The samples the resume regenerates and drops must reproduce the\n"
    "lane digests the ledger recorded, or it is refused naming step and lane.\n"
    "A resume that crashed before its first checkpoint is replaced by the\n"
    "next one. With --as NEW the continuation is recorded as a new run NEW\n"
    "whose baseline is NAME.\n\n"
    "  --db PATH               the ledger (default: $ORDO_DB, else ./ordo.db)\n"
    "  --world-size W          data-parallel ranks from now on\n"
    "  --steps N               last step\n"
    "  --from-step S           resume from the checkpoint at step S\n"
    "  --as NEW                record the continuation as a new run\n"
    "  --manifest FILE|URL     resume from a recovery manifest (ordo serve's\n"
    "                          /api/runs/NAME/recovery): its run, checkpoint and\n"
    "                          world size; the first steps must match the batch\n"
    "                          digests it expects, or the job stops loudly\n"
    "  --data-root DIR         where the recipe's shards are (default: the\n"
    "                          manifest's)\n"
    "  --checkpoint-every K    checkpoint every K steps (and always at step N)\n"
    "  --workers read=R,tokenize=T   workers per operator (default 1 each)\n"
    "  --quiet                 no progress on stderr, no summary line (errors\n"
    "                          still print)\n"
    "  -h, --help              this help\n";

typedef struct {
    const char *db, *name, *group, *baseline, *binding, *as, *target, *manifest, *data_root;
    int world_size, read_workers, tokenize_workers, quiet;
    int64_t steps, checkpoint_every, from_step;
} run_args;

static int parse_count(const char *text, int64_t max, int64_t *value)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < 1 || v > max)
        return -1;
    *value = v;
    return 0;
}

/* Both commands' options, each handled by run_option (by its key). */
static const cli_option run_options[] = {{"db", 1, .key = 'd'},
                                         {"name", 1, .key = 'n'},
                                         {"world-size", 1, .key = 'w'},
                                         {"steps", 1, .key = 's'},
                                         {"checkpoint-every", 1, .key = 'k'},
                                         {"workers", 1, .key = 'W'},
                                         {"lane-binding", 1, .key = 'b'},
                                         {"group", 1, .key = 'g'},
                                         {"baseline", 1, .key = 'B'},
                                         {"from-step", 1, .key = 'f'},
                                         {"as", 1, .key = 'a'},
                                         {"manifest", 1, .key = 'M'},
                                         {"data-root", 1, .key = 'D'},
                                         {"quiet", 0, .key = 'q'},
                                         {0}};

static const char *option_name(int opt)
{
    for (const cli_option *o = run_options; o->name; o++)
        if (o->key == opt)
            return o->name;
    return "?";
}

/* 1 for an option of ordo resume only, -1 of ordo run only, 0 of both. */
static int option_scope(int opt)
{
    return opt > 0 && strchr("faMD", opt) ? 1 : opt > 0 && strchr("nbgB", opt) ? -1 : 0;
}

/* A count option's value; a bad one is a usage error naming the range. */
static int count_option(const char *command, int opt, const char *text, int64_t max, int64_t *value)
{
    if (parse_count(text, max, value) == 0)
        return 0;
    return cli_usage_error(command, "--%s '%s' must be a whole number from 1 to %lld%s",
                           option_name(opt), text, (long long)max,
                           opt == 'w' ? " that divides the recipe's lanes (or, with "
                                        "--lane-binding rank, its global batch)"
                                      : "");
}

typedef struct {
    const char *command;
    int resume;
    run_args *a;
} run_parse;

/* One option of ordo run or ordo resume: an option of the other command is
 * a usage error naming it. */
static int run_option(int opt, const char *value, void *context)
{
    run_parse *p = context;
    const char *command = p->command;
    run_args *a = p->a;
    int64_t world = 0;
    int bad = 0;
    if (option_scope(opt) == (p->resume ? -1 : 1))
        return cli_usage_error(command, "--%s does not apply to ordo %s", option_name(opt),
                               command);
    switch (opt) {
    case 'd': a->db = value; break;
    case 'n': a->name = value; break;
    case 'w':
        bad = count_option(command, opt, value, 65536, &world);
        a->world_size = (int)world;
        break;
    case 's': bad = count_option(command, opt, value, ORDO_STEP_MAX, &a->steps); break;
    case 'k': bad = count_option(command, opt, value, ORDO_STEP_MAX, &a->checkpoint_every); break;
    case 'f': bad = count_option(command, opt, value, ORDO_STEP_MAX, &a->from_step); break;
    case 'W':
        if (job_parse_workers(value, &a->read_workers, &a->tokenize_workers))
            bad = cli_usage_error(command, "--workers has a bad value '%s'", value);
        break;
    case 'b': a->binding = value; break;
    case 'g': a->group = value; break;
    case 'B': a->baseline = value; break;
    case 'a': a->as = value; break;
    case 'M': a->manifest = value; break;
    case 'D': a->data_root = value; break;
    default: a->quiet = 1; break; /* 'q' */
    }
    return bad;
}

/* CLI_PARSED when the job goes on, else the exit code. */
static int parse_args(const char *command, int argc, char **argv, run_args *a)
{
    int resume = strcmp(command, "resume") == 0, first;
    memset(a, 0, sizeof *a);
    a->read_workers = a->tokenize_workers = 1;
    run_parse context = {command, resume, a};
    const cli_parser parser = {.command = command,
                               .help = resume ? resume_help : run_help,
                               .options = run_options,
                               .handle = run_option,
                               .context = &context};
    int rc = cli_parse(&parser, argc, argv, &first);
    if (rc != CLI_PARSED)
        return rc;
    if (a->manifest && first < argc)
        return cli_usage_error(command, "unexpected argument '%s' (the manifest names the run)",
                               argv[first]);
    if (!a->manifest && first + 1 != argc)
        return cli_usage_error(command, first >= argc ? "which %s?" : "unexpected argument '%s'",
                               first >= argc ? (resume ? "run" : "recipe") : argv[first + 1]);
    a->target = a->manifest ? NULL : argv[first];
    if (!resume && !a->name)
        return cli_usage_error(command, "--name is required");
    if ((!a->world_size && !a->manifest) || !a->steps)
        return cli_usage_error(command, "--world-size and --steps are required");
    if (a->manifest && a->from_step)
        return cli_usage_error(command, "--from-step does not apply: the manifest names the "
                                        "checkpoint");
    ordo_lane_binding binding;
    if (a->binding && ordo_lane_binding_parse(a->binding, &binding, NULL) != ORDO_OK)
        return cli_usage_error(command, "--lane-binding must be 'logical' or 'rank'");
    return CLI_PARSED;
}

static void index_progress(uint64_t done, uint64_t total, void *context)
{
    progress_update(context, done, total, 0);
}

/* Indexes the recipe (what the ledger holds is reused), with progress on
 * stderr and its final line when some shard was read. */
static ordo_status index_shown(ordo_recipe *recipe, ordo_ledger *ledger, int quiet, ordo_error *err)
{
    progress bar;
    progress_start(&bar, "index", PROGRESS_BYTES, isatty(STDERR_FILENO), quiet, progress_clock());
    ordo_status status = ordo_recipe_index(recipe, ledger, index_progress, &bar, err);
    progress_end(&bar, status != ORDO_OK                        ? PROGRESS_FAILED
                       : ordo_recipe_indexed_shards(recipe) > 0 ? PROGRESS_DONE
                                                                : PROGRESS_ERASED);
    return status;
}

/* Records the job's segment from `start`; with `replace`, segments from
 * there on that crashed before their first checkpoint give way to it. */
static int add_segment(const char *command, ordo_ledger *ledger, int64_t run, const job *j,
                       int64_t start, int64_t resumed_from, int replace)
{
    ordo_recipe_info info;
    ordo_recipe_describe(j->recipe, &info);
    ordo_lane_binding binding = j->rank_bound ? ORDO_BINDING_RANK : ORDO_BINDING_LOGICAL;
    int lanes = 0, *plan = NULL;
    ordo_error err;
    if (ordo_lane_plan_parse(info.lanes, j->world_size, binding, NULL, 0, &plan, &lanes, &err) !=
        ORDO_OK)
        return cli_fail(command, &err);
    char workers[64], host[256] = "";
    snprintf(workers, sizeof workers, "{\"read\":%d,\"tokenize\":%d}", j->read_workers,
             j->tokenize_workers);
    gethostname(host, sizeof host - 1);
    ordo_segment_spec spec = {.world_size = j->world_size,
                              .start_step = start,
                              .lanes = lanes,
                              .lane_ranks = plan,
                              .lane_binding = binding,
                              .workers = workers,
                              .host = host[0] ? host : NULL,
                              .resumed_from = resumed_from,
                              .replace_crashed = replace};
    int64_t id = 0;
    ordo_status status = ordo_segment_add(ledger, run, &spec, &id, &err);
    ordo_free(plan);
    return status == ORDO_OK ? EXIT_OK : cli_fail(command, &err);
}

static int start_run(ordo_ledger *ledger, ordo_recipe *recipe, const run_args *a,
                     const char *data_root, job *j)
{
    ordo_error err;
    if (index_shown(recipe, ledger, a->quiet, &err) != ORDO_OK)
        return cli_fail("run", &err);
    ordo_recipe_info info;
    ordo_recipe_describe(recipe, &info);
    ordo_run_spec spec = {.name = a->name,
                          .recipe_id = ordo_recipe_id(recipe),
                          .group_tag = a->group,
                          .baseline = a->baseline,
                          .lanes = j->rank_bound ? a->world_size : info.lanes,
                          .data_root = data_root};
    ordo_run_info existing;
    int restart = ordo_run_get(ledger, a->name, &existing, &err) == ORDO_OK;
    /* A run that crashed before its first checkpoint starts over (its steps
     * are recorded again, identical); one with a checkpoint is resumed. */
    if (restart && existing.checkpoints > 0)
        return fprintf(stderr,
                       "ordo run: run '%s' already exists and has checkpoints (use "
                       "'ordo resume')\n",
                       a->name),
               EXIT_FAILURE_;
    /* Restarted at another world size, its segment is replaced. */
    int replace = restart && existing.segments > 0 && existing.world_size != a->world_size;
    /* Validate the job shape before recording anything. */
    ordo_loader *probe = NULL;
    ordo_loader_options o = {.rank = 0,
                             .world_size = a->world_size,
                             .read_workers = 1,
                             .tokenize_workers = 1,
                             .lane_binding = a->binding && strcmp(a->binding, "rank") == 0
                                                 ? ORDO_BINDING_RANK
                                                 : ORDO_BINDING_LOGICAL};
    if (ordo_loader_open(recipe, &o, &probe, &err) != ORDO_OK)
        return cli_fail("run", &err);
    ordo_loader_close(probe);
    if (ordo_run_create(ledger, &spec, &j->run_id, &err) != ORDO_OK)
        return cli_fail("run", &err);
    if (restart && existing.segments > 0 && !replace)
        return EXIT_OK;
    return add_segment("run", ledger, j->run_id, j, 1, 0, replace);
}

/* Entry point of `ordo run`. */
int cmd_run(int argc, char **argv)
{
    run_args a;
    int rc = parse_args("run", argc, argv, &a);
    if (rc != CLI_PARSED)
        return rc;
    ordo_recipe *recipe = NULL;
    ordo_error err;
    /* Shards the ledger already hashed are not hashed again (their chunks
     * are checked as they are read). */
    ordo_ledger *ledger = cli_open("run", a.db, 0);
    if (!ledger)
        return EXIT_FAILURE_;
    if (ordo_recipe_load_with(a.target, ledger, &recipe, &err) != ORDO_OK) {
        ordo_ledger_close(ledger);
        return cli_fail("run", &err);
    }
    /* The folder its paths resolved in (a piped recipe's: the current one). */
    const char *root = ordo_recipe_data_root(recipe);
    job j = {.ledger = ledger,
             .recipe = recipe,
             .run_name = a.name,
             .world_size = a.world_size,
             .rank_bound = a.binding && strcmp(a.binding, "rank") == 0,
             .read_workers = a.read_workers,
             .tokenize_workers = a.tokenize_workers,
             .last_step = a.steps,
             .checkpoint_every = a.checkpoint_every,
             .quiet = a.quiet};
    rc = start_run(ledger, recipe, &a, root, &j);
    if (rc == EXIT_OK)
        rc = job_play("run", &j);
    ordo_ledger_close(ledger);
    ordo_recipe_free(recipe);
    return rc;
}

/* Resuming a run in place from an earlier checkpoint would record a second
 * history over the first; a fork (--as) is the way to do that. */
static int no_later_checkpoint(ordo_ledger *ledger, const resume_source *src)
{
    ordo_checkpoint latest;
    ordo_error err;
    ordo_status status = ordo_checkpoint_get(ledger, src->run.id, 0, &latest, &err);
    if (status == ORDO_NOTFOUND && !src->checkpoint.state)
        return EXIT_OK; /* none at all: the resume starts at step 1 */
    if (status != ORDO_OK)
        return cli_fail("resume", &err);
    int64_t step = latest.step;
    ordo_checkpoint_free(&latest);
    if (step > src->checkpoint.step)
        return fprintf(stderr,
                       "ordo resume: run '%s' has a later checkpoint (step %lld) than step "
                       "%lld; resume from the latest, or fork with --as NAME\n",
                       src->run.name, (long long)step, (long long)src->checkpoint.step),
               EXIT_FAILURE_;
    return EXIT_OK;
}

/* The checkpoint to resume from; a run that has none (it crashed before
 * its first) resumes from step 0, at any valid world size. */
static ordo_status checkpoint_or_start(ordo_ledger *ledger, const run_args *a, resume_source *src,
                                       ordo_error *err)
{
    ordo_status status =
        ordo_checkpoint_get(ledger, src->run.id, a->from_step, &src->checkpoint, err);
    if (status == ORDO_NOTFOUND && !a->from_step) {
        memset(&src->checkpoint, 0, sizeof src->checkpoint);
        return ORDO_OK;
    }
    return status;
}

static int load_source(ordo_ledger *ledger, const run_args *a, resume_source *src)
{
    ordo_error err;
    char *canonical = NULL;
    ordo_segment_list *segments = NULL;
    if (ordo_run_get(ledger, a->target, &src->run, &err) != ORDO_OK ||
        checkpoint_or_start(ledger, a, src, &err) != ORDO_OK ||
        ordo_segments_list(ledger, src->run.id, &segments, &err) != ORDO_OK ||
        ordo_recipe_get(ledger, src->run.recipe_id, &canonical, &err) != ORDO_OK)
        return cli_fail("resume", &err);
    src->rank_bound = segments->count > 0 &&
                      segments->items[segments->count - 1].lane_binding == ORDO_BINDING_RANK;
    ordo_segment_list_free(segments);
    ordo_status status = ordo_recipe_parse_with(
        canonical, strlen(canonical), src->run.data_root[0] ? src->run.data_root : ".",
        ORDO_RECIPE_VERIFY_SHARDS, ledger, &src->recipe, &err);
    ordo_free(canonical);
    if (status == ORDO_OK)
        status = ordo_recipe_index(src->recipe, ledger, NULL, NULL, &err);
    if (status != ORDO_OK)
        return fprintf(stderr, "ordo resume: refused: %s\n", err.message), EXIT_FAILURE_;
    if (a->steps <= src->checkpoint.step)
        return cli_usage_error("resume", "--steps %lld is not after the checkpoint at step %lld",
                               (long long)a->steps, (long long)src->checkpoint.step);
    return a->as ? EXIT_OK : no_later_checkpoint(ledger, src);
}

/* The run that records the continuation: the same one, or a fork. */
static int target_run(ordo_ledger *ledger, const run_args *a, resume_source *src, job *j)
{
    ordo_error err;
    j->run_id = src->run.id;
    j->run_name = src->run.name;
    if (a->as) {
        ordo_run_spec spec = {.name = a->as,
                              .recipe_id = src->run.recipe_id,
                              .group_tag = src->run.group_tag[0] ? src->run.group_tag : NULL,
                              .baseline = src->run.name,
                              .lanes = src->run.lanes,
                              .data_root = src->run.data_root[0] ? src->run.data_root : NULL};
        ordo_run_info existing;
        if (ordo_run_get(ledger, a->as, &existing, &err) == ORDO_OK)
            return fprintf(stderr, "ordo resume: run '%s' already exists\n", a->as), EXIT_FAILURE_;
        if (ordo_run_create(ledger, &spec, &j->run_id, &err) != ORDO_OK)
            return cli_fail("resume", &err);
        j->run_name = a->as;
    }
    int rc = add_segment("resume", ledger, j->run_id, j, src->checkpoint.step + 1,
                         src->checkpoint.step, !a->as);
    /* A fork keeps the state it started from, so it can be resumed too. */
    if (rc == EXIT_OK && a->as && src->checkpoint.state &&
        ordo_checkpoint_record(ledger, j->run_id, src->checkpoint.step, src->checkpoint.lanes,
                               src->checkpoint.state, src->checkpoint.state_size, &err) != ORDO_OK)
        rc = cli_fail("resume", &err);
    return rc;
}

/* The state a checkpoint row holds must be of the row's step. */
static int check_state_step(const resume_source *src)
{
    int64_t state_step = 0;
    ordo_error err;
    if (!src->checkpoint.state)
        return EXIT_OK;
    if (ordo_checkpoint_describe(src->checkpoint.state, src->checkpoint.state_size, NULL,
                                 &state_step, &err) != ORDO_OK)
        return fprintf(stderr, "ordo resume: refused: %s\n", err.message), EXIT_FAILURE_;
    if (state_step != src->checkpoint.step)
        return fprintf(stderr,
                       "ordo resume: refused: the checkpoint recorded at step %lld holds "
                       "the state of step %lld\n",
                       (long long)src->checkpoint.step, (long long)state_step),
               EXIT_FAILURE_;
    return EXIT_OK;
}

typedef struct {
    ordo_ledger *ledger;
    const run_args *args;
    resume_source *src;
} resume_context;

/* Once the loaders are open (the checkpoint reproduced what the ledger
 * recorded), the continuation is recorded. */
static int record_continuation(job *j, void *context)
{
    resume_context *c = context;
    return target_run(c->ledger, c->args, c->src, j);
}

/* Entry point of `ordo resume`. */
int cmd_resume(int argc, char **argv)
{
    run_args a;
    int rc = parse_args("resume", argc, argv, &a);
    if (rc != CLI_PARSED)
        return rc;
    ordo_ledger *ledger = cli_open("resume", a.db, 0);
    resume_source src = {0};
    rc = !ledger      ? EXIT_FAILURE_
         : a.manifest ? manifest_source(ledger, a.manifest, a.data_root, &src)
                      : load_source(ledger, &a, &src);
    if (rc == EXIT_OK && a.manifest) {
        if (a.world_size && a.world_size != src.world_size)
            rc = cli_usage_error("resume", "--world-size %d differs from the manifest's %d",
                                 a.world_size, src.world_size);
        a.world_size = src.world_size;
        if (rc == EXIT_OK && a.steps <= src.checkpoint.step)
            rc = cli_usage_error("resume",
                                 "--steps %lld is not after the checkpoint at step "
                                 "%lld",
                                 (long long)a.steps, (long long)src.checkpoint.step);
        if (rc == EXIT_OK && !a.as)
            rc = no_later_checkpoint(ledger, &src);
    }
    if (rc == EXIT_OK)
        rc = check_state_step(&src);
    resume_context context = {ledger, &a, &src};
    /* The run until the continuation is recorded (what stops the replay is
     * recorded for it). */
    job j = {.ledger = ledger,
             .recipe = src.recipe,
             .run_id = src.run.id,
             .world_size = a.world_size,
             .rank_bound = src.rank_bound,
             .read_workers = a.read_workers,
             .tokenize_workers = a.tokenize_workers,
             .last_step = a.steps,
             .checkpoint_every = a.checkpoint_every,
             .resume = src.checkpoint.state,
             .resume_size = src.checkpoint.state_size,
             .resume_run_id = src.run.id,
             .opened = record_continuation,
             .opened_context = &context,
             .quiet = a.quiet,
             .expected = src.expected,
             .expected_first = src.checkpoint.step + 1,
             .expected_count = src.expected_count};
    /* The loaders open (and check the checkpoint against the ledger)
     * before anything is recorded. */
    if (rc == EXIT_OK)
        rc = job_play("resume", &j);
    ordo_checkpoint_free(&src.checkpoint);
    ordo_recipe_free(src.recipe);
    free(src.expected);
    ordo_ledger_close(ledger);
    return rc;
}
