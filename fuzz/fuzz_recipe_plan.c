/* Fuzzes opening a recipe from its plan document (ordo_recipe_open_plan,
 * what a rank reads from GET /api/recipes/{id}/plan): a real plan of a
 * small corpus is made once (indexed into a ledger, then
 * ordo_recipe_plan_export), then each input is either read as it is, or,
 * when it is a JSON object, laid over that plan (its fields replace the
 * plan's; the fields of its "source" and "shard" members replace those of
 * the first source and of that source's first shard), so the chunk tables,
 * the estimates and the recipe are what the fuzzer reaches. A plan that
 * opens must be of the recipe it names, have hashed nothing, and give a
 * loader that reads its first steps or stops with an error. */
#define _XOPEN_SOURCE 700 /* nftw */
#define _DEFAULT_SOURCE   /* mkdtemp */
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ordo.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static char dir[64];
static json_t *base;

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        abort();
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void cleanup(void)
{
    json_decref(base);
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Two shards of one source, 8 records a chunk, and a second source. */
static void write_corpus(void)
{
    char path[256], line[128];
    snprintf(path, sizeof path, "%s/data", dir);
    if (mkdir(path, 0700) != 0)
        abort();
    for (int f = 0; f < 3; f++) {
        snprintf(path, sizeof path, "%s/data/%c-%d.jsonl", dir, f < 2 ? 'a' : 'b', f);
        FILE *out = fopen(path, "w");
        for (int i = 0; out && i < 40; i++) {
            snprintf(line, sizeof line, "{\"text\": \"doc %d of file %d, %.*s\"}\n", i, f,
                     5 + (i * 7) % 40, "lorem ipsum dolor sit amet consectetur adipiscing");
            fputs(line, out);
        }
        if (!out || fclose(out) != 0)
            abort();
    }
    snprintf(path, sizeof path, "%s/r.json", dir);
    write_text(path, "{\"seed\": 3, \"seq_len\": 8, \"global_batch\": 4, \"lanes\": 2, "
                     "\"flush_every\": 2, \"chunk_records\": 8, \"tokenizer\": {\"kind\": "
                     "\"bytes\"}, \"sources\": [{\"name\": \"a\", \"paths\": "
                     "[\"data/a-*.jsonl\"], \"weight\": 1}, {\"name\": \"b\", \"paths\": "
                     "[\"data/b-*.jsonl\"], \"weight\": 1}]}");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    snprintf(dir, sizeof dir, "/tmp/ordo-fuzz-recipe-plan-XXXXXX");
    if (!mkdtemp(dir))
        abort();
    atexit(cleanup);
    write_corpus();
    char path[256];
    ordo_error err;
    ordo_ledger *ledger = NULL;
    ordo_recipe *r = NULL;
    char *plan = NULL;
    snprintf(path, sizeof path, "%s/l.db", dir);
    if (ordo_ledger_open(path, 0, &ledger, &err) != ORDO_OK)
        abort();
    snprintf(path, sizeof path, "%s/r.json", dir);
    if (ordo_recipe_load_with(path, ledger, &r, &err) != ORDO_OK ||
        ordo_recipe_index(r, ledger, NULL, NULL, &err) != ORDO_OK ||
        ordo_recipe_plan_export(ledger, ordo_recipe_id(r), &plan, NULL, &err) != ORDO_OK) {
        fprintf(stderr, "fuzz_recipe_plan: setup failed: %s\n", err.message);
        abort();
    }
    base = json_loads(plan, 0, NULL);
    ordo_free(plan);
    ordo_recipe_free(r);
    ordo_ledger_close(ledger);
    return base ? 0 : (abort(), 0);
}

/* Replaces the fields of `target` with those of `over` (an object). */
static void lay_over(json_t *target, json_t *over)
{
    const char *key;
    json_t *value;
    if (json_is_object(target) && json_is_object(over))
        json_object_foreach(over, key, value) json_object_set(target, key, value);
}

/* The input laid over the plan, as text (the caller's, free); NULL when
 * the input is not a JSON object. */
static char *overlaid(const unsigned char *data, size_t size)
{
    json_t *in = json_loadb((const char *)data, size, 0, NULL);
    if (!json_is_object(in)) {
        json_decref(in);
        return NULL;
    }
    json_t *doc = json_deep_copy(base);
    json_t *source = json_array_get(json_object_get(doc, "sources"), 0);
    lay_over(source, json_object_get(in, "source"));
    lay_over(json_array_get(json_object_get(source, "shards"), 0), json_object_get(in, "shard"));
    json_object_del(in, "source");
    json_object_del(in, "shard");
    lay_over(doc, in);
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    json_decref(in);
    return text;
}

/* A recipe opened from a plan reads its first steps or stops cleanly. */
static void use(const ordo_recipe *r, const char *named)
{
    int hashed = -1;
    ordo_recipe_hashed(r, &hashed, NULL);
    if (hashed != 0 || (named && strcmp(named, ordo_recipe_id(r)) != 0))
        abort();
    ordo_loader_options o = {.rank = 0, .world_size = 1, .read_workers = 1, .tokenize_workers = 1};
    ordo_loader *l = NULL;
    ordo_error err;
    ordo_batch b;
    if (ordo_loader_open(r, &o, &l, &err) == ORDO_OK)
        for (int s = 0; s < 3 && ordo_loader_next(l, &b, &err) == ORDO_OK; s++)
            ;
    ordo_loader_close(l);
}

static void open_one(const char *text, size_t size)
{
    ordo_recipe *r = NULL;
    ordo_error err;
    if (ordo_recipe_open_plan(text, size, NULL, dir, &r, &err) == ORDO_OK) {
        json_t *doc = json_loadb(text, size, 0, NULL);
        use(r, json_string_value(json_object_get(doc, "recipe_id")));
        json_decref(doc);
    }
    ordo_recipe_free(r);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    open_one((const char *)data, size);
    char *text = overlaid(data, size);
    if (text)
        open_one(text, strlen(text));
    free(text);
    return 0;
}
