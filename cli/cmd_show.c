/* ordo show RUN: one run with its segments, checkpoints, events, mixture
 * (target against delivered shares) and steps. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char show_help[] =
    "usage: ordo show RUN [--db PATH] [--json] [--steps FROM:TO]\n\n"
    "Shows a run: its recipe, segments (world size, step range, lane plan),\n"
    "checkpoints, events (conflicts, resumes, divergences) and its mixture:\n"
    "per source, the recipe's target share (its weights or schedule) against\n"
    "the share of the tokens its steps delivered, and the step where the two\n"
    "differ most, in samples. Listed steps show both shares per source.\n\n"
    "  --db PATH        the ledger (default: $ORDO_DB, else ./ordo.db)\n"
    "  --json           print one JSON object instead of text\n"
    "  --steps FROM:TO  also list the recorded steps in that range (or one step N)\n"
    "  -h, --help       this help\n";

typedef struct {
    ordo_run_info run;
    ordo_segment_list *segments;
    ordo_checkpoint_list *checkpoints;
    ordo_event_list *events;
    ordo_mixture *mixture;
} run_view;

static int parse_step(const char *text, int64_t *value)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < 1 || v > ORDO_STEP_MAX)
        return -1;
    *value = v;
    return 0;
}

/* "FROM:TO" or "N"; 0 on success. */
static int parse_range(const char *text, int64_t *from, int64_t *to)
{
    char buffer[64];
    if (strlen(text) >= sizeof buffer)
        return -1;
    strcpy(buffer, text);
    char *colon = strchr(buffer, ':');
    if (!colon)
        return parse_step(buffer, from) || (*to = *from, 0);
    *colon = '\0';
    return parse_step(buffer, from) || parse_step(colon + 1, to) || *from > *to ? -1 : 0;
}

static ordo_status load_view(ordo_ledger *ledger, const char *name, run_view *view, ordo_error *err)
{
    ordo_status status = ordo_run_get(ledger, name, &view->run, err);
    if (status == ORDO_OK)
        status = ordo_segments_list(ledger, view->run.id, &view->segments, err);
    if (status == ORDO_OK)
        status = ordo_checkpoints_list(ledger, view->run.id, &view->checkpoints, err);
    if (status == ORDO_OK)
        status = ordo_events_list(ledger, view->run.id, ORDO_EVENT_ANY, &view->events, err);
    if (status == ORDO_OK)
        status = ordo_mixture_open(ledger, view->run.recipe_id, &view->mixture, err);
    if (status == ORDO_OK)
        status = ordo_mixture_scan(ledger, view->mixture, view->run.id, 1, ORDO_STEP_MAX, err);
    return status;
}

static void free_view(run_view *view)
{
    ordo_segment_list_free(view->segments);
    ordo_checkpoint_list_free(view->checkpoints);
    ordo_event_list_free(view->events);
    ordo_mixture_free(view->mixture);
}

static void print_run(const ordo_run_info *r)
{
    printf("run          %s (id %lld)\n", r->name, (long long)r->id);
    printf("recipe       %s%s%s%s\n", r->recipe_id, r->recipe_name[0] ? " (" : "", r->recipe_name,
           r->recipe_name[0] ? ")" : "");
    printf("group        %s\n", r->group_tag[0] ? r->group_tag : "-");
    printf("baseline     %s\n", r->baseline[0] ? r->baseline : "-");
    printf("lanes        %d\n", r->lanes);
    printf("digest kind  %s\n", r->digest_kind);
    if (r->steps)
        printf("steps        %lld recorded, %lld..%lld\n", (long long)r->steps,
               (long long)r->first_step, (long long)r->last_step);
    else
        printf("steps        none recorded\n");
    printf("conflicts    %lld\n", (long long)r->conflicts);
    if (r->lane_states)
        printf("lane states  %lld recorded (a step of an epoch with one: ordo batch replays that "
               "epoch)\n",
               (long long)r->lane_states);
    else
        printf("lane states  none (ordo batch replays from the checkpoint before a step)\n");
    printf("created      %s\n", r->created_at);
}

static void print_percent(double share)
{
    if (isfinite(share))
        printf(" %10.2f%%", 100 * share);
    else
        printf(" %11s", "-");
}

