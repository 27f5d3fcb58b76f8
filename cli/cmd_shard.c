/* ordo shard: .txt and .jsonl inputs to multi-frame .jsonl.zst shards. */
#define _XOPEN_SOURCE 700 /* nftw */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "cli.h"

static const char shard_help[] =
    "usage: ordo shard --out DIR [--docs-per-frame N] [--docs-per-shard M]\n"
    "                  [--text-field NAME] INPUT...\n\n"
    "Reads .txt files (one document each) and .jsonl files (one JSON object per\n"
    "line), from the files and folders given (folders recursively, in bytewise\n"
    "path order), and writes DIR/shard-00000.jsonl.zst, ... : each zstd frame\n"
    "holds N documents as JSON lines and is independently decodable, so every\n"
    "frame is a chunk the loader can read on its own. DIR must hold no shards.\n"
    "Every JSON line must carry a string text field (empty ones are counted and\n"
    "left out); folders may hold no symbolic links or unreadable entries, and\n"
    "no file may be given twice. On any error no shard is left behind.\n\n"
    "  --out DIR             output folder (created if missing)\n"
    "  --text-field NAME     the JSON lines' text field (default \"text\")\n"
    "  --docs-per-frame N    documents per frame (default 64)\n"
    "  --docs-per-shard M    documents per shard file (default 65536)\n"
    "  --level L             zstd level (default 3)\n"
    "  -h, --help            this help\n";

typedef struct {
    char **paths;
    size_t count, capacity;
} path_list;

typedef struct {
    const char *out_dir, *text_field;
    long per_frame, per_shard;
    int level;
    char *frame;            /* JSON lines of the frame being filled */
    size_t frame_len, frame_cap;
    long frame_docs, shard_docs, shards, frames, docs, skipped;
    FILE *file;
    char path[4096], temp[4200];
} sharder;

static path_list inputs; /* nftw has no context pointer */

/* The largest document (a .txt file or a JSON line) the loader can read as
 * one chunk (256 MiB). */
#define MAX_DOC_BYTES ((uint64_t)256 << 20)

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
    (void)ftw;
    if (flag == FTW_SL || flag == FTW_SLN)
        return fprintf(stderr, "ordo shard: '%s' is a symbolic link; give its target as an "
                               "input instead\n", path), -1;
    if (flag == FTW_DNR || flag == FTW_NS)
        return fprintf(stderr, "ordo shard: cannot read '%s'\n", path), -1;
    if (flag == FTW_F && is_input(path) && !S_ISREG(st->st_mode))
        return fprintf(stderr, "ordo shard: input '%s' is not a regular file\n", path), -1;
    return flag == FTW_F && is_input(path) ? add_path(path) : 0;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts the inputs and refuses a file reached twice (by any path). */
static int no_duplicates(void)
{
    char **real = calloc(inputs.count ? inputs.count : 1, sizeof *real);
    int rc = real ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < inputs.count; i++)
        if (!(real[i] = realpath(inputs.paths[i], NULL)))
            rc = (fprintf(stderr, "ordo shard: cannot read '%s': %s\n", inputs.paths[i],
                         strerror(errno)), -1);
    for (size_t i = 0; rc == 0 && i < inputs.count; i++) {
        free(inputs.paths[i]);
        inputs.paths[i] = real[i];
        real[i] = NULL;
    }
    if (rc == 0)
        qsort(inputs.paths, inputs.count, sizeof *inputs.paths, by_path);
    for (size_t i = 1; rc == 0 && i < inputs.count; i++)
        if (strcmp(inputs.paths[i - 1], inputs.paths[i]) == 0)
            rc = (fprintf(stderr, "ordo shard: '%s' is given twice\n", inputs.paths[i]), -1);
    for (size_t i = 0; real && i < inputs.count; i++)
        free(real[i]);
    free(real);
    return rc;
}

