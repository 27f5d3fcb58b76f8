/* ordo index RECIPE and ordo recipe check FILE. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "progress.h"

static const char index_help[] =
    "usage: ordo index RECIPE [--db PATH] [--steps N] [--json] [--quiet]\n\n"
    "Hashes every shard of the recipe (SHA-256), builds its chunk table while\n"
    "validating every record, measures tokens per byte of every source on a\n"
    "seeded sample, and stores all of it with the recipe in the ledger. What\n"
    "the ledger already holds for the same contents is reused. A malformed\n"
    "record is an error naming the file and byte offset; empty documents are\n"
    "skipped and counted.\n\n"
    "Then, per source, how often its data repeats: tokens per byte, the tokens\n"
    "(and samples) of one pass over its documents, and the steps at which it\n"
    "starts each next pass within the first N steps.\n\n"
    "While it reads the shards, stderr shows the bytes done of all, the rate\n"
    "and the time left: a bar redrawn in place on a terminal, otherwise a line\n"
    "every 5 seconds (\"index: 1.2 GB of 4.0 GB (30%), 85 MB/s, ETA 33 s\"); then\n"
    "a final line (\"index: 4.0 GB in 47 s, 85 MB/s\").\n\n"
    "  --db PATH   the ledger (default: $ORDO_DB, else ./ordo.db)\n"
    "  --steps N   the horizon of the passes, 1 to 100000000 (default 10000)\n"
    "  --json      print a JSON object\n"
    "  --quiet     no progress on stderr (errors still print)\n"
    "  -h, --help  this help\n";

static const char recipe_help[] =
    "usage: ordo recipe check FILE [--json]\n\n"
    "Validates a recipe (unknown keys, numbers, divisibility, weights, source\n"
    "names, shard paths), resolves its globs, hashes its shards and prints the\n"
    "recipe id. Exit code 1 when the recipe is invalid.\n\n"
    "  --json      print a JSON object\n"
    "  -h, --help  this help\n";

static json_t *recipe_json(const ordo_recipe *recipe)
{
    ordo_recipe_info info;
    ordo_recipe_describe(recipe, &info);
    json_t *sources = json_array();
    for (int i = 0; i < info.source_count; i++) {
        ordo_source_info s;
        ordo_recipe_source(recipe, i, &s, NULL);
        json_array_append_new(
            sources,
            json_pack("{s:s, s:f, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "name", s.name,
                      "weight", s.weight, "shards", s.shards, "bytes", (json_int_t)s.bytes,
                      "chunks", (json_int_t)s.chunks, "read", (json_int_t)s.read, "records",
                      (json_int_t)s.records, "filtered", (json_int_t)s.filtered, "skipped",
                      (json_int_t)s.skipped, "tokens_per_byte", s.tokens_per_byte));
    }
    return json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:o}", "id", ordo_recipe_id(recipe), "name",
                     info.name, "lanes", info.lanes, "global_batch", info.global_batch, "seq_len",
                     info.seq_len, "flush_every", info.flush_every, "sources", sources);
    /* "shuffle" is added by the caller's view of the recipe */
}

static void print_recipe(const ordo_recipe *recipe, int planned)
{
    ordo_recipe_info info;
    ordo_recipe_describe(recipe, &info);
    printf("recipe %s%s%s%s\n", ordo_recipe_id(recipe), info.name[0] ? " (" : "", info.name,
           info.name[0] ? ")" : "");
    printf("  lanes %d, global batch %d, seq_len %d, flush every %d steps, shuffle %s\n",
           info.lanes, info.global_batch, info.seq_len, info.flush_every,
           info.shuffle ? "on" : "off");
    for (int i = 0; i < info.source_count; i++) {
        ordo_source_info s;
        ordo_recipe_source(recipe, i, &s, NULL);
        printf("  source %-12s weight %-6g %d shards, %llu bytes", s.name, s.weight, s.shards,
               (unsigned long long)s.bytes);
        if (planned)
            printf(", %llu chunks, %llu documents, %llu empty skipped, %llu filtered out of "
                   "%llu records read, %.4f tokens/byte",
                   (unsigned long long)s.chunks, (unsigned long long)s.records,
                   (unsigned long long)s.skipped, (unsigned long long)s.filtered,
                   (unsigned long long)s.read, s.tokens_per_byte);
        printf("\n");
    }
}

/* The library's progress while indexing, as bytes done of all shards'. */
static void index_progress(uint64_t done, uint64_t total, void *context)
{
    progress_update(context, done, total, 0);
}

/* The options of both; without `db` and `steps` (recipe check) --db and
 * --steps are refused. On success *recipe is the recipe file's argument. */
static int parse(const char *command, const char *help, int argc, char **argv, const char **db,
                 const char **steps, int *json, int *quiet, const char **recipe)
{
    const cli_option all[] = {{"json", 0, .flag = json},
                              {"db", 1, .text = db},
                              {"steps", 1, .text = steps},
                              {"quiet", 0, .flag = quiet},
                              {0}};
    const cli_option check[] = {{"json", 0, .flag = json}, {0}};
    const cli_parser parser = {.command = command, .help = help, .options = db ? all : check};
    int first, rc = cli_parse(&parser, argc, argv, &first);
    if (rc != CLI_PARSED)
        return rc;
    if (argc - first != 1)
        return cli_usage_error(command, "needs exactly one recipe file");
    *recipe = argv[first];
    return CLI_PARSED;
}

