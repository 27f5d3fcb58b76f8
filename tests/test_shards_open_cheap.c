/* Opening a recipe whose shards the ledger indexed hashes no shard whole
 * (docs/reliability.md, "Opening indexed recipes, chunk mismatches,
 * pipes"): the digest comes from the ledger while a file keeps its size
 * and modification time, and the content is checked chunk by chunk as it is
 * read. A changed shard is still caught: another size at open, the same
 * size at the first changed chunk read. */
#define _DEFAULT_SOURCE /* realpath */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "corpus.h"
#include "fixtures.h"
#include "http.h"
#include "process.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})
/* A line of a chunk the resume below first reads after its first step (so
 * after it recorded its segment); the test checks that it is so. */
#define CHANGED_LINE 120

static struct stat stat_of(const char *path)
{
    struct stat st;
    ASSERT(stat(path, &st) == 0);
    return st;
}

/* Changes one letter of line `line` (0-based) of a file in place: the size
 * stays; with `keep_time` the modification time stays too. */
static void change_line(const char *path, int line, int keep_time)
{
    struct stat before = stat_of(path);
    size_t size = 0;
    char *text = test_read_file(path, &size);
    ASSERT(text != NULL);
    char *p = text;
    for (int l = 0; l < line; l++) {
        p = strchr(p, '\n');
        ASSERT(p != NULL);
        p++;
    }
    char *colon = strchr(p, ':'); /* past the id: inside the text */
    ASSERT(colon != NULL);
    while (*colon < 'a' || *colon > 'y')
        colon++;
    (*colon)++;
    test_write_file(path, text, size);
    free(text);
    if (keep_time) {
        struct timespec times[2] = {before.st_atim, before.st_mtim};
        ASSERT(utimensat(AT_FDCWD, path, times, 0) == 0);
    }
    ASSERT(stat_of(path).st_size == before.st_size);
}

static void hashed(const ordo_recipe *r, int shards, uint64_t bytes)
{
    int got_shards = -1;
    uint64_t got_bytes = 0;
    ordo_recipe_hashed(r, &got_shards, &got_bytes);
    if (got_shards != shards || got_bytes != bytes)
        test_fail(__FILE__, __LINE__, "hashed %d shards (%llu bytes), expected %d (%llu)",
                  got_shards, (unsigned long long)got_bytes, shards, (unsigned long long)bytes);
}

/* A recipe over the .jsonl files of data/, 8 records a chunk; returns its path. */
static const char *chunked_recipe(int lanes, int global_batch)
{
    char text[512];
    int n = snprintf(text, sizeof text,
                     "{\"seed\": 2, \"seq_len\": 16, \"global_batch\": %d, \"lanes\": %d, "
                     "\"flush_every\": 2, \"shuffle\": false, \"chunk_records\": 8, "
                     "\"tokenizer\": {\"kind\": \"bytes\"}, \"sources\": [{\"name\": \"a\", "
                     "\"paths\": [\"data/*.jsonl\"], \"weight\": 1}]}",
                     global_batch, lanes);
    test_write_file(test_path("r.json"), text, (size_t)n);
    return test_path("r.json");
}

static ordo_recipe *open_resolved(ordo_ledger *ledger, const char *canonical, ordo_error *err)
{
    ordo_recipe *r = NULL;
    ordo_status status = ordo_recipe_parse_with(canonical, strlen(canonical), test_path(""),
                                                ORDO_RECIPE_VERIFY_SHARDS, ledger, &r, err);
    if (status == ORDO_OK && (status = ordo_recipe_index(r, ledger, NULL, NULL, err)) != ORDO_OK)
        ordo_recipe_free(r), r = NULL;
    return status == ORDO_OK ? r : NULL;
}

/* Steps read until the loader stops (at most `limit`); *err says why. */
static int read_until_stopped(const ordo_recipe *r, int limit, ordo_error *err)
{
    ordo_loader_options o = {.rank = 0, .world_size = 1, .read_workers = 1, .tokenize_workers = 1};
    ordo_loader *l = NULL;
    ASSERT_OK(ordo_loader_open(r, &o, &l, err), err);
    int steps = 0;
    ordo_batch b;
    while (steps < limit && ordo_loader_next(l, &b, err) == ORDO_OK)
        steps++;
    ordo_loader_close(l);
    return steps;
}

