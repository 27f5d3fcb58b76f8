/* Ledger opening, error printing and JSON output shared by the commands. */
#include <stdarg.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* --db, else $ORDO_DB, else ./ordo.db. */
const char *cli_db_path(const char *option)
{
    if (option)
        return option;
    const char *env = getenv("ORDO_DB");
    return env && *env ? env : "./ordo.db";
}

#define CLI_LOCK_TIMEOUT_MS 120000

/* Opens the ledger or explains why not. */
ordo_ledger *cli_open(const char *command, const char *db_option, unsigned flags)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    if (ordo_ledger_open(cli_db_path(db_option), flags, &ledger, &err) != ORDO_OK) {
        cli_fail(command, &err);
        return NULL;
    }
    /* a command waits out another's long write (an ingest, another job)
     * rather than failing, for a bounded time */
    ordo_ledger_set_lock_timeout(ledger, CLI_LOCK_TIMEOUT_MS);
    return ledger;
}

/* Prints a failure. */
int cli_fail(const char *command, const ordo_error *err)
{
    fprintf(stderr, "ordo %s: %s\n", command, err->message);
    return EXIT_FAILURE_;
}

/* Prints a usage error and the help hint. */
int cli_usage_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ordo %s: ", command);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'ordo %s --help'.\n", command);
    va_end(ap);
    return EXIT_USAGE;
}

/* The option getopt_long just refused, as the user typed it. */
int cli_option_error(const char *command, char **argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "";
    if (strncmp(arg, "--", 2) == 0) {
        size_t n = strcspn(arg, "=");
        return cli_usage_error(command, "unknown option, or one missing its value: '%.*s'",
                               (int)n, arg);
    }
    if (optopt > 0 && optopt < 128)
        return cli_usage_error(command, "unknown option, or one missing its value: '-%c'",
                               optopt);
    return cli_usage_error(command, "unknown option '%s'", arg);
}

/* Prints JSON to stdout; steals `value`. */
int cli_print_json(json_t *value)
{
    int rc = value ? json_dumpf(value, stdout, JSON_INDENT(2)) : -1;
    json_decref(value);
    if (rc != 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
        fprintf(stderr, "ordo: cannot write JSON output\n");
        return EXIT_FAILURE_;
    }
    return EXIT_OK;
}

