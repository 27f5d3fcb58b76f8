/* ordo tokens: a file's token ids (or count) under a tiktoken encoding or
 * a Hugging Face tokenizer.json. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The help, around the encodings' names (from the library's table). */
static const char tokens_help_head[] =
    "usage: ordo tokens (--encoding NAME [--path RANKS] | --tokenizer FILE.json)\n"
    "                   [--count] [--jsonl] FILE\n"
    "       ordo tokens (--encoding NAME [--path RANKS] | --tokenizer FILE.json)\n"
    "                   [--count [--json]] [--text-field F] [--filter FILE] SHARD\n\n"
    "Prints FILE's token ids (space-separated) under a Hugging Face\n"
    "tokenizer.json whose model is BPE, or a tiktoken-compatible encoding: ";
static const char tokens_help[] =
    ". With\n"
    "--jsonl every line is a JSON object whose \"text\" is tokenized on its own,\n"
    "one output line per input line. FILE '-' reads standard input. Invalid\n"
    "UTF-8 is read as U+FFFD per maximal ill-formed subsequence.\n\n"
    "A SHARD (a file ending in .jsonl, .jsonl.zst, .jsonl.gz, .json.gz or\n"
    ".parquet) is read as a recipe's source reads it: the text at --text-field\n"
    "of every record, kept when non-empty and passing --filter; one line of ids\n"
    "per document, or with --count its documents and tokens (no bos or eos\n"
    "counted) and how many records were read, filtered out and empty.\n\n"
    "  --encoding NAME  the encoding\n"
    "  --path RANKS     its .tiktoken rank file (default: $ORDO_VOCAB/NAME.tiktoken,\n"
    "                   else vocab/NAME.tiktoken; gpt2 uses r50k_base's file)\n"
    "  --tokenizer FILE.json  a Hugging Face tokenizer.json instead of --encoding\n"
    "                   (special added tokens are never produced from the text)\n"
    "  --count          print the number of tokens instead of the ids\n"
    "  --jsonl          one JSON object per line, its \"text\" tokenized\n"
    "  --text-field F   a SHARD's text field, a name or dotted path (default text)\n"
    "  --filter FILE    a SHARD's filter: a JSON file holding a source's \"filter\"\n"
    "  --json           with --count on a SHARD: the counts as JSON\n"
    "  -h, --help       this help\n";

static const char *default_ranks(const char *encoding, char *buffer, size_t size)
{
    const char *dir = getenv("ORDO_VOCAB");
    snprintf(buffer, size, "%s/%s.tiktoken", dir && *dir ? dir : "vocab",
             strcmp(encoding, "gpt2") == 0 ? "r50k_base" : encoding);
    return buffer;
}

/* The help, with the encodings' names, into `buffer`. */
static const char *help_text(char *buffer, size_t size)
{
    char names[256];
    ordo_tokenizer_encodings(names, sizeof names);
    snprintf(buffer, size, "%s%s%s", tokens_help_head, names, tokens_help);
    return buffer;
}

/* Opens the tokenizer (a tokenizer.json, or an encoding); a default rank
 * file that cannot be read says how to name another. */
static int open_tokenizer(const char *encoding, const char *path, const char *json,
                          ordo_tokenizer **t)
{
    char buffer[4096];
    ordo_error err;
    if (json)
        return ordo_tokenizer_open_json(json, t, &err) == ORDO_OK ? EXIT_OK
                                                                  : cli_fail("tokens", &err);
    const char *ranks = path ? path : default_ranks(encoding, buffer, sizeof buffer);
    ordo_status status = ordo_tokenizer_open(encoding, ranks, t, &err);
    if (status == ORDO_OK)
        return EXIT_OK;
    if (status == ORDO_IO && !path)
        fprintf(stderr,
                "ordo tokens: %s\n(the default rank file of %s; give its .tiktoken "
                "file with --path RANKS or a folder of them with $ORDO_VOCAB)\n",
                err.message, encoding);
    else
        cli_fail("tokens", &err);
    return EXIT_FAILURE_;
}

static char *slurp(FILE *in, size_t *len)
{
    size_t cap = 1 << 16, n = 0, got;
    char *data = malloc(cap);
    while (data && (got = fread(data + n, 1, cap - n, in)) > 0) {
        n += got;
        if (n == cap) {
            char *grown = realloc(data, cap *= 2);
            if (!grown) {
                free(data);
                return NULL;
            }
            data = grown;
        }
    }
    if (data && ferror(in)) {
        free(data);
        return NULL;
    }
    *len = n;
    return data;
}