/* --steps N: 1 .. ORDO_PASS_STEPS_MAX; a usage error otherwise. */
static int parse_horizon(const char *text, int64_t *steps)
{
    if (!text)
        return *steps = 10000, CLI_PARSED;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < 1 || v > ORDO_PASS_STEPS_MAX)
        return cli_usage_error("index", "--steps '%s' must be a whole number from 1 to %lld", text,
                               (long long)ORDO_PASS_STEPS_MAX);
    *steps = v;
    return CLI_PARSED;
}

/* "pass 2 at step 41, pass 3 at step 82, pass 4 at step 123, ..., pass 9 at
 * step 330": the first three next passes and the last. */
static void print_starts(const ordo_source_plan *p)
{
    int64_t shown = p->pass_count < 4 ? p->pass_count : 4;
    for (int64_t k = 2; k <= shown; k++)
        printf("%s pass %lld at step %lld", k == 2 ? ":" : ",", (long long)k,
               (long long)p->pass_start[k - 1]);
    if (p->pass_count > 5)
        printf(", ...");
    if (p->pass_count > 4)
        printf(", pass %lld at step %lld", (long long)p->pass_count, (long long)p->last_pass_start);
}

/* One line per source: how often its data repeats within the horizon;
 * every document adds its special tokens (eos, and bos when there is one). */
static void print_passes(const ordo_source_plan *plans, int count, const ordo_recipe_info *info)
{
    int specials = info->bos_id == UINT32_MAX ? 1 : 2;
    for (int i = 0; i < count; i++) {
        const ordo_source_plan *p = &plans[i];
        printf(
            "  passes of %s: %.4f tokens/byte + %d a document, %llu tokens a pass (%.1f samples)",
            p->name, p->tokens_per_byte, specials, (unsigned long long)p->tokens_per_pass,
            p->samples_per_pass);
        print_starts(p);
        printf("; %.2f passes in %lld steps", p->passes, (long long)p->steps);
        if (p->lane_pass2_last)
            printf(" (lanes start pass 2 at steps %lld to %lld)", (long long)p->lane_pass2_first,
                   (long long)p->lane_pass2_last);
        else if (p->lane_pass2_first)
            printf(" (lanes start pass 2 from step %lld, the last after step %lld)",
                   (long long)p->lane_pass2_first, (long long)p->steps);
        printf("\n");
    }
}

/* The recipe's JSON with each source's "passes" object. */
static json_t *index_json(const ordo_recipe *recipe, const ordo_source_plan *plans, int count)
{
    json_t *value = recipe_json(recipe), *sources = json_object_get(value, "sources");
    for (int i = 0; i < count; i++)
        json_object_set_new(json_array_get(sources, (size_t)i), "passes",
                            cli_view(ordo_source_plan_json(&plans[i])));
    return value;
}

/* Entry point of `ordo index`. */
int cmd_index(int argc, char **argv)
{
    const char *db = NULL, *file = NULL, *steps_text = NULL;
    int64_t steps = 0;
    int json = 0, quiet = 0;
    int rc = parse("index", index_help, argc, argv, &db, &steps_text, &json, &quiet, &file);
    if (rc == CLI_PARSED)
        rc = parse_horizon(steps_text, &steps);
    if (rc != CLI_PARSED)
        return rc;
    ordo_recipe *recipe = NULL;
    ordo_error err;
    if (ordo_recipe_load(file, &recipe, &err) != ORDO_OK)
        return cli_fail("index", &err);
    ordo_recipe_info info;
    ordo_recipe_describe(recipe, &info);
    ordo_source_plan *plans = calloc((size_t)info.source_count, sizeof *plans);
    ordo_ledger *ledger = plans ? cli_open("index", db, 0) : NULL;
    rc = ledger ? EXIT_OK : EXIT_FAILURE_;
    progress bar;
    progress_start(&bar, "index", PROGRESS_BYTES, isatty(STDERR_FILENO), quiet, progress_clock());
    if (rc == EXIT_OK && ordo_recipe_index(recipe, ledger, index_progress, &bar, &err) != ORDO_OK)
        rc = (progress_end(&bar, PROGRESS_FAILED), cli_fail("index", &err));
    else if (rc == EXIT_OK) {
        if (ordo_recipe_indexed_shards(recipe) == 0)
            bar.note = "all from the ledger";
        progress_end(&bar, PROGRESS_DONE);
    }
    if (rc == EXIT_OK && ordo_recipe_passes(recipe, steps, plans, &err) != ORDO_OK)
        rc = cli_fail("index", &err);
    if (rc == EXIT_OK && json)
        rc = cli_print_json(index_json(recipe, plans, info.source_count));
    else if (rc == EXIT_OK)
        print_recipe(recipe, 1), print_passes(plans, info.source_count, &info);
    ordo_ledger_close(ledger);
    free(plans);
    ordo_recipe_free(recipe);
    return rc;
}

/* Entry point of `ordo recipe` (one subcommand: check). */
int cmd_recipe(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return fputs(recipe_help, stdout), EXIT_OK;
    if (argc < 2 || strcmp(argv[1], "check") != 0)
        return cli_usage_error("recipe", "the subcommand is 'check' (ordo recipe check FILE)");
    const char *file = NULL;
    int json = 0;
    int rc = parse("recipe check", recipe_help, argc - 1, argv + 1, NULL, NULL, &json, NULL, &file);
    if (rc != CLI_PARSED)
        return rc;
    ordo_recipe *recipe = NULL;
    ordo_error err;
    if (ordo_recipe_load(file, &recipe, &err) != ORDO_OK)
        return cli_fail("recipe check", &err);
    rc = json ? cli_print_json(recipe_json(recipe)) : (print_recipe(recipe, 0), EXIT_OK);
    ordo_recipe_free(recipe);
    return rc;
}
