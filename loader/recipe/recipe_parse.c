/* Recipe JSON: validation, glob resolution, canonical resolved form. */
#define _DEFAULT_SOURCE /* realpath */
#include <errno.h>
#include <glob.h>
#include <jansson.h>
#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tokenizer/tokenizer.h"
#include "recipe.h"

#define RECIPE_MAX_BYTES (16u << 20)
#define MAX_SOURCES 1024

static const char *const top_keys[] = {
    "name",           "seed",     "seq_len",   "global_batch", "lanes",         "flush_every",
    "shuffle",        "schedule", "tokenizer", "sources",      "chunk_records", "estimate_records",
    "data_algorithm", "labels",   NULL};
static const char *const source_keys[] = {"name",       "paths",  "shards", "weight",
                                          "text_field", "filter", NULL};
static const char *const shard_keys[] = {"path", "sha256", "bytes", NULL};

static ordo_status check_keys(json_t *object, const char *const *allowed, const char *where,
                              ordo_error *err)
{
    const char *key;
    json_t *value;
    json_object_foreach(object, key, value)
    {
        if (allowed == top_keys && strcmp(key, "shuffle_window") == 0)
            return ordo__error(err, ORDO_INVALID,
                               "recipe: 'shuffle_window' was replaced by 'shuffle' (true or "
                               "false: a lane's samples are permuted within each flush epoch "
                               "among samples of the same source), and 'flush_every' now counts "
                               "steps; a recipe with it is of data algorithm 1, and this ordo "
                               "cuts batches with data algorithm %d",
                               ORDO__DATA_ALGORITHM);
        int known = 0;
        for (size_t i = 0; allowed[i] && !known; i++)
            known = strcmp(key, allowed[i]) == 0;
        if (!known)
            return ordo__error(err, ORDO_INVALID, "recipe: unknown key '%s' in %s", key, where);
    }
    return ORDO_OK;
}

/* An integer field in [min, max]; `fallback` < min means required. */
static ordo_status get_int(json_t *object, const char *key, long long min, long long max,
                           long long fallback, long long *out, ordo_error *err)
{
    json_t *value = json_object_get(object, key);
    if (!value) {
        if (fallback < min)
            return ordo__error(err, ORDO_INVALID, "recipe: '%s' is missing", key);
        *out = fallback;
        return ORDO_OK;
    }
    if (!json_is_integer(value))
        return ordo__error(err, ORDO_INVALID, "recipe: '%s' must be an integer", key);
    long long v = json_integer_value(value);
    if (v < min || v > max)
        return ordo__error(err, ORDO_INVALID, "recipe: '%s' (%lld) must be between %lld and %lld",
                           key, v, min, max);
    *out = v;
    return ORDO_OK;
}

/* "labels": "none" (the default: samples of seq_len tokens) or "shifted"
 * (seq_len + 1 tokens, so that labels are the input shifted by one). */
static ordo_status parse_labels(json_t *root, ordo_recipe *r, ordo_error *err)
{
    json_t *labels = json_object_get(root, "labels");
    const char *text = labels ? json_string_value(labels) : "none";
    if (!text || (strcmp(text, "none") != 0 && strcmp(text, "shifted") != 0))
        return ordo__error(err, ORDO_INVALID,
                           "recipe: 'labels' must be \"none\" (samples of seq_len tokens) or "
                           "\"shifted\" (seq_len + 1 tokens: labels are the input shifted by "
                           "one)");
    r->labels_shifted = strcmp(text, "shifted") == 0;
    r->sample_len = r->seq_len + r->labels_shifted;
    return ORDO_OK;
}