/* Prints a tokenizer's refusal of the text at `where` ("'x.jsonl' line 2"). */
static int refused(const char *where, const ordo_error *err)
{
    fprintf(stderr, "ordo tokens: %s: %s\n", where, err->message);
    return EXIT_FAILURE_;
}

static int print_ids(const ordo_tokenizer *t, const char *text, size_t len, int count,
                     const char *where, FILE *out)
{
    uint32_t *ids = NULL;
    size_t n = 0;
    ordo_error err;
    if (ordo_tokenizer_encode(t, text, len, &ids, &n, &err) != ORDO_OK)
        return refused(where, &err);
    if (count)
        fprintf(out, "%zu", n);
    for (size_t i = 0; !count && i < n; i++)
        fprintf(out, i ? " %u" : "%u", ids[i]);
    fputc('\n', out);
    ordo_free(ids);
    return EXIT_OK;
}

static int each_line(const ordo_tokenizer *t, const char *file, const char *data, size_t len,
                     int count)
{
    size_t start = 0, line = 0;
    while (start < len) {
        const char *nl = memchr(data + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - data) : len;
        line++;
        json_error_t jerr;
        json_t *doc = json_loadb(data + start, end - start, JSON_ALLOW_NUL, &jerr);
        json_t *text = json_object_get(doc, "text");
        if (!json_is_string(text)) {
            fprintf(stderr, "ordo tokens: line %zu: %s\n", line,
                    doc ? "needs a string field \"text\"" : jerr.text);
            json_decref(doc);
            return EXIT_FAILURE_;
        }
        char where[1100];
        snprintf(where, sizeof where, "'%.1000s' line %zu", file, line);
        int rc =
            print_ids(t, json_string_value(text), json_string_length(text), count, where, stdout);
        json_decref(doc);
        if (rc != EXIT_OK)
            return rc;
        start = end + 1;
    }
    return EXIT_OK;
}

/* A shard's documents, tokenized one by one. */
typedef struct {
    const ordo_tokenizer *t;
    int count;
    uint64_t documents, tokens;
    ordo_status status;
    ordo_error err;
    uint64_t record; /* the one refused */
} shard_reader;

static int shard_doc(void *context, const char *text, size_t len, uint64_t record)
{
    shard_reader *r = context;
    uint32_t *ids = NULL;
    size_t n = 0;
    r->status = ordo_tokenizer_encode(r->t, text, len, &ids, &n, &r->err);
    r->record = record;
    if (r->status != ORDO_OK)
        return 1;
    r->documents++;
    r->tokens += n;
    for (size_t i = 0; !r->count && i < n; i++)
        printf(i ? " %u" : "%u", ids[i]);
    if (!r->count)
        putchar('\n');
    ordo_free(ids);
    return 0;
}

static int is_shard(const char *file)
{
    const char *ends[] = {".jsonl", ".jsonl.zst", ".jsonl.gz", ".json.gz", ".parquet"};
    size_t n = strlen(file);
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        size_t m = strlen(ends[i]);
        if (n > m && strcmp(file + n - m, ends[i]) == 0)
            return 1;
    }
    return 0;
}

static int print_counts(const shard_reader *r, const ordo_read_counts *c, int as_json)
{
    if (as_json)
        return cli_print_json(json_pack("{s:I, s:I, s:{s:I, s:I, s:I, s:I}}", "documents",
                                        (json_int_t)r->documents, "tokens", (json_int_t)r->tokens,
                                        "records", "read", (json_int_t)c->read, "passed",
                                        (json_int_t)c->passed, "filtered", (json_int_t)c->filtered,
                                        "empty", (json_int_t)c->empty));
    printf("%llu documents, %llu tokens (%llu records read: %llu passed, %llu filtered out, "
           "%llu empty)\n",
           (unsigned long long)r->documents, (unsigned long long)r->tokens,
           (unsigned long long)c->read, (unsigned long long)c->passed,
           (unsigned long long)c->filtered, (unsigned long long)c->empty);
    return EXIT_OK;
}

