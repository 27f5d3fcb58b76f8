/* ordo shard: .txt and .jsonl inputs to multi-frame .jsonl.zst shards. */
#define _XOPEN_SOURCE 700 /* nftw */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "cli.h"

static const char shard_help[] =
    "usage: ordo shard --out DIR [--docs-per-frame N] [--docs-per-shard M] INPUT...\n\n"
    "Reads .txt files (one document each) and .jsonl files (one JSON object per\n"
    "line), from the files and folders given (folders recursively, in bytewise\n"
    "path order), and writes DIR/shard-00000.jsonl.zst, ... : each zstd frame\n"
    "holds N documents as JSON lines and is independently decodable, so every\n"
    "frame is a chunk the loader can read on its own. DIR must hold no shards.\n\n"
    "  --out DIR             output folder (created if missing)\n"
    "  --docs-per-frame N    documents per frame (default 64)\n"
    "  --docs-per-shard M    documents per shard file (default 65536)\n"
    "  --level L             zstd level (default 3)\n"
    "  -h, --help            this help\n";

typedef struct {
    char **paths;
    size_t count, capacity;
} path_list;

typedef struct {
    const char *out_dir;
    long per_frame, per_shard;
    int level;
    char *frame;            /* JSON lines of the frame being filled */
    size_t frame_len, frame_cap;
    long frame_docs, shard_docs, shards, frames, docs, skipped;
    FILE *file;
    char path[4096], temp[4200];
} sharder;

static path_list inputs; /* nftw has no context pointer */

static int is_input(const char *path)
{
    size_t n = strlen(path);
    return (n > 4 && strcmp(path + n - 4, ".txt") == 0) ||
           (n > 6 && strcmp(path + n - 6, ".jsonl") == 0);
}

static int add_path(const char *path)
{
    if (inputs.count == inputs.capacity) {
        size_t cap = inputs.capacity ? 2 * inputs.capacity : 64;
        char **grown = realloc(inputs.paths, cap * sizeof *grown);
        if (!grown)
            return -1;
        inputs.paths = grown;
        inputs.capacity = cap;
    }
    return (inputs.paths[inputs.count++] = strdup(path)) ? 0 : -1;
}

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    return flag == FTW_F && is_input(path) ? add_path(path) : 0;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int collect(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0)
            return fprintf(stderr, "ordo shard: cannot read '%s': %s\n", argv[i],
                           strerror(errno)), -1;
        if (S_ISDIR(st.st_mode) ? nftw(argv[i], visit, 32, FTW_PHYS) != 0
                                : (!is_input(argv[i]) ? (fprintf(stderr, "ordo shard: '%s' is "
                                                         "neither .txt nor .jsonl\n", argv[i]), 1)
                                                      : add_path(argv[i]) != 0))
            return -1;
    }
    qsort(inputs.paths, inputs.count, sizeof *inputs.paths, by_path);
    return 0;
}

static int finish_frame(sharder *s)
{
    if (s->frame_docs == 0)
        return 0;
    size_t bound = ZSTD_compressBound(s->frame_len);
    char *out = malloc(bound);
    size_t n = out ? ZSTD_compress(out, bound, s->frame, s->frame_len, s->level) : 0;
    int failed = !out || ZSTD_isError(n) || fwrite(out, 1, n, s->file) != n;
    free(out);
    if (failed)
        return fprintf(stderr, "ordo shard: cannot write '%s'\n", s->temp), -1;
    s->frames++;
    s->frame_len = 0;
    s->frame_docs = 0;
    return 0;
}

static int close_shard(sharder *s)
{
    if (!s->file)
        return 0;
    int rc = finish_frame(s);
    if (fclose(s->file) != 0 || rc != 0 || rename(s->temp, s->path) != 0)
        return fprintf(stderr, "ordo shard: cannot write '%s'\n", s->path), -1;
    s->file = NULL;
    s->shard_docs = 0;
    s->shards++;
    return 0;
}

static int add_line(sharder *s, const char *line, size_t len)
{
    if (!s->file) {
        snprintf(s->path, sizeof s->path, "%s/shard-%05ld.jsonl.zst", s->out_dir, s->shards);
        snprintf(s->temp, sizeof s->temp, "%s.partial", s->path);
        if (!(s->file = fopen(s->temp, "wb")))
            return fprintf(stderr, "ordo shard: cannot create '%s': %s\n", s->temp,
                           strerror(errno)), -1;
    }
    if (s->frame_len + len + 1 > s->frame_cap) {
        size_t cap = s->frame_cap ? s->frame_cap : 1 << 16;
        while (cap < s->frame_len + len + 1)
            cap *= 2;
        char *grown = realloc(s->frame, cap);
        if (!grown)
            return fprintf(stderr, "ordo shard: out of memory\n"), -1;
        s->frame = grown;
        s->frame_cap = cap;
    }
    memcpy(s->frame + s->frame_len, line, len);
    s->frame[s->frame_len + len] = '\n';
    s->frame_len += len + 1;
    s->docs++;
    if (++s->frame_docs == s->per_frame && finish_frame(s) != 0)
        return -1;
    if (++s->shard_docs == s->per_shard)
        return close_shard(s);
    return 0;
}