static ordo_status parse_numbers(json_t *root, ordo_recipe *r, ordo_error *err)
{
    long long v[8];
    ordo_status status = ORDO_OK;
    if (status == ORDO_OK)
        status = get_int(root, "seed", 0, LLONG_MAX, -1, &v[0], err);
    if (status == ORDO_OK)
        status = get_int(root, "seq_len", 2, 1 << 20, -1, &v[1], err);
    if (status == ORDO_OK)
        status = get_int(root, "global_batch", 1, 1 << 24, -1, &v[2], err);
    if (status == ORDO_OK)
        status = get_int(root, "lanes", 1, 65536, -1, &v[3], err);
    if (status == ORDO_OK)
        status = get_int(root, "flush_every", 1, 1 << 24, 16, &v[4], err);
    json_t *shuffle = json_object_get(root, "shuffle");
    if (status == ORDO_OK && shuffle && !json_is_boolean(shuffle))
        status = ordo__error(err, ORDO_INVALID, "recipe: 'shuffle' must be true or false");
    v[5] = !shuffle || json_is_true(shuffle);
    long long algorithm = 0;
    if (status == ORDO_OK)
        status = get_int(root, "data_algorithm", 1, 1 << 24, ORDO__DATA_ALGORITHM, &algorithm, err);
    if (status == ORDO_OK && algorithm != ORDO__DATA_ALGORITHM)
        status = ordo__error(err, ORDO_INVALID,
                             "recipe: it is of data algorithm %lld, and this ordo cuts batches "
                             "with data algorithm %d: its batches cannot be reproduced here",
                             algorithm, ORDO__DATA_ALGORITHM);
    if (status == ORDO_OK)
        status = get_int(root, "chunk_records", 1, 1 << 24, 256, &v[6], err);
    if (status == ORDO_OK)
        status = get_int(root, "estimate_records", 1, 1 << 24, 1024, &v[7], err);
    if (status != ORDO_OK)
        return status;
    r->seed = (uint64_t)v[0];
    r->seq_len = (int)v[1], r->global_batch = (int)v[2], r->lanes = (int)v[3];
    r->flush_every = (int)v[4], r->shuffle = (int)v[5];
    r->chunk_records = (int)v[6], r->estimate_records = (int)v[7];
    status = parse_labels(root, r, err);
    if (status != ORDO_OK)
        return status;
    if (r->global_batch % r->lanes != 0)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: global_batch (%d) must be divisible by lanes (%d)",
                           r->global_batch, r->lanes);
    return ORDO_OK;
}

/* Joins the data root and a relative path; absolute paths stay. */
char *ordo__shard_path(const ordo_recipe *recipe, const ordo__shard *shard)
{
    if (shard->path[0] == '/' || !recipe->data_root)
        return ordo__strdup(shard->path);
    size_t n = strlen(recipe->data_root) + strlen(shard->path) + 2;
    char *full = malloc(n);
    if (full)
        snprintf(full, n, "%s/%s", recipe->data_root, shard->path);
    return full;
}

static ordo_status add_shard(ordo__source *source, const char *path, ordo_error *err)
{
    for (uint32_t i = 0; i < source->shard_count; i++)
        if (strcmp(source->shards[i].path, path) == 0)
            return ordo__error(err, ORDO_INVALID, "recipe: source '%s' lists shard '%s' twice",
                               source->name, path);
    ordo__shard *grown = realloc(source->shards, (source->shard_count + 1) * sizeof *grown);
    if (!grown)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a recipe");
    source->shards = grown;
    ordo__shard *shard = &grown[source->shard_count];
    memset(shard, 0, sizeof *shard);
    if (ordo__format_of(path, &shard->format) != 0)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: shard '%s' of source '%s' has an unsupported format "
                           "(expected %s)",
                           path, source->name, ordo__format_list);
    if (!(shard->path = ordo__strdup(path)))
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a recipe");
    source->shard_count++;
    return ORDO_OK;
}