/* Per source: target mean, delivered, the worst step's deviation. */
static void print_mixture(const ordo_mixture *m)
{
    int n = ordo_mixture_sources(m);
    if (!n) {
        printf("\nmixture      no targets: %s\n", ordo_mixture_why(m));
        return;
    }
    ordo_mixture_source s;
    ordo_mixture_summary(m, 0, &s, NULL);
    char batch[32] = "unknown";
    if (ordo_mixture_global_batch(m))
        snprintf(batch, sizeof batch, "%d", ordo_mixture_global_batch(m));
    printf("\nmixture (%lld of %lld steps with per-source tokens; B = %s)\n",
           (long long)s.measured_steps, (long long)s.steps, batch);
    printf("  %-20s %11s %11s  %s\n", "SOURCE", "TARGET", "DELIVERED",
           "WORST STEP (delivered - target, samples)");
    for (int i = 0; i < n; i++) {
        ordo_mixture_summary(m, i, &s, NULL);
        printf("  %-20s", s.name);
        print_percent(s.target_mean);
        print_percent(s.delivered);
        if (s.worst_step && isfinite(s.worst_deviation))
            printf("  step %lld: %+.2f\n", (long long)s.worst_step, s.worst_deviation);
        else
            printf("  -\n");
    }
}

static void print_view(const run_view *v)
{
    print_run(&v->run);
    printf("\nsegments (%zu)\n", v->segments->count);
    if (v->segments->count)
        printf("  %3s %5s %5s %-8s %-23s %8s  %s\n", "#", "WORLD", "LANES", "BINDING", "STEPS",
               "RESUMED", "LANE PLAN (rank: lanes)");
    for (size_t i = 0; i < v->segments->count; i++) {
        const ordo_segment_info *s = &v->segments->items[i];
        char steps[48], resumed[24] = "-";
        snprintf(steps, sizeof steps, "%lld-%lld%s", (long long)s->start_step,
                 (long long)s->end_step, s->open ? " (open)" : "");
        if (s->resumed_from)
            snprintf(resumed, sizeof resumed, "%lld", (long long)s->resumed_from);
        printf("  %3d %5d %5d %-8s %-23s %8s  %s\n", s->ordinal, s->world_size, s->lanes,
               ordo_lane_binding_name(s->lane_binding), steps, resumed, s->lane_plan);
    }
    printf("\ncheckpoints (%zu)\n", v->checkpoints->count);
    for (size_t i = 0; i < v->checkpoints->count; i++)
        printf("  step %-10lld %d lanes, %zu bytes (%.1f per lane)%s\n",
               (long long)v->checkpoints->items[i].step, v->checkpoints->items[i].lanes,
               v->checkpoints->items[i].state_size,
               (double)v->checkpoints->items[i].state_size / v->checkpoints->items[i].lanes,
               v->checkpoints->items[i].held ? ", held: lanes of its step pending" : "");
    printf("\nevents (%zu)\n", v->events->count);
    for (size_t i = 0; i < v->events->count; i++)
        printf("  step %-10lld %-16s %s\n", (long long)v->events->items[i].step,
               ordo_event_kind_name(v->events->items[i].kind), v->events->items[i].detail);
    print_mixture(v->mixture);
}

/* "  name target% / delivered%" per source, delivered "-" when unknown. */
static void print_step_shares(const ordo_step *s, const ordo_mixture *m)
{
    int n = ordo_mixture_sources(m);
    double *target = calloc((size_t)n + 1, sizeof *target);
    double *delivered = calloc((size_t)n + 1, sizeof *delivered);
    int known = target && delivered ? ordo_mixture_step(m, s, target, delivered) : 0;
    for (int i = 0; (known & ORDO_MIXTURE_TARGET) && i < n; i++) {
        printf("  %s %.2f%% / ", ordo_mixture_source_name(m, i), 100 * target[i]);
        if (known & ORDO_MIXTURE_DELIVERED)
            printf("%.2f%%", 100 * delivered[i]);
        else
            printf("-");
    }
    free(target);
    free(delivered);
}

