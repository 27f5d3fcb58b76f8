/* ordo runs: list the runs in the ledger. */
#include <string.h>

#include "cli.h"

static const char runs_help[] =
    "usage: ordo runs [--db PATH] [--json]\n\n"
    "Lists every run: its recipe, group, lanes, current world size, segments,\n"
    "steps recorded and conflicts.\n\n"
    "  --db PATH   the ledger (default: $ORDO_DB, else ./ordo.db)\n"
    "  --json      print a JSON array instead of a table\n"
    "  -h, --help  this help\n";

static void print_table(const ordo_run_info *runs, size_t count)
{
    if (count == 0) {
        printf("no runs\n");
        return;
    }
    printf("%-24s %-12s %-12s %5s %5s %4s %8s %-17s %9s\n", "RUN", "RECIPE", "GROUP", "LANES",
           "WORLD", "SEGS", "STEPS", "RANGE", "CONFLICTS");
    for (size_t i = 0; i < count; i++) {
        const ordo_run_info *r = &runs[i];
        char range[48] = "-";
        if (r->steps)
            snprintf(range, sizeof range, "%lld-%lld", (long long)r->first_step,
                     (long long)r->last_step);
        printf("%-24s %-12.12s %-12s %5d %5d %4lld %8lld %-17s %9lld\n", r->name, r->recipe_id,
               r->group_tag[0] ? r->group_tag : "-", r->lanes, r->world_size,
               (long long)r->segments, (long long)r->steps, range, (long long)r->conflicts);
    }
}

/* Entry point of `ordo runs`. */
int cmd_runs(int argc, char **argv)
{
    const char *db = NULL;
    int json = 0;
    const cli_option options[] = {{"db", 1, .text = &db}, {"json", 0, .flag = &json}, {0}};
    const cli_parser parser = {.command = "runs", .help = runs_help, .options = options};
    int first, rc = cli_parse(&parser, argc, argv, &first);
    if (rc != CLI_PARSED)
        return rc;
    if (first < argc)
        return cli_usage_error("runs", "unexpected argument '%s'", argv[first]);
    ordo_ledger *ledger = cli_open("runs", db, ORDO_OPEN_READONLY);
    if (!ledger)
        return EXIT_FAILURE_;
    ordo_run_list *runs = NULL;
    ordo_error err;
    ordo_status status = ordo_runs_list(ledger, &runs, &err);
    ordo_ledger_close(ledger);
    if (status != ORDO_OK)
        return cli_fail("runs", &err);
    rc = EXIT_OK;
    if (json) {
        json_t *array = json_array();
        for (size_t i = 0; i < runs->count; i++)
            json_array_append_new(array, cli_view(ordo_run_info_json(&runs->items[i])));
        rc = cli_print_json(array);
    } else {
        print_table(runs->items, runs->count);
    }
    ordo_run_list_free(runs);
    return rc;
}