static int compare_paths(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Escapes glob metacharacters of the data root so only the pattern globs. */
static char *escaped_root(const char *root)
{
    char *out = malloc(2 * strlen(root) + 2);
    char *p = out;
    for (const char *c = root; out && *c; c++) {
        if (strchr("*?[]\\", *c))
            *p++ = '\\';
        *p++ = *c;
    }
    if (out)
        *p = '\0';
    return out;
}

static ordo_status expand_glob(ordo_recipe *r, ordo__source *source, const char *pattern,
                               ordo_error *err)
{
    char *root = pattern[0] == '/' ? ordo__strdup("") : escaped_root(r->data_root);
    size_t n = (root ? strlen(root) : 0) + strlen(pattern) + 2;
    char *full = root ? malloc(n) : NULL;
    if (!full) {
        free(root);
        return ordo__error(err, ORDO_NOMEM, "out of memory expanding a glob");
    }
    snprintf(full, n, "%s%s%s", root, pattern[0] == '/' ? "" : "/", pattern);
    size_t prefix = pattern[0] == '/' ? 0 : strlen(r->data_root) + 1;
    glob_t matches;
    int rc = glob(full, GLOB_NOSORT, NULL, &matches);
    free(root);
    free(full);
    if (rc == GLOB_NOMATCH)
        return ordo__error(err, ORDO_INVALID, "recipe: source '%s': path '%s' matches no file",
                           source->name, pattern);
    if (rc != 0)
        return ordo__error(err, ORDO_IO, "recipe: source '%s': cannot expand '%s'", source->name,
                           pattern);
    /* Bytewise order, never the locale's. */
    qsort(matches.gl_pathv, matches.gl_pathc, sizeof *matches.gl_pathv, compare_paths);
    ordo_status status = ORDO_OK;
    for (size_t i = 0; status == ORDO_OK && i < matches.gl_pathc; i++) {
        struct stat st;
        const char *match = matches.gl_pathv[i];
        if (stat(match, &st) != 0 || !S_ISREG(st.st_mode))
            status =
                ordo__error(err, ORDO_INVALID, "recipe: source '%s': '%s' is not a regular file",
                            source->name, match + prefix);
        else
            status = add_shard(source, match + prefix, err);
    }
    globfree(&matches);
    return status;
}

static ordo_status hash_shards(ordo_recipe *r, ordo__source *source, ordo_error *err)
{
    for (uint32_t i = 0; i < source->shard_count; i++) {
        ordo_status status = ordo__shard_resolve(r, &source->shards[i], 0, err);
        if (status != ORDO_OK)
            return status;
    }
    return ORDO_OK;
}

static ordo_status parse_paths(ordo_recipe *r, ordo__source *source, json_t *paths, ordo_error *err)
{
    if (!json_is_array(paths) || json_array_size(paths) == 0)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: source '%s': 'paths' must be a non-empty array of globs",
                           source->name);
    size_t i;
    json_t *pattern;
    json_array_foreach(paths, i, pattern)
    {
        if (!json_is_string(pattern) || json_string_length(pattern) == 0)
            return ordo__error(err, ORDO_INVALID,
                               "recipe: source '%s': paths[%zu] must be a non-empty string",
                               source->name, i);
        ordo_status status = expand_glob(r, source, json_string_value(pattern), err);
        if (status != ORDO_OK)
            return status;
    }
    return hash_shards(r, source, err);
}

static ordo_status parse_shards(ordo_recipe *r, ordo__source *source, json_t *shards,
                                unsigned flags, ordo_error *err)
{
    if (!json_is_array(shards) || json_array_size(shards) == 0)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: source '%s': 'shards' must be a non-empty "
                           "array",
                           source->name);
    size_t i;
    json_t *entry;
    json_array_foreach(shards, i, entry)
    {
        const char *path = json_string_value(json_object_get(entry, "path"));
        const char *hex = json_string_value(json_object_get(entry, "sha256"));
        json_t *bytes = json_object_get(entry, "bytes");
        ordo_error hex_err;
        if (!json_is_object(entry) || check_keys(entry, shard_keys, "a shard", err) != ORDO_OK ||
            !path || !*path || !hex || !json_is_integer(bytes) || json_integer_value(bytes) < 0)
            return ordo__error(err, ORDO_INVALID,
                               "recipe: source '%s': shards[%zu] needs path, sha256 and bytes",
                               source->name, i);
        ordo_status status = add_shard(source, path, err);
        if (status != ORDO_OK)
            return status;
        ordo__shard *shard = &source->shards[source->shard_count - 1];
        if (ordo_digest_from_hex(hex, shard->sha256, &hex_err) != ORDO_OK)
            return ordo__error(err, ORDO_INVALID, "recipe: shard '%s': sha256: %s", path,
                               hex_err.message);
        shard->size = (uint64_t)json_integer_value(bytes);
        if ((flags & ORDO_RECIPE_VERIFY_SHARDS) &&
            (status = ordo__shard_resolve(r, shard, 1, err)) != ORDO_OK)
            return status;
    }
    return ORDO_OK;
}