TEST(indexed_recipe_opens_without_hashing_its_shards)
{
    corpus_jsonl("data", "doc", 3, 120, 20, 300, 41);
    const char *path = chunked_recipe(4, 8);
    uint64_t total = 0;
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "data/doc-%d.jsonl", i);
        total += (uint64_t)stat_of(test_path(name)).st_size;
    }
    ordo_ledger *ledger = fixture_open("l.db");
    ordo_error err;
    ordo_recipe *first = NULL, *r = NULL;
    ASSERT_OK(ordo_recipe_load_with(path, ledger, &first, &err), &err);
    ASSERT_OK(ordo_recipe_index(first, ledger, NULL, NULL, &err), &err);
    hashed(first, 3, total); /* nothing known yet: every shard hashed once */
    /* The same recipe file again: every digest from the ledger, same id. */
    ASSERT_OK(ordo_recipe_load_with(path, ledger, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, ledger, NULL, NULL, &err), &err);
    hashed(r, 0, 0);
    ASSERT_EQ_INT(ordo_recipe_indexed_shards(r), 0);
    ASSERT_EQ_STR(ordo_recipe_id(r), ordo_recipe_id(first));
    ordo_recipe_free(r);
    /* The resolved recipe a resume reads: nothing hashed either. */
    const char *canonical = ordo_recipe_canonical(first);
    ASSERT((r = open_resolved(ledger, canonical, &err)) != NULL);
    hashed(r, 0, 0);
    ASSERT_EQ_STR(ordo_recipe_id(r), ordo_recipe_id(first));
    ordo_recipe_free(r);
    /* Without a ledger (as every open was before): the whole corpus. */
    ASSERT((r = open_resolved(NULL, canonical, &err)) != NULL);
    hashed(r, 3, total);
    ordo_recipe_free(r);
    ordo_recipe_free(first);
    ordo_ledger_close(ledger);
}

TEST(changed_shard_is_caught_without_hashing_the_corpus)
{
    corpus_jsonl("data", "doc", 2, 120, 20, 300, 43);
    const char *path = chunked_recipe(2, 4);
    const char *shard = test_path("data/doc-1.jsonl");
    ordo_ledger *ledger = fixture_open("l.db");
    ordo_error err;
    ordo_recipe *first = NULL, *r = NULL;
    ASSERT_OK(ordo_recipe_load_with(path, ledger, &first, &err), &err);
    ASSERT_OK(ordo_recipe_index(first, ledger, NULL, NULL, &err), &err);
    char *canonical = strdup(ordo_recipe_canonical(first));
    size_t size = 0;
    char *original = test_read_file(shard, &size);
    struct stat recorded = stat_of(shard);
    /* Another size: refused at open, naming the shard and both sizes. */
    char *longer = malloc(size + 1);
    memcpy(longer, original, size);
    longer[size] = '\n';
    test_write_file(shard, longer, size + 1);
    ASSERT(open_resolved(ledger, canonical, &err) == NULL);
    ASSERT_EQ_INT(err.status, ORDO_CONFLICT);
    ASSERT_CONTAINS(err.message, "doc-1.jsonl' changed since it was recorded");
    char sizes[96];
    snprintf(sizes, sizeof sizes, "%zu bytes, was %zu", size + 1, size);
    ASSERT_CONTAINS(err.message, sizes);
    /* The same size at another time: hashed (that shard only), refused
     * naming both SHA-256. */
    test_write_file(shard, original, size);
    change_line(shard, 70, 0);
    struct timespec later[2] = {recorded.st_atim, recorded.st_mtim};
    later[1].tv_sec += 1; /* file times are coarse: never the recorded one by chance */
    ASSERT(utimensat(AT_FDCWD, shard, later, 0) == 0);
    ASSERT(open_resolved(ledger, canonical, &err) == NULL);
    ASSERT_EQ_INT(err.status, ORDO_CONFLICT);
    ASSERT_CONTAINS(err.message, "SHA-256 was ");
    ASSERT_CONTAINS(err.message, ", is ");
    /* The same size and time: opens without hashing, and reading stops at
     * the changed chunk (line 70 is in chunk 70 / 8 = 8) naming both. */
    test_write_file(shard, original, size);
    struct timespec times[2] = {recorded.st_atim, recorded.st_mtim};
    ASSERT(utimensat(AT_FDCWD, shard, times, 0) == 0);
    change_line(shard, 70, 1);
    ASSERT((r = open_resolved(ledger, canonical, &err)) != NULL);
    hashed(r, 0, 0);
    int steps = read_until_stopped(r, 10000, &err);
    ASSERT(steps < 10000);
    ASSERT_EQ_INT(err.status, ORDO_CONFLICT);
    ASSERT_CONTAINS(err.message, "doc-1.jsonl' changed since it was indexed: chunk 8 ");
    ASSERT_CONTAINS(err.message, "had SHA-256 ");
    ASSERT_CONTAINS(err.message, ", now ");
    ordo_recipe_free(r);
    /* A recipe file opened over it gets the recorded digest (the id the
     * data was indexed under) and is stopped the same way. */
    ASSERT_OK(ordo_recipe_load_with(path, ledger, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, ledger, NULL, NULL, &err), &err);
    hashed(r, 0, 0);
    ASSERT_EQ_STR(ordo_recipe_id(r), ordo_recipe_id(first));
    ASSERT(read_until_stopped(r, 10000, &err) == steps);
    ASSERT_CONTAINS(err.message, "chunk 8 ");
    ordo_recipe_free(r);
    free(longer);
    free(original);
    free(canonical);
    ordo_recipe_free(first);
    ordo_ledger_close(ledger);
}