static int collect(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0)
            return fprintf(stderr, "ordo shard: cannot read '%s': %s\n", argv[i],
                           strerror(errno)), -1;
        /* A FIFO or a device (a link to /dev/zero) is refused before any
         * shard is written; opening checks again (ordo_open_regular). */
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
            return fprintf(stderr, "ordo shard: input '%s' is not a regular file\n", argv[i]),
                   -1;
        if (S_ISDIR(st.st_mode) ? nftw(argv[i], visit, 32, FTW_PHYS) != 0
                                : (!is_input(argv[i]) ? (fprintf(stderr, "ordo shard: '%s' is "
                                                         "neither .txt nor .jsonl\n", argv[i]), 1)
                                                      : add_path(argv[i]) != 0))
            return -1;
    }
    return no_duplicates();
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

/* One JSON line: an object whose text field is a string; empty texts
 * are counted and left out. */
static int add_record(sharder *s, const char *path, const char *line, size_t len,
                      uint64_t offset)
{
    json_error_t jerr;
    json_t *doc = json_loadb(line, len, 0, &jerr);
    json_t *text = json_object_get(doc, s->text_field);
    const char *problem = !doc                   ? jerr.text
                          : !json_is_object(doc) ? "not a JSON object"
                          : !text                ? "no text field"
                          : !json_is_string(text) ? "its text field is not a string"
                                                  : NULL;
    int empty = !problem && json_string_length(text) == 0;
    json_decref(doc);
    if (problem)
        return fprintf(stderr, "ordo shard: '%s': line at byte %llu: %s%s%s%s\n", path,
                       (unsigned long long)offset, problem,
                       text || !doc ? "" : " ('", text || !doc ? "" : s->text_field,
                       text || !doc ? "" : "')"),
               -1;
    if (empty)
        return s->skipped++, 0;
    return add_line(s, line, len);
}

/* .jsonl, a line at a time. */
static int add_jsonl(sharder *s, const char *path, FILE *f)
{
    char *line = NULL;
    size_t cap = 0;
    uint64_t offset = 0;
    ssize_t n;
    int rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
        size_t stop = (size_t)n;
        while (stop > 0 && (line[stop - 1] == '\n' || line[stop - 1] == '\r' ||
                            line[stop - 1] == ' ' || line[stop - 1] == '\t'))
            stop--;
        if ((uint64_t)stop > MAX_DOC_BYTES)
            rc = (fprintf(stderr, "ordo shard: '%s': line at byte %llu is longer than %llu "
                                 "bytes\n", path, (unsigned long long)offset,
                         (unsigned long long)MAX_DOC_BYTES), -1);
        else if (stop > 0)
            rc = add_record(s, path, line, stop, offset);
        else
            s->skipped++;
        offset += (uint64_t)n;
    }
    free(line);
    return rc;
}

/* .txt: the whole file is one document. */
static int add_txt(sharder *s, const char *path, FILE *f)
{
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || (uint64_t)st.st_size > MAX_DOC_BYTES)
        return fprintf(stderr, "ordo shard: '%s' is larger than %llu bytes\n", path,
                       (unsigned long long)MAX_DOC_BYTES), -1;
    size_t size = (size_t)st.st_size;
    char *data = malloc(size + 1);
    size_t len = data ? fread(data, 1, size + 1, f) : 0;
    int rc = !data ? (fprintf(stderr, "ordo shard: out of memory\n"), -1)
             : len != size ? (fprintf(stderr, "ordo shard: '%s' changed while being read\n",
                                      path), -1)
             : len ? add_text(s, path, data, len)
                   : (s->skipped++, 0);
    free(data);
    return rc;
}