static ordo_status parse_source(ordo_recipe *r, json_t *entry, size_t index, unsigned flags,
                                int scheduled, ordo_error *err)
{
    char where[64];
    snprintf(where, sizeof where, "sources[%zu]", index);
    if (!json_is_object(entry))
        return ordo__error(err, ORDO_INVALID, "recipe: %s must be an object", where);
    ordo_status status = check_keys(entry, source_keys, where, err);
    if (status != ORDO_OK)
        return status;
    ordo__source *source = &r->sources[index];
    const char *name = json_string_value(json_object_get(entry, "name"));
    const char *field = json_string_value(json_object_get(entry, "text_field"));
    json_t *weight = json_object_get(entry, "weight");
    if (!name || !*name)
        return ordo__error(err, ORDO_INVALID, "recipe: %s needs a non-empty 'name'", where);
    for (size_t i = 0; i < index; i++)
        if (strcmp(r->sources[i].name, name) == 0)
            return ordo__error(err, ORDO_INVALID, "recipe: source name '%s' is used twice", name);
    if (!(source->name = ordo__strdup(name)) ||
        !(source->text_field = ordo__strdup(field ? field : "text")))
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a recipe");
    if (json_object_get(entry, "text_field") && (!field || !ordo__dotted_path(field)))
        return ordo__error(err, ORDO_INVALID,
                           "recipe: source '%s': 'text_field' must be a non-empty string, a "
                           "field name or a dotted path of them (\"metadata.text\")",
                           name);
    json_t *filter = json_object_get(entry, "filter");
    if (filter) {
        ordo_status compiled = ordo__filter_compile(filter, name, &source->filter, err);
        if (compiled != ORDO_OK)
            return compiled;
        json_t *canonical = ordo__filter_canonical(source->filter);
        source->filter_key =
            canonical ? json_dumps(canonical, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_decref(canonical);
        if (!source->filter_key)
            return ordo__error(err, ORDO_NOMEM, "out of memory reading a recipe");
    }
    source->weight = json_number_value(weight);
    if (scheduled && weight)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: source '%s' has a 'weight' and the recipe a 'schedule': "
                           "give its weights in the schedule's entries only",
                           name);
    if (!scheduled && (!json_is_number(weight) || !isfinite(source->weight) || source->weight <= 0))
        return ordo__error(err, ORDO_INVALID,
                           "recipe: source '%s': 'weight' must be a positive finite number "
                           "(or the recipe a 'schedule')",
                           name);
    json_t *paths = json_object_get(entry, "paths"), *shards = json_object_get(entry, "shards");
    if ((paths != NULL) == (shards != NULL))
        return ordo__error(err, ORDO_INVALID,
                           "recipe: source '%s' needs either 'paths' (globs) or 'shards'", name);
    return paths ? parse_paths(r, source, paths, err) : parse_shards(r, source, shards, flags, err);
}

static ordo_status parse_sources(json_t *root, ordo_recipe *r, unsigned flags, ordo_error *err)
{
    json_t *sources = json_object_get(root, "sources");
    if (!json_is_array(sources) || json_array_size(sources) == 0)
        return ordo__error(err, ORDO_INVALID, "recipe: 'sources' must be a non-empty array");
    if (json_array_size(sources) > MAX_SOURCES)
        return ordo__error(err, ORDO_INVALID, "recipe: more than %d sources", MAX_SOURCES);
    r->sources = calloc(json_array_size(sources), sizeof *r->sources);
    if (!r->sources)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a recipe");
    size_t i;
    json_t *entry;
    json_array_foreach(sources, i, entry)
    {
        r->source_count = (uint32_t)i + 1;
        ordo_status status =
            parse_source(r, entry, i, flags, json_object_get(root, "schedule") != NULL, err);
        if (status != ORDO_OK)
            return status;
    }
    double total = 0;
    for (uint32_t s = 0; s < r->source_count; s++)
        total += r->sources[s].weight;
    if (!isfinite(total))
        return ordo__error(err, ORDO_INVALID,
                           "recipe: the sources' weights add up to more "
                           "than the largest number (%g); scale them down",
                           DBL_MAX);
    return ORDO_OK;
}

static json_t *canonical_source(const ordo__source *source, int scheduled)
{
    json_t *shards = json_array();
    for (uint32_t i = 0; shards && i < source->shard_count; i++) {
        char hex[ORDO_DIGEST_HEX_SIZE];
        ordo_digest_to_hex(source->shards[i].sha256, hex);
        json_array_append_new(shards,
                              json_pack("{s:s, s:s, s:I}", "path", source->shards[i].path, "sha256",
                                        hex, "bytes", (json_int_t)source->shards[i].size));
    }
    json_t *out = json_pack("{s:s, s:s, s:o}", "name", source->name, "text_field",
                            source->text_field, "shards", shards);
    if (out && !scheduled)
        json_object_set_new(out, "weight", json_real(source->weight));
    if (out && source->filter)
        json_object_set_new(out, "filter", ordo__filter_canonical(source->filter));
    return out;
}