/* A resume stopped by a changed chunk after it recorded its segment (it
 * read the chunk after its first step) records a chunk_mismatch event
 * (shown by ordo show and the API); once the shard is back, a resume from
 * the same checkpoint replaces the crashed segment and sees the data the
 * run would have seen. */
TEST(resume_stopped_by_a_changed_chunk_records_it_and_resumes_again)
{
    corpus_jsonl("data", "doc", 2, 400, 20, 200, 47);
    const char *recipe = chunked_recipe(8, 16);
    char db[1024];
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "base", "--world-size", "2", "--steps",
                   "30", "--checkpoint-every", "10", "--quiet"),
                 0));
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "whole", "--world-size", "2", "--steps",
                   "150", "--quiet"),
                 0));
    const char *shard = test_path("data/doc-1.jsonl");
    size_t size = 0;
    char *original = test_read_file(shard, &size);
    struct stat recorded = stat_of(shard);
    change_line(shard, CHANGED_LINE, 1);
    cli_result r = run_ordo(
        NULL, A("resume", "base", "--db", db, "--world-size", "4", "--steps", "150", "--quiet"));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "doc-1.jsonl' changed since it was indexed: chunk ");
    cli_result_free(&r);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM segments WHERE run_id = "
                                  "(SELECT id FROM runs WHERE name = 'base')"),
                  2);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM events WHERE kind = 'chunk_mismatch' "
                                  "AND json_extract(detail, '$.shard') LIKE '%doc-1.jsonl' AND "
                                  "length(json_extract(detail, '$.indexed_sha256')) = 64 AND "
                                  "length(json_extract(detail, '$.read_sha256')) = 64"),
                  1);
    char *shown = ordo_ok(A("show", "base", "--db", db), 0);
    ASSERT_CONTAINS(shown, "chunk_mismatch");
    ASSERT_CONTAINS(shown, "indexed_sha256");
    free(shown);
    test_server s;
    server_up(&s, db, NULL);
    http_result got = http(&s, "GET", "/api/runs/base", NULL, NULL);
    ASSERT_EQ_INT(got.status, 200);
    ASSERT_CONTAINS(got.body, "\"kind\":\"chunk_mismatch\"");
    http_free(&got);
    server_down(&s);
    /* The shard back as it was: the same resume goes through. */
    test_write_file(shard, original, size);
    struct timespec times[2] = {recorded.st_atim, recorded.st_mtim};
    ASSERT(utimensat(AT_FDCWD, shard, times, 0) == 0);
    free(ordo_ok(A("resume", "base", "--db", db, "--world-size", "4", "--steps", "150", "--quiet"),
                 0));
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM segments WHERE run_id = "
                                  "(SELECT id FROM runs WHERE name = 'base')"),
                  2);
    free(ordo_ok(A("compare", "base", "whole", "--db", db), 0));
    free(original);
}

/* An ordo command over `path` that must end at once (well inside the
 * deadline) with exit 1 and a message holding `needle`. */
static void refused_at_once(const char *const *args, const char *needle)
{
    watched_run run = run_ordo_watched(NULL, args, 60);
    if (run.result.code != 1 || !run.result.err || !strstr(run.result.err, needle) ||
        run.seconds > 30)
        test_fail(__FILE__, __LINE__, "'%s %s': exit %d after %.1f s, stderr: %s", args[0], args[1],
                  run.result.code, run.seconds, run.result.err ? run.result.err : "");
    cli_result_free(&run.result);
}