static int add_file(sharder *s, const char *path)
{
    int fd = -1;
    ordo_error err;
    if (ordo_open_regular(path, "input", &fd, &err) != ORDO_OK)
        return fprintf(stderr, "ordo shard: %s\n", err.message), -1;
    FILE *f = fdopen(fd, "rb");
    if (!f)
        return close(fd), fprintf(stderr, "ordo shard: cannot read '%s'\n", path), -1;
    size_t plen = strlen(path);
    int txt = plen > 4 && strcmp(path + plen - 4, ".txt") == 0;
    int rc = txt ? add_txt(s, path, f) : add_jsonl(s, path, f);
    if (rc == 0 && ferror(f))
        rc = (fprintf(stderr, "ordo shard: cannot read '%s'\n", path), -1);
    fclose(f);
    return rc;
}

/* On failure: the shards this call wrote go, so nothing half-made stays. */
static void remove_written(const sharder *s)
{
    char path[4200];
    for (long i = 0; i < s->shards; i++) {
        snprintf(path, sizeof path, "%s/shard-%05ld.jsonl.zst", s->out_dir, i);
        remove(path);
    }
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

/* --docs-per-frame, --docs-per-shard, --level. */
static int count_value(int key, const char *value, void *context)
{
    sharder *s = context;
    long level = s->level;
    int bad = key == 'f'   ? parse_long(value, 1 << 24, &s->per_frame)
              : key == 's' ? parse_long(value, 1L << 40, &s->per_shard)
                           : parse_long(value, 19, &level);
    s->level = (int)level;
    if (bad)
        return cli_usage_error("shard", "bad value '%s' (a positive whole number in range)",
                               value);
    return 0;
}

/* Entry point of `ordo shard`. */
int cmd_shard(int argc, char **argv)
{
    sharder s = {.per_frame = 64, .per_shard = 65536, .level = 3, .text_field = "text"};
    const cli_option options[] = {{"out", 1, .text = &s.out_dir},
                                  {"docs-per-frame", 1, .key = 'f'},
                                  {"docs-per-shard", 1, .key = 's'},
                                  {"level", 1, .key = 'l'},
                                  {"text-field", 1, .text = &s.text_field},
                                  {0}};
    const cli_parser parser = {.command = "shard", .help = shard_help, .options = options,
                               .handle = count_value, .context = &s};
    int first, rc = cli_parse(&parser, argc, argv, &first);
    if (rc != CLI_PARSED)
        return rc;
    if (!s.out_dir || first >= argc)
        return cli_usage_error("shard", "needs --out DIR and at least one INPUT");
    if (mkdir(s.out_dir, 0755) != 0 && errno != EEXIST)
        return fprintf(stderr, "ordo shard: cannot create '%s': %s\n", s.out_dir,
                       strerror(errno)), EXIT_FAILURE_;
    if (has_shards(s.out_dir))
        return fprintf(stderr, "ordo shard: '%s' already holds shards; choose an empty folder\n",
                       s.out_dir), EXIT_FAILURE_;
    rc = collect(argc - first, argv + first) == 0 ? EXIT_OK : EXIT_FAILURE_;
    if (rc == EXIT_OK && inputs.count == 0)
        rc = (fprintf(stderr, "ordo shard: no .txt or .jsonl files in the inputs\n"), EXIT_FAILURE_);
    for (size_t i = 0; rc == EXIT_OK && i < inputs.count; i++)
        rc = add_file(&s, inputs.paths[i]) == 0 ? EXIT_OK : EXIT_FAILURE_;
    if (rc == EXIT_OK)
        rc = close_shard(&s) == 0 ? EXIT_OK : EXIT_FAILURE_;
    if (rc == EXIT_OK)
        printf("%zu files, %ld documents (%ld empty skipped) -> %ld shards, %ld frames in %s\n",
               inputs.count, s.docs, s.skipped, s.shards, s.frames, s.out_dir);
    else {
        if (s.file)
            fclose(s.file), remove(s.temp);
        remove_written(&s);
    }
    for (size_t i = 0; i < inputs.count; i++)
        free(inputs.paths[i]);
    free(inputs.paths);
    free(s.frame);
    return rc;
}