static ordo_status build_canonical(ordo_recipe *r, ordo_error *err)
{
    json_t *sources = json_array();
    for (uint32_t i = 0; sources && i < r->source_count; i++)
        json_array_append_new(sources, canonical_source(&r->sources[i], r->scheduled));
    json_t *root = json_pack(
        "{s:i, s:s, s:I, s:i, s:i, s:i, s:i, s:b, s:i, s:i, s:o, s:o}", "data_algorithm",
        ORDO__DATA_ALGORITHM, "name", r->name, "seed", (json_int_t)r->seed, "seq_len", r->seq_len,
        "global_batch", r->global_batch, "lanes", r->lanes, "flush_every", r->flush_every,
        "shuffle", r->shuffle, "chunk_records", r->chunk_records, "estimate_records",
        r->estimate_records, "tokenizer", ordo__tokenizer_canonical(r), "sources", sources);
    /* "none" is left out: a recipe without labels keeps its id */
    if (root && r->labels_shifted)
        json_object_set_new(root, "labels", json_string("shifted"));
    json_t *schedule = ordo__mixture_canonical(r);
    if (root && schedule)
        json_object_set_new(root, "schedule", schedule);
    r->canonical = root ? json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(root);
    if (!r->canonical)
        return ordo__error(err, ORDO_NOMEM, "out of memory writing a recipe");
    unsigned char digest[ORDO_DIGEST_SIZE];
    ordo_sha256(r->canonical, strlen(r->canonical), digest);
    ordo_digest_to_hex(digest, r->id);
    return ORDO_OK;
}

static ordo_status parse_root(json_t *root, ordo_recipe *r, unsigned flags, ordo_error *err)
{
    if (!json_is_object(root))
        return ordo__error(err, ORDO_INVALID, "recipe JSON must be an object");
    ordo_status status = check_keys(root, top_keys, "the recipe", err);
    json_t *name = json_object_get(root, "name");
    if (status == ORDO_OK && name && !json_is_string(name))
        status = ordo__error(err, ORDO_INVALID, "recipe: 'name' must be a string");
    if (status == ORDO_OK && !(r->name = ordo__strdup(name ? json_string_value(name) : "")))
        status = ordo__error(err, ORDO_NOMEM, "out of memory reading a recipe");
    if (status == ORDO_OK)
        status = parse_numbers(root, r, err);
    if (status == ORDO_OK)
        status = ordo__tokenizer_parse(root, r, err);
    if (status == ORDO_OK)
        status = parse_sources(root, r, flags, err);
    if (status == ORDO_OK)
        status = ordo__mixture_parse(r, root, err);
    if (status == ORDO_OK)
        status = build_canonical(r, err);
    return status;
}

/* Parses and validates recipe JSON; see ordo.h. */
ordo_status ordo_recipe_parse(const char *json, size_t len, const char *data_root, unsigned flags,
                              ordo_recipe **out, ordo_error *err)
{
    return ordo_recipe_parse_with(json, len, data_root, flags, NULL, out, err);
}

/* Parses recipe JSON, taking shard digests the ledger knows; see ordo.h. */
ordo_status ordo_recipe_parse_with(const char *json, size_t len, const char *data_root,
                                   unsigned flags, ordo_ledger *ledger, ordo_recipe **out,
                                   ordo_error *err)
{
    *out = NULL;
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return ordo__error(err, ORDO_INVALID,
                           "recipe JSON is malformed at line %d, column %d (byte %d): %s",
                           jerr.line, jerr.column, jerr.position, jerr.text);
    ordo_recipe *r = calloc(1, sizeof *r);
    ordo_status status = ORDO_OK;
    if (!r || !(r->data_root = ordo__strdup(data_root ? data_root : ".")))
        status = ordo__error(err, ORDO_NOMEM, "out of memory reading a recipe");
    if (status == ORDO_OK) {
        r->bos_id = ORDO__NO_TOKEN, r->eos_id = ORDO_BYTES_EOT; /* the bytes tokenizer's */
        r->known = ledger;
        status = parse_root(root, r, flags, err);
        r->known = NULL;
    }
    json_decref(root);
    if (status != ORDO_OK) {
        ordo_recipe_free(r);
        return status;
    }
    *out = r;
    return ordo__ok(err);
}

/* Reads a recipe file; paths resolve in its folder. */
ordo_status ordo_recipe_load(const char *path, ordo_recipe **out, ordo_error *err)
{
    return ordo_recipe_load_with(path, NULL, out, err);
}