TEST(manifest_and_shard_inputs_refuse_fifos_and_devices)
{
    char db[1024], out[1024], fifo[1024], zero[1024], walked[1024];
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    snprintf(out, sizeof out, "%s", test_path("shards"));
    snprintf(fifo, sizeof fifo, "%s", test_path("in.jsonl"));
    snprintf(zero, sizeof zero, "%s", test_path("zero.jsonl"));
    snprintf(walked, sizeof walked, "%s", test_path("raw"));
    ASSERT(mkfifo(fifo, 0600) == 0);
    ASSERT(symlink("/dev/zero", zero) == 0);
    refused_at_once(A("shard", "--out", out, fifo), "input '");
    refused_at_once(A("shard", "--out", out, fifo), "in.jsonl' is not a regular file");
    refused_at_once(A("shard", "--out", out, zero), "zero.jsonl' is not a regular file");
    /* one found in a folder it walks, too */
    ASSERT(mkdir(walked, 0700) == 0);
    ASSERT(mkfifo(test_path("raw/inner.jsonl"), 0600) == 0);
    refused_at_once(A("shard", "--out", out, walked), "inner.jsonl' is not a regular file");
    refused_at_once(A("resume", "--manifest", fifo, "--steps", "5", "--db", db), "manifest '");
    refused_at_once(A("resume", "--manifest", fifo, "--steps", "5", "--db", db),
                    "in.jsonl' is not a regular file");
    refused_at_once(A("resume", "--manifest", zero, "--steps", "5", "--db", db),
                    "zero.jsonl' is not a regular file");
}

/* Writes `text` (`len` bytes; with `forever`, over and over until the
 * reader goes) into the FIFO `path` from a child process; returns its pid.
 * The child's open waits for the reader, so nothing depends on timing. */
static pid_t write_into(const char *path, const char *text, size_t len, int forever)
{
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        signal(SIGPIPE, SIG_IGN);
        int fd = open(path, O_WRONLY);
        int ok = fd >= 0;
        do {
            for (size_t done = 0; ok && done < len;) {
                ssize_t n = write(fd, text + done, len - done);
                ok = n > 0;
                done += ok ? (size_t)n : 0;
            }
        } while (ok && forever);
        _exit(fd >= 0 ? 0 : 1);
    }
    return pid;
}

TEST(recipe_from_a_pipe_is_read_whole_and_bounded)
{
    corpus_jsonl("data", "doc", 2, 40, 20, 100, 53);
    const char *file = chunked_recipe(4, 8);
    char *text = test_read_file(file, &(size_t){0});
    ASSERT(chdir(test_path("")) == 0); /* a piped recipe's paths resolve here */
    char *expected = ordo_ok(A("recipe", "check", file), 0);
    ASSERT(mkfifo("pipe", 0600) == 0);
    pid_t writer = write_into("pipe", text, strlen(text), 0);
    char *got = ordo_ok(A("recipe", "check", "pipe"), 0);
    ASSERT(waitpid(writer, NULL, 0) == writer);
    ASSERT_EQ_STR(got, expected); /* the same id and shards */
    free(got);
    /* ordo run <(cat r.json): an unnamed pipe as /dev/fd/N; the run records
     * the current folder as its data root */
    int ends[2];
    ASSERT(pipe(ends) == 0);
    ASSERT(write(ends[1], text, strlen(text)) == (ssize_t)strlen(text));
    close(ends[1]);
    char dev[64];
    snprintf(dev, sizeof dev, "/dev/fd/%d", ends[0]);
    free(ordo_ok(A("run", dev, "--db", "l.db", "--name", "piped", "--world-size", "1", "--steps",
                   "2", "--quiet"),
                 0));
    close(ends[0]);
    char *root = realpath(".", NULL);
    char sql[1200];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM runs WHERE name = 'piped' AND "
             "data_root = '%s'",
             root);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), sql), 1);
    free(root);
    /* A pipe that never ends is read up to the recipe limit, then refused. */
    char block[65536];
    memset(block, ' ', sizeof block);
    writer = write_into("pipe", block, sizeof block, 1);
    cli_result r = run_ordo(NULL, A("recipe", "check", "pipe"));
    ASSERT(waitpid(writer, NULL, 0) == writer);
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "'pipe' is larger than 16777216 bytes");
    cli_result_free(&r);
    /* A device is still refused at once. */
    ASSERT(symlink("/dev/zero", "zero.json") == 0);
    refused_at_once(A("recipe", "check", "zero.json"),
                    "'zero.json' is neither a regular file nor a pipe");
    free(expected);
    free(text);
}