/* A shard read as a recipe's source reads it. */
static int tokens_of_shard(const ordo_tokenizer *t, const char *file, const char *field,
                           const char *filter_path, int count, int as_json)
{
    char *filter = NULL;
    if (filter_path) {
        FILE *f = fopen(filter_path, "rb");
        size_t len = 0;
        filter = f ? slurp(f, &len) : NULL;
        if (f)
            fclose(f);
        char *text = filter ? realloc(filter, len + 1) : NULL;
        if (!text) {
            free(filter);
            fprintf(stderr, "ordo tokens: cannot read the filter '%s'\n", filter_path);
            return EXIT_FAILURE_;
        }
        filter = text;
        filter[len] = 0;
    }
    shard_reader r = {t, count, 0, 0, ORDO_OK, {0}, 0};
    ordo_read_counts counts;
    ordo_error err;
    ordo_status status = ordo_shard_read(file, field, filter, shard_doc, &r, &counts, &err);
    free(filter);
    if (status == ORDO_OK && r.status != ORDO_OK) {
        char where[1100];
        snprintf(where, sizeof where, "'%.1000s' record %llu", file, (unsigned long long)r.record);
        return refused(where, &r.err);
    }
    if (status != ORDO_OK && filter_path && strncmp(err.message, "filter", 6) == 0) {
        char where[1100]; /* the library names the filter's place, this its file */
        snprintf(where, sizeof where, "filter file '%.1000s'", filter_path);
        return refused(where, &err);
    }
    if (status != ORDO_OK)
        return cli_fail("tokens", &err);
    return count ? print_counts(&r, &counts, as_json) : EXIT_OK;
}

/* Entry point of `ordo tokens`. */
int cmd_tokens(int argc, char **argv)
{
    const char *encoding = NULL, *path = NULL, *json = NULL;
    const char *field = NULL, *filter = NULL;
    int count = 0, jsonl = 0, as_json = 0;
    const cli_option options[] = {{"encoding", 1, .text = &encoding},
                                  {"path", 1, .text = &path},
                                  {"tokenizer", 1, .text = &json},
                                  {"count", 0, .flag = &count},
                                  {"jsonl", 0, .flag = &jsonl},
                                  {"text-field", 1, .text = &field},
                                  {"filter", 1, .text = &filter},
                                  {"json", 0, .flag = &as_json},
                                  {0}};
    char help[sizeof tokens_help_head + 256 + sizeof tokens_help];
    const cli_parser parser = {
        .command = "tokens", .help = help_text(help, sizeof help), .options = options};
    int first, rc = cli_parse(&parser, argc, argv, &first);
    if (rc != CLI_PARSED)
        return rc;
    if (encoding && json)
        return cli_usage_error("tokens", "--encoding and --tokenizer exclude each other: give one");
    if (path && !encoding)
        return cli_usage_error("tokens", "--path RANKS goes with --encoding NAME");
    if ((!encoding && !json) || argc - first != 1)
        return cli_usage_error("tokens",
                               "needs --encoding NAME or --tokenizer FILE.json, and one FILE");
    const char *file = argv[first];
    int shard = !jsonl && is_shard(file);
    if ((field || filter) && !shard)
        return cli_usage_error("tokens",
                               "--text-field and --filter read a SHARD (.jsonl, "
                               ".jsonl.zst, .jsonl.gz, .json.gz or .parquet), not --jsonl "
                               "or '%s'",
                               file);
    if (as_json && !(shard && count))
        return cli_usage_error("tokens", "--json goes with --count on a SHARD");
    ordo_tokenizer *t = NULL;
    if (open_tokenizer(encoding, path, json, &t) != EXIT_OK)
        return EXIT_FAILURE_;
    if (shard) {
        rc = tokens_of_shard(t, file, field, filter, count, as_json);
        ordo_tokenizer_close(t);
        return rc;
    }
    FILE *in = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
    size_t len = 0;
    char *data = in ? slurp(in, &len) : NULL;
    if (in && in != stdin)
        fclose(in);
    rc = EXIT_OK;
    if (!data)
        rc = (fprintf(stderr, "ordo tokens: cannot read '%s'\n", file), EXIT_FAILURE_);
    else if (jsonl)
        rc = each_line(t, file, data, len, count);
    else {
        char where[1100];
        snprintf(where, sizeof where, "'%.1000s'", file);
        rc = print_ids(t, data, len, count, where, stdout);
    }
    free(data);
    ordo_tokenizer_close(t);
    return rc;
}