/* Reads a recipe file, taking shard digests the ledger knows; see ordo.h. */
ordo_status ordo_recipe_load_with(const char *path, ordo_ledger *ledger, ordo_recipe **out,
                                  ordo_error *err)
{
    *out = NULL;
    char *text = NULL, *real = NULL;
    size_t size = 0;
    int pipe = 0;
    /* A recipe is small and read whole: one from a pipe (<(...)) is read
     * up to the same limit, and its paths resolve in the current folder. */
    ordo_status status = ordo__read_file_or_pipe(path, RECIPE_MAX_BYTES, &text, &size, &pipe, err);
    if (status == ORDO_OK && pipe && !(real = realpath(".", NULL)))
        status = ordo__error(err, ORDO_IO, "cannot resolve the current folder");
    else if (status == ORDO_OK && !pipe && !(real = realpath(path, NULL)))
        status = ordo__error(err, ORDO_IO, "cannot resolve '%s'", path);
    char *slash = status == ORDO_OK && !pipe ? strrchr(real, '/') : NULL;
    if (slash == real && slash)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    if (status == ORDO_OK)
        status = ordo_recipe_parse_with(text, size, real, 0, ledger, out, err);
    if (status != ORDO_OK && err && status == ORDO_INVALID &&
        strncmp(err->message, "recipe", 6) == 0) {
        char message[2 * ORDO_ERROR_MESSAGE_SIZE + 4096]; /* truncated by the copy */
        snprintf(message, sizeof message, "%.4000s: %s", path, err->message);
        ordo__copy(err->message, sizeof err->message, message);
    }
    free(text);
    free(real);
    return status;
}

/* Frees a recipe and its plan. */
void ordo_recipe_free(ordo_recipe *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; r->sources && i < r->source_count; i++) {
        ordo__source *source = &r->sources[i];
        for (uint32_t j = 0; j < source->shard_count; j++) {
            free(source->shards[j].path);
            free(source->shards[j].chunks);
            free(source->shards[j].aux);
        }
        ordo__filter_free(source->filter);
        free(source->filter_key);
        free(source->shards);
        free(source->chunks);
        free(source->name);
        free(source->text_field);
    }
    ordo__mixture_free(r);
    free(r->sources);
    ordo__tokenizer_release(r);
    free(r->data_root);
    free(r->name);
    free(r->canonical);
    free(r);
}

/* Accessors. */
const char *ordo_recipe_id(const ordo_recipe *r)
{
    return r->id;
}
const char *ordo_recipe_canonical(const ordo_recipe *r)
{
    return r->canonical;
}

/* The folder shard paths resolve in; owned by the recipe. */
const char *ordo_recipe_data_root(const ordo_recipe *r)
{
    return r->data_root;
}

const char *ordo_recipe_source_name(const ordo_recipe *r, int index)
{
    return index >= 0 && (uint32_t)index < r->source_count ? r->sources[index].name : NULL;
}

/* The numbers that fix the data. */
void ordo_recipe_describe(const ordo_recipe *r, ordo_recipe_info *info)
{
    info->name = r->name;
    info->seed = r->seed;
    info->seq_len = r->seq_len;
    info->sample_len = r->sample_len;
    info->labels_shifted = r->labels_shifted;
    info->global_batch = r->global_batch;
    info->lanes = r->lanes;
    info->flush_every = r->flush_every;
    info->shuffle = r->shuffle;
    info->source_count = (int)r->source_count;
    info->vocab_size = r->tokenizer ? (int)ordo_tokenizer_vocab_size(r->tokenizer) : 258;
    info->eot_id = ordo__eot_id(r);
    info->bos_id = ordo__bos_id(r);
    info->pad_id = ordo__pad_id(r);
}

/* What a source holds. */
ordo_status ordo_recipe_source(const ordo_recipe *r, int index, ordo_source_info *info,
                               ordo_error *err)
{
    if (index < 0 || (uint32_t)index >= r->source_count)
        return ordo__error(err, ORDO_INVALID, "source %d does not exist (%u sources)", index,
                           r->source_count);
    const ordo__source *src = &r->sources[index];
    memset(info, 0, sizeof *info);
    info->name = src->name;
    info->weight = src->weight;
    info->shards = (int)src->shard_count;
    for (uint32_t i = 0; i < src->shard_count; i++) {
        info->bytes += src->shards[i].size;
        info->chunks += src->shards[i].chunk_count;
        info->records += src->shards[i].records;
        info->skipped += src->shards[i].skipped;
        info->filtered += src->shards[i].counts.filtered;
    }
    info->read = info->records + info->skipped + info->filtered;
    info->sample_records = src->sample_records;
    info->tokens_per_byte =
        src->sample_bytes ? (double)src->sample_tokens / (double)src->sample_bytes : 0;
    return ORDO_OK;
}
