/* ordo compare A B: step-by-step agreement of two runs. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char compare_help[] =
    "usage: ordo compare A B [--db PATH] [--json]\n\n"
    "Compares runs A and B over the steps both recorded: steps compared,\n"
    "matched, diverged, the first divergent step, divergent step ranges and\n"
    "the lanes that differ, and the steps either run reported twice with\n"
    "different digests (conflicts: its own history disagrees with itself),\n"
    "and how their recipes differ, value by value (\"recipe differs:\", and\n"
    "recipe_diff in --json).\n"
    "Exit code 0 when they agree on every common step and neither has\n"
    "conflicts, 3 otherwise, 1 on failure, 2 on a usage error.\n\n"
    "  --db PATH   the ledger (default: $ORDO_DB, else ./ordo.db)\n"
    "  --json      print a JSON object\n"
    "  -h, --help  this help\n";

static void print_body(const char *a, const char *b, const ordo_compare_result *r);

static void print_conflicts(const char *a, const char *b, const ordo_compare_result *r)
{
    if (r->conflicts_a || r->conflicts_b)
        printf("  conflicts       %s: %lld steps, %s: %lld steps reported again with another "
               "digest (first: step %lld)\n",
               a, (long long)r->conflicts_a, b, (long long)r->conflicts_b,
               (long long)r->first_conflict_step);
}

#define DIFF_LINES 20     /* entries shown; --json has them all */
#define DIFF_VALUE_MAX 60 /* characters of a value shown */

/* A value of a recipe diff entry as compact JSON, "(none)" for an absent
 * one, cut at DIFF_VALUE_MAX characters. */
static void print_value(json_t *value)
{
    if (json_is_null(value)) {
        fputs("(none)", stdout);
        return;
    }
    char *text = NULL; /* reals in the fewest digits that read back the same: 0.7 */
    for (int digits = 15; digits <= 17 && !text; digits++) {
        text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(digits));
        json_t *back = text && digits < 17 ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
        if (back && !json_equal(back, value))
            free(text), text = NULL;
        json_decref(back);
    }
    if (text && strlen(text) > DIFF_VALUE_MAX)
        printf("%.*s…", DIFF_VALUE_MAX, text);
    else
        fputs(text ? text : "?", stdout);
    free(text);
}

/* "recipe differs:" and one line per entry of the library's recipe diff. */
static void print_recipe_diff(const ordo_compare_result *r)
{
    json_t *diff = r->recipe_diff ? json_loads(r->recipe_diff, 0, NULL) : NULL;
    size_t n = json_array_size(diff);
    if (n)
        printf("  recipe differs: %s and %s\n", r->recipe_a, r->recipe_b);
    for (size_t i = 0; i < n && i < DIFF_LINES; i++) {
        json_t *e = json_array_get(diff, i);
        printf("    %s: ", json_string_value(json_object_get(e, "key")));
        print_value(json_object_get(e, "a"));
        fputs(" -> ", stdout);
        print_value(json_object_get(e, "b"));
        fputc('\n', stdout);
    }
    if (n > DIFF_LINES)
        printf("    … %zu more (--json lists them all)\n", n - DIFF_LINES);
    json_decref(diff);
}

static void print_text(const char *a, const char *b, const ordo_compare_result *r)
{
    print_body(a, b, r);
    print_conflicts(a, b, r);
    print_recipe_diff(r);
}

static void print_body(const char *a, const char *b, const ordo_compare_result *r)
{
    printf("compare %s and %s\n", a, b);
    if (!r->comparable) {
        printf("  not comparable: the runs report different kinds of digest\n");
        return;
    }
    printf("  steps compared  %lld (only in %s: %lld, only in %s: %lld)\n",
           (long long)r->steps_compared, a, (long long)r->only_a, b, (long long)r->only_b);
    printf("  matched         %lld\n  diverged        %lld\n", (long long)r->matched,
           (long long)r->diverged);
    if (!r->diverged) {
        printf("  every common step has the same batch digest\n");
        return;
    }
    printf("  first divergent step %lld\n  divergent ranges", (long long)r->first_divergent_step);
    for (size_t i = 0; i < r->range_count && i < 20; i++)
        printf(" %lld-%lld", (long long)r->ranges[i][0], (long long)r->ranges[i][1]);
    printf("%s\n  lanes that differ", r->range_count > 20 ? " …" : "");
    for (size_t i = 0; i < r->lane_count; i++)
        printf(" %d", r->lanes[i]);
    printf("%s\n", r->lane_count ? "" : " (not comparable lane by lane)");
}

/* Entry point of `ordo compare`. */
int cmd_compare(int argc, char **argv)
{
    const char *db = NULL;
    int json = 0;
    const cli_option options[] = {{"db", 1, .text = &db}, {"json", 0, .flag = &json}, {0}};
    const cli_parser parser = {.command = "compare", .help = compare_help, .options = options};
    int first, rc = cli_parse(&parser, argc, argv, &first);
    if (rc != CLI_PARSED)
        return rc;
    if (argc - first != 2)
        return cli_usage_error("compare", "needs two runs (ordo compare A B)");
    const char *a = argv[first], *b = argv[first + 1];
    ordo_ledger *ledger = cli_open("compare", db, ORDO_OPEN_READONLY);
    if (!ledger)
        return EXIT_FAILURE_;
    ordo_compare_result r;
    ordo_run_info ra, rb;
    ordo_error err;
    ordo_status status = ordo_run_get(ledger, a, &ra, &err);
    if (status == ORDO_OK)
        status = ordo_run_get(ledger, b, &rb, &err);
    if (status == ORDO_OK)
        status = ordo_compare_runs(ledger, ra.id, rb.id, &r, &err);
    ordo_ledger_close(ledger);
    if (status != ORDO_OK)
        return cli_fail("compare", &err);
    rc = EXIT_OK;
    if (json)
        rc = cli_print_json(cli_view(ordo_compare_result_json(a, b, &r)));
    else
        print_text(a, b, &r);
    int diverged = r.diverged > 0 || !r.comparable || r.conflicts_a > 0 || r.conflicts_b > 0;
    ordo_compare_result_free(&r);
    return rc != EXIT_OK ? rc : diverged ? EXIT_DIVERGED : EXIT_OK;
}