static int print_step_text(const ordo_step *s, void *context)
{
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(s->batch_digest, hex);
    printf("  %-10lld %s", (long long)s->step, hex);
    if (s->tokens >= 0)
        printf("  tokens %lld", (long long)s->tokens);
    if (s->has_loss)
        printf("  loss %.6g", s->loss);
    print_step_shares(s, context);
    printf("\n");
    return 0;
}

typedef struct {
    json_t *steps;
    const ordo_mixture *mixture;
} steps_json;

static int append_step_json(const ordo_step *s, void *context)
{
    steps_json *c = context;
    return json_array_append_new(c->steps, cli_view(ordo_step_mixture_json(s, c->mixture)));
}

static json_t *view_json(const run_view *v)
{
    json_t *segments = json_array(), *checkpoints = json_array(), *events = json_array();
    for (size_t i = 0; i < v->segments->count; i++)
        json_array_append_new(segments, cli_view(ordo_segment_info_json(&v->segments->items[i])));
    for (size_t i = 0; i < v->checkpoints->count; i++)
        json_array_append_new(checkpoints,
                              cli_view(ordo_checkpoint_json(&v->checkpoints->items[i])));
    for (size_t i = 0; i < v->events->count; i++)
        json_array_append_new(events, cli_view(ordo_event_json(&v->events->items[i])));
    return json_pack("{s:o, s:o, s:o, s:o, s:o}", "run", cli_view(ordo_run_info_json(&v->run)),
                     "segments", segments, "checkpoints", checkpoints, "events", events, "mixture",
                     cli_view(ordo_mixture_json(v->mixture)));
}

static int show(ordo_ledger *ledger, const char *name, int json, const int64_t *range)
{
    run_view view = {0};
    ordo_error err;
    if (load_view(ledger, name, &view, &err) != ORDO_OK) {
        free_view(&view);
        return cli_fail("show", &err);
    }
    json_t *root = json ? view_json(&view) : NULL;
    if (!json)
        print_view(&view);
    ordo_status status = ORDO_OK;
    if (range && json) {
        steps_json c = {json_array(), view.mixture};
        json_object_set_new(root, "steps", c.steps);
        status =
            ordo_steps_scan(ledger, view.run.id, range[0], range[1], append_step_json, &c, &err);
    } else if (range) {
        printf("\nsteps %lld..%lld%s\n", (long long)range[0], (long long)range[1],
               ordo_mixture_sources(view.mixture) ? " (per source: target / delivered share)" : "");
        status = ordo_steps_scan(ledger, view.run.id, range[0], range[1], print_step_text,
                                 view.mixture, &err);
    }
    free_view(&view);
    if (status != ORDO_OK) {
        json_decref(root);
        return cli_fail("show", &err);
    }
    return json ? cli_print_json(root) : EXIT_OK;
}

typedef struct {
    int64_t range[2];
    int has_range;
} steps_option;

/* --steps FROM:TO or N. */
static int steps_value(int key, const char *value, void *context)
{
    (void)key;
    steps_option *steps = context;
    if (parse_range(value, &steps->range[0], &steps->range[1]) != 0)
        return cli_usage_error("show", "--steps '%s' must be FROM:TO or N with 1 <= FROM <= TO",
                               value);
    steps->has_range = 1;
    return 0;
}

/* Entry point of `ordo show`. */
int cmd_show(int argc, char **argv)
{
    const char *db = NULL;
    int json = 0;
    steps_option steps = {{0, 0}, 0};
    const cli_option options[] = {
        {"db", 1, .text = &db}, {"json", 0, .flag = &json}, {"steps", 1, .key = 's'}, {0}};
    const cli_parser parser = {.command = "show",
                               .help = show_help,
                               .options = options,
                               .handle = steps_value,
                               .context = &steps};
    int first, rc = cli_parse(&parser, argc, argv, &first);
    if (rc != CLI_PARSED)
        return rc;
    if (first >= argc)
        return cli_usage_error("show", "which run? (ordo show RUN)");
    if (first + 1 < argc)
        return cli_usage_error("show", "unexpected argument '%s'", argv[first + 1]);
    ordo_ledger *ledger = cli_open("show", db, ORDO_OPEN_READONLY);
    if (!ledger)
        return EXIT_FAILURE_;
    rc = show(ledger, argv[first], json, steps.has_range ? steps.range : NULL);
    ordo_ledger_close(ledger);
    return rc;
}