static json_t *string_or_null(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

/* A run as JSON. */
json_t *cli_run_json(const ordo_run_info *run)
{
    return json_pack("{s:I, s:s, s:s, s:o, s:o, s:o, s:i, s:i, s:s, s:I, s:I, s:o, s:o, s:I, "
                     "s:I, s:s}",
                     "id", (json_int_t)run->id, "name", run->name, "recipe_id", run->recipe_id,
                     "recipe_name", string_or_null(run->recipe_name), "group",
                     string_or_null(run->group_tag), "baseline", string_or_null(run->baseline),
                     "lanes", run->lanes, "world_size", run->world_size, "digest_kind",
                     run->digest_kind, "segments", (json_int_t)run->segments, "steps",
                     (json_int_t)run->steps, "first_step",
                     run->steps ? json_integer(run->first_step) : json_null(), "last_step",
                     run->steps ? json_integer(run->last_step) : json_null(), "checkpoints",
                     (json_int_t)run->checkpoints, "conflicts", (json_int_t)run->conflicts,
                     "created_at", run->created_at);
}

/* A segment as JSON; its lane plan is embedded as JSON, not as a string. */
json_t *cli_segment_json(const ordo_segment_info *s)
{
    json_t *plan = json_loads(s->lane_plan, 0, NULL);
    json_t *workers = s->workers ? json_loads(s->workers, 0, NULL) : NULL;
    return json_pack("{s:I, s:i, s:i, s:i, s:s, s:I, s:I, s:b, s:o, s:o, s:o, s:o, s:s}", "id",
                     (json_int_t)s->id, "ordinal", s->ordinal, "world_size", s->world_size,
                     "lanes", s->lanes, "lane_binding", s->lane_binding, "start_step",
                     (json_int_t)s->start_step, "end_step", (json_int_t)s->end_step, "open",
                     s->open, "resumed_from",
                     s->resumed_from ? json_integer(s->resumed_from) : json_null(), "lane_plan",
                     plan ? plan : json_null(), "workers", workers ? workers : json_null(),
                     "host", string_or_null(s->host), "created_at", s->created_at);
}

/* A checkpoint (without its state) as JSON. */
json_t *cli_checkpoint_json(const ordo_checkpoint *c)
{
    return json_pack("{s:I, s:i, s:I, s:s, s:b}", "step", (json_int_t)c->step, "lanes",
                     c->lanes, "state_bytes", (json_int_t)c->state_size, "created_at",
                     c->created_at, "held", c->held);
}

/* An event as JSON; its detail is embedded as JSON. */
json_t *cli_event_json(const ordo_event *e)
{
    json_t *detail = json_loads(e->detail, 0, NULL);
    return json_pack("{s:I, s:o, s:s, s:o, s:s}", "id", (json_int_t)e->id, "step",
                     e->step ? json_integer(e->step) : json_null(), "kind", e->kind, "detail",
                     detail ? detail : json_object(), "created_at", e->created_at);
}

static json_t *hex_array(const unsigned char *digests, int count)
{
    json_t *array = json_array();
    for (int i = 0; array && i < count; i++) {
        char hex[ORDO_DIGEST_HEX_SIZE];
        ordo_digest_to_hex(digests + (size_t)i * ORDO_DIGEST_SIZE, hex);
        json_array_append_new(array, json_string(hex));
    }
    return array;
}

/* A step as JSON. */
json_t *cli_step_json(const ordo_step *s)
{
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(s->batch_digest, hex);
    json_t *sources = json_null();
    if (s->source_count > 0) {
        sources = json_array();
        for (int i = 0; i < s->source_count; i++)
            json_array_append_new(sources, json_integer(s->source_tokens[i]));
    }
    json_t *metrics = s->metrics ? json_loads(s->metrics, 0, NULL) : NULL;
    return json_pack("{s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "step", (json_int_t)s->step,
                     "batch_digest", hex, "lane_digests",
                     s->lane_digests ? hex_array(s->lane_digests, s->lane_count) : json_null(),
                     "tokens", s->tokens >= 0 ? json_integer(s->tokens) : json_null(),
                     "pad_tokens", s->pad_tokens >= 0 ? json_integer(s->pad_tokens) : json_null(),
                     "source_tokens", sources, "loss",
                     s->has_loss ? json_real(s->loss) : json_null(), "metrics",
                     metrics ? metrics : json_null());
}

/* What ordo compare --json prints (shared with the service). */
json_t *cli_compare_json(const char *a, const char *b, const ordo_compare_result *r)
{
    json_t *ranges = json_array(), *lanes = json_array();
    for (size_t i = 0; i < r->range_count; i++)
        json_array_append_new(ranges, json_pack("[I, I]", (json_int_t)r->ranges[i][0],
                                                (json_int_t)r->ranges[i][1]));
    for (size_t i = 0; i < r->lane_count; i++)
        json_array_append_new(lanes, json_integer(r->lanes[i]));
    return json_pack("{s:s, s:s, s:b, s:I, s:I, s:I, s:o, s:I, s:I, s:o, s:o, s:I, s:I, s:o}",
                     "a", a, "b", b,
                     "comparable", r->comparable, "steps_compared", (json_int_t)r->steps_compared,
                     "matched", (json_int_t)r->matched, "diverged", (json_int_t)r->diverged,
                     "first_divergent_step",
                     r->first_divergent_step ? json_integer(r->first_divergent_step) : json_null(),
                     "only_a", (json_int_t)r->only_a, "only_b", (json_int_t)r->only_b,
                     "divergent_ranges", ranges, "lanes_differ", lanes, "conflicts_a",
                     (json_int_t)r->conflicts_a, "conflicts_b", (json_int_t)r->conflicts_b,
                     "first_conflict_step",
                     r->first_conflict_step ? json_integer(r->first_conflict_step) : json_null());
}