static int add_text(sharder *s, const char *path, const char *data, size_t len)
{
    json_t *text = json_stringn(data, len);
    if (!text)
        return fprintf(stderr, "ordo shard: '%s' is not valid UTF-8 text\n", path), -1;
    json_t *doc = json_pack("{s:o}", "text", text);
    char *line = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    int rc = line ? add_line(s, line, strlen(line)) : -1;
    free(line);
    return rc;
}

static int add_jsonl(sharder *s, const char *path, const char *data, size_t len)
{
    size_t start = 0;
    while (start < len) {
        const char *nl = memchr(data + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - data) : len, stop = end;
        while (stop > start && (data[stop - 1] == '\r' || data[stop - 1] == ' '))
            stop--;
        if (stop > start) {
            json_error_t jerr;
            json_t *doc = json_loadb(data + start, stop - start, 0, &jerr);
            int ok = json_is_object(doc);
            json_decref(doc);
            if (!ok)
                return fprintf(stderr, "ordo shard: '%s': line at byte %zu is not a JSON object%s%s\n",
                               path, start, doc ? "" : ": ", doc ? "" : jerr.text), -1;
            if (add_line(s, data + start, stop - start) != 0)
                return -1;
        } else {
            s->skipped++;
        }
        start = end + 1;
    }
    return 0;
}

static int add_file(sharder *s, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fprintf(stderr, "ordo shard: cannot open '%s': %s\n", path, strerror(errno)), -1;
    char *data = NULL;
    size_t len = 0, cap = 0, n;
    do {
        if (len + 65536 > cap) {
            cap = cap ? 2 * cap : 1 << 17;
            char *grown = realloc(data, cap);
            if (!grown) {
                free(data);
                fclose(f);
                return fprintf(stderr, "ordo shard: out of memory\n"), -1;
            }
            data = grown;
        }
        len += (n = fread(data + len, 1, 65536, f));
    } while (n > 0);
    int failed = ferror(f);
    fclose(f);
    size_t plen = strlen(path);
    int rc = failed ? (fprintf(stderr, "ordo shard: cannot read '%s'\n", path), -1)
             : plen > 4 && strcmp(path + plen - 4, ".txt") == 0
                 ? (len ? add_text(s, path, data, len) : (s->skipped++, 0))
                 : add_jsonl(s, path, data, len);
    free(data);
    return rc;
}

static int has_shards(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        found |= strncmp(e->d_name, "shard-", 6) == 0;
    if (d)
        closedir(d);
    return found;
}

static int parse_long(const char *text, long max, long *out)
{
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < 1 || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Entry point of `ordo shard`. */
int cmd_shard(int argc, char **argv)
{
    static const struct option options[] = {{"out", required_argument, NULL, 'o'},
                                            {"docs-per-frame", required_argument, NULL, 'f'},
                                            {"docs-per-shard", required_argument, NULL, 's'},
                                            {"level", required_argument, NULL, 'l'},
                                            {"help", no_argument, NULL, 'h'},
                                            {0, 0, 0, 0}};
    sharder s = {.per_frame = 64, .per_shard = 65536, .level = 3};
    long level = 3;
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        int bad = 0;
        if (opt == 'o')
            s.out_dir = optarg;
        else if (opt == 'f')
            bad = parse_long(optarg, 1 << 24, &s.per_frame);
        else if (opt == 's')
            bad = parse_long(optarg, 1L << 40, &s.per_shard);
        else if (opt == 'l')
            bad = parse_long(optarg, 19, &level), s.level = (int)level;
        else if (opt == 'h')
            return fputs(shard_help, stdout), EXIT_OK;
        else
            return cli_option_error("shard", argv);
        if (bad)
            return cli_usage_error("shard", "bad value '%s' (a positive whole number in range)",
                                   optarg);
    }
    if (!s.out_dir || optind >= argc)
        return cli_usage_error("shard", "needs --out DIR and at least one INPUT");
    if (mkdir(s.out_dir, 0755) != 0 && errno != EEXIST)
        return fprintf(stderr, "ordo shard: cannot create '%s': %s\n", s.out_dir,
                       strerror(errno)), EXIT_FAILURE_;
    if (has_shards(s.out_dir))
        return fprintf(stderr, "ordo shard: '%s' already holds shards; choose an empty folder\n",
                       s.out_dir), EXIT_FAILURE_;
    int rc = collect(argc - optind, argv + optind) == 0 ? EXIT_OK : EXIT_FAILURE_;
    if (rc == EXIT_OK && inputs.count == 0)
        rc = (fprintf(stderr, "ordo shard: no .txt or .jsonl files in the inputs\n"), EXIT_FAILURE_);
    for (size_t i = 0; rc == EXIT_OK && i < inputs.count; i++)
        rc = add_file(&s, inputs.paths[i]) == 0 ? EXIT_OK : EXIT_FAILURE_;
    if (rc == EXIT_OK)
        rc = close_shard(&s) == 0 ? EXIT_OK : EXIT_FAILURE_;
    if (rc == EXIT_OK)
        printf("%zu files, %ld documents (%ld empty skipped) -> %ld shards, %ld frames in %s\n",
               inputs.count, s.docs, s.skipped, s.shards, s.frames, s.out_dir);
    else if (s.file)
        fclose(s.file), remove(s.temp);
    for (size_t i = 0; i < inputs.count; i++)
        free(inputs.paths[i]);
    free(inputs.paths);
    free(s.frame);
    return rc;
}
