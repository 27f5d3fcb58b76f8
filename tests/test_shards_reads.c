/* Reading shards: only regular files, chunk digests checked as chunks are
 * read, memory bounded per lane, and bad records named by line and byte. */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>
#include <zstd.h>

#include "corpus.h"
#include "fixtures.h"
#include "process.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static char db[1024];
static char recipe[1024];

/* One zstd source of 400 short documents, 4 lanes, a run "base" of 10
 * steps checkpointed every 5. */
static void small_run(void)
{
    corpus_jsonl("raw", "doc", 2, 200, 40, 120, 7);
    free(ordo_ok(
        A("shard", "--out", test_path("shards"), "--docs-per-frame", "10", test_path("raw")), 0));
    snprintf(recipe, sizeof recipe, "%s",
             corpus_recipe("recipe.json", 4, 8, 32, 2, 0,
                           "[{\"name\": \"a\", \"paths\": [\"shards/*.jsonl.zst\"], "
                           "\"weight\": 1}]"));
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "base", "--world-size", "2", "--steps",
                   "10", "--checkpoint-every", "5", "--quiet"),
                 0));
}

/* A resume over a shard that is no longer a regular file ends at once. */
static void expect_resume_refused(const char *kind)
{
    watched_run run = run_ordo_watched(
        NULL, A("resume", "base", "--db", db, "--world-size", "2", "--steps", "20"), 30);
    if (run.result.code != 1 || !strstr(run.result.err, "shard-00000.jsonl.zst") ||
        !strstr(run.result.err, "is not a regular file") || run.seconds > 20)
        test_fail(__FILE__, __LINE__, "%s: exit %d after %.1f s, stderr: %s", kind, run.result.code,
                  run.seconds, run.result.err ? run.result.err : "");
    cli_result_free(&run.result);
}

TEST(resume_refuses_shards_that_are_not_regular_files)
{
    small_run();
    const char *shard = test_path("shards/shard-00000.jsonl.zst");
    char moved[1024];
    snprintf(moved, sizeof moved, "%s", test_path("moved.zst"));
    ASSERT(rename(shard, moved) == 0);
    ASSERT(mkfifo(shard, 0644) == 0);
    expect_resume_refused("FIFO");
    ASSERT(unlink(shard) == 0);
    ASSERT(symlink("/dev/zero", shard) == 0);
    expect_resume_refused("symlink to /dev/zero");
    ASSERT(unlink(shard) == 0);
    /* The same refusals on the way in: index and run. */
    ASSERT(mkfifo(shard, 0644) == 0);
    watched_run run = run_ordo_watched(NULL, A("index", recipe, "--db", db), 30);
    ASSERT_EQ_INT(run.result.code, 1);
    ASSERT_CONTAINS(run.result.err, "not a regular file");
    cli_result_free(&run.result);
    ASSERT(unlink(shard) == 0);
    /* Put back, the resume runs. */
    ASSERT(rename(moved, shard) == 0);
    free(ordo_ok(A("resume", "base", "--db", db, "--world-size", "2", "--steps", "20", "--quiet"),
                 0));
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM steps"), 20);
}

static cli_result index_one(const char *glob)
{
    char sources[256];
    snprintf(sources, sizeof sources, "[{\"name\": \"a\", \"paths\": [\"%s\"], \"weight\": 1}]",
             glob);
    return run_ordo(NULL, A("index", corpus_recipe("recipe.json", 4, 8, 32, 2, 0, sources), "--db",
                            test_path("l.db")));
}

/* Appends one zstd frame holding `text` to `f`. */
static void put_frame(FILE *f, const char *text)
{
    size_t cap = ZSTD_compressBound(strlen(text));
    char *frame = malloc(cap);
    size_t n = ZSTD_compress(frame, cap, text, strlen(text), 1);
    ASSERT(!ZSTD_isError(n));
    ASSERT(fwrite(frame, 1, n, f) == n);
    free(frame);
}

TEST(bad_json_record_is_named_by_line_and_byte)
{
    /* Plain .jsonl: 300 good lines (the second chunk starts at line 257),
     * then a bad one at line 301. */
    mkdir(test_path("data"), 0755);
    FILE *f = fopen(test_path("data/a.jsonl"), "w");
    ASSERT(f != NULL);
    long at = 0;
    for (int i = 0; i < 300; i++)
        at += fprintf(f, "{\"text\": \"document %d\"}\n", i);
    fprintf(f, "{\"text\": \"broken\"\n{\"text\": \"after\"}\n");
    fclose(f);
    cli_result r = index_one("data/a.jsonl");
    char needle[128];
    snprintf(needle, sizeof needle, "line 301, record at byte %ld: invalid JSON", at);
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "a.jsonl");
    ASSERT_CONTAINS(r.err, needle);
    cli_result_free(&r);
    unlink(test_path("data/a.jsonl"));
    /* .jsonl.zst: lines count on across frames; the bad record is line 5,
     * the second line of the second frame. */
    f = fopen(test_path("data/b.jsonl.zst"), "wb");
    ASSERT(f != NULL);
    const char first[] = "{\"text\": \"one\"}\n{\"text\": \"two\"}\n{\"text\": \"three\"}\n";
    put_frame(f, first);
    long second = ftell(f);
    put_frame(f, "{\"text\": \"four\"}\n{\"text\": 5}\n");
    fclose(f);
    r = index_one("data/b.jsonl.zst");
    snprintf(needle, sizeof needle,
             "line 5, zstd frame at byte %ld, record at byte 17 of its "
             "content: text field is not a string",
             second);
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "b.jsonl.zst");
    ASSERT_CONTAINS(r.err, needle);
    cli_result_free(&r);
}

/* A .jsonl source of 600 documents in chunks of 8 lines, 4 lanes. */
static ordo_recipe *chunked_recipe(ordo_ledger *ledger)
{
    corpus_jsonl("data", "doc", 1, 600, 30, 90, 5);
    const char text[] =
        "{\"name\": \"digests\", \"seed\": 9, \"seq_len\": 32, \"global_batch\": 8, \"lanes\": 4,"
        " \"flush_every\": 2, \"shuffle\": false, \"chunk_records\": 8,"
        " \"tokenizer\": {\"kind\": \"bytes\"},"
        " \"sources\": [{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1}]}";
    test_write_file(test_path("digests.json"), text, sizeof text - 1);
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_load(test_path("digests.json"), &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, ledger, NULL, NULL, &err), &err);
    return r;
}

static ordo_loader *open_loader(const ordo_recipe *r)
{
    ordo_loader_options o = {.rank = 0, .world_size = 1, .read_workers = 2, .tokenize_workers = 2};
    ordo_loader *l = NULL;
    ordo_error err;
    ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
    return l;
}

#define DIGEST_STEPS 150

/* Batch digests of every step the loader gives until DIGEST_STEPS or an
 * error (its message in *err); returns the steps given. `change` (may be
 * NULL) runs after step 2, while the loader has chunks in flight. */
static int batch_digests(const ordo_recipe *r, unsigned char digests[][ORDO_DIGEST_SIZE],
                         void (*change)(void), ordo_error *err)
{
    ordo_loader *l = open_loader(r);
    ordo_batch b;
    int steps = 0;
    while (steps < DIGEST_STEPS && ordo_loader_next(l, &b, err) == ORDO_OK) {
        ordo_batch_digest(b.lane_digests, (size_t)b.lane_count, digests[steps++]);
        if (steps == 2 && change)
            change();
    }
    ordo_loader_close(l);
    return steps;
}

static char *original;
static size_t original_size;

/* Same size, still valid JSON lines: every 'e' of the texts becomes 'f'. */
static void change_in_place(void)
{
    char *changed = malloc(original_size + 1);
    memcpy(changed, original, original_size + 1); /* test_read_file ends it with NUL */
    const char key[] = "\"text\": \"";
    for (char *at = changed; (at = strstr(at, key)) != NULL;)
        for (at += sizeof key - 1; *at && *at != '"'; at++)
            if (*at == 'e')
                *at = 'f';
    FILE *f = fopen(test_path("data/doc-0.jsonl"), "r+b");
    ASSERT(f != NULL);
    ASSERT(fwrite(changed, 1, original_size, f) == original_size);
    fclose(f);
    free(changed);
}

/* The chunk digest named in a mismatch message must be the SHA-256 of
 * those bytes before (was) and after (now) the change. */
static void check_named_digests(const char *message)
{
    const char *at = strstr(message, "chunk ");
    ASSERT(at != NULL);
    unsigned index = 0;
    unsigned long long length = 0, offset = 0;
    char was[65], now[65];
    ASSERT(sscanf(at,
                  "chunk %u (%llu bytes at byte %llu) had SHA-256 %64[0-9a-f], now "
                  "%64[0-9a-f]",
                  &index, &length, &offset, was, now) == 5);
    ASSERT(offset + length <= original_size);
    unsigned char digest[ORDO_DIGEST_SIZE];
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_sha256(original + offset, (size_t)length, digest);
    ordo_digest_to_hex(digest, hex);
    ASSERT_EQ_STR(hex, was);
    size_t size = 0;
    char *changed = test_read_file(test_path("data/doc-0.jsonl"), &size);
    ASSERT_EQ_INT(size, original_size);
    ordo_sha256(changed + offset, (size_t)length, digest);
    ordo_digest_to_hex(digest, hex);
    ASSERT_EQ_STR(hex, now);
    free(changed);
}

TEST(shard_changed_during_a_run_stops_it_naming_the_chunk)
{
    ordo_ledger *ledger = fixture_open("l.db");
    ordo_recipe *r = chunked_recipe(ledger);
    static unsigned char expected[DIGEST_STEPS][ORDO_DIGEST_SIZE],
        got[DIGEST_STEPS][ORDO_DIGEST_SIZE];
    ordo_error err;
    ASSERT_EQ_INT(batch_digests(r, expected, NULL, &err), DIGEST_STEPS);
    original = test_read_file(test_path("data/doc-0.jsonl"), &original_size);
    ASSERT(original != NULL);
    int steps = batch_digests(r, got, change_in_place, &err);
    if (steps == DIGEST_STEPS) {
        int differ = 0;
        for (int i = 0; i < DIGEST_STEPS; i++)
            differ += memcmp(expected[i], got[i], ORDO_DIGEST_SIZE) != 0;
        test_fail(__FILE__, __LINE__,
                  "a shard changed during the run went unnoticed: %d of %d "
                  "batch digests differ",
                  differ, DIGEST_STEPS);
    }
    ASSERT_EQ_INT(err.status, ORDO_CONFLICT);
    ASSERT_CONTAINS(err.message, "doc-0.jsonl");
    ASSERT_CONTAINS(err.message, "changed since it was indexed");
    check_named_digests(err.message);
    for (int i = 0; i < steps; i++) /* what it gave before stopping was the data */
        ASSERT(memcmp(expected[i], got[i], ORDO_DIGEST_SIZE) == 0);
    ordo_recipe_free(r);
    /* The digests are in the ledger: a new process's plan has them. */
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM shards WHERE "
                                                 "length(chunk_digests) = 32 * chunks"),
                  1);
    /* An index stored before chunk digests existed is redone and filled in. */
    FILE *f = fopen(test_path("data/doc-0.jsonl"), "wb");
    ASSERT(f && fwrite(original, 1, original_size, f) == original_size);
    fclose(f);
    fixture_sql(test_path("l.db"), "UPDATE shards SET chunk_digests = NULL");
    r = chunked_recipe(ledger);
    ASSERT_EQ_INT(fixture_int(test_path("l.db"), "SELECT count(*) FROM shards WHERE "
                                                 "length(chunk_digests) = 32 * chunks"),
                  1);
    ASSERT_EQ_INT(batch_digests(r, got, NULL, &err), DIGEST_STEPS);
    ASSERT(memcmp(expected, got, sizeof got) == 0);
    ordo_recipe_free(r);
    free(original);
    ordo_ledger_close(ledger);
}

/* A .jsonl shard of 40 small documents, then one line of `big` bytes. */
static long write_long_line(const char *path, size_t big)
{
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    long at = 0;
    for (int i = 0; i < 40; i++)
        at += fprintf(f, "{\"text\": \"a small document, number %d\"}\n", i);
    fputs("{\"text\": \"", f);
    for (size_t i = 0; i < big; i++)
        fputc('x', f);
    fputs("\"}\n", f);
    fclose(f);
    return at;
}

/* `ordo run` as a process on one source of `glob` at `lanes` lanes. */
static watched_run run_lanes(const char *glob, int lanes, const char *db_name)
{
    char sources[256];
    snprintf(sources, sizeof sources, "[{\"name\": \"a\", \"paths\": [\"%s\"], \"weight\": 1}]",
             glob);
    const char *path = corpus_recipe("lanes.json", lanes, lanes, 64, 2, 0, sources);
    return run_ordo_watched(NULL,
                            A("run", path, "--db", test_path(db_name), "--name", "lanes",
                              "--world-size", "1", "--steps", "5", "--quiet"),
                            120);
}

/* Peak RSS bounds in MB: sanitizers' shadow memory takes several times
 * what the program itself uses. */
static long rss_bound_kb(long megabytes)
{
    const char *sanitized = getenv("SANITIZED");
    return megabytes * 1024 * (sanitized && *sanitized ? 4 : 1);
}

TEST(lane_memory_is_bounded_by_a_chunk_limit_that_scales_with_lanes)
{
    mkdir(test_path("data"), 0755);
    /* 64 lanes: chunks of at most 4 MiB. One 6 MiB line: refused, naming
     * file, line and byte, without the memory 64 lanes reading it take. */
    long at = write_long_line(test_path("data/long.jsonl"), (size_t)6 << 20);
    watched_run run = run_lanes("data/long.jsonl", 64, "l.db");
    char needle[128];
    snprintf(needle, sizeof needle,
             "line 41, in a chunk of lines from byte 0, at byte %ld "
             "is larger than 4194304 bytes",
             at);
    if (run.result.code != 1 || !strstr(run.result.err, "long.jsonl") ||
        !strstr(run.result.err, needle) || !strstr(run.result.err, "64 lanes") ||
        run.max_rss_kb > rss_bound_kb(256))
        test_fail(__FILE__, __LINE__, "exit %d, peak RSS %ld MB, stderr: %s", run.result.code,
                  run.max_rss_kb / 1024, run.result.err ? run.result.err : "");
    cli_result_free(&run.result);
    /* At 4 lanes (64 MiB chunks) the same file runs, in bounded memory. */
    run = run_lanes("data/long.jsonl", 4, "four.db");
    if (run.result.code != 0 || run.max_rss_kb > rss_bound_kb(1536))
        test_fail(__FILE__, __LINE__, "4 lanes: exit %d, peak RSS %ld MB, stderr: %s",
                  run.result.code, run.max_rss_kb / 1024, run.result.err ? run.result.err : "");
    cli_result_free(&run.result);
    /* Its index, kept in that ledger, is refused to a recipe of 64 lanes. */
    run = run_lanes("data/long.jsonl", 64, "four.db");
    if (run.result.code != 1 || !strstr(run.result.err, "chunk 0 at byte 0 holds") ||
        !strstr(run.result.err, "with 64 lanes a chunk may hold at most 4194304") ||
        run.max_rss_kb > rss_bound_kb(256))
        test_fail(__FILE__, __LINE__,
                  "64 lanes, stored index: exit %d, peak RSS %ld MB, "
                  "stderr: %s",
                  run.result.code, run.max_rss_kb / 1024, run.result.err ? run.result.err : "");
    cli_result_free(&run.result);
    unlink(test_path("data/long.jsonl"));
    /* A 24 KB zstd frame declaring 253 MB of zeros: at 16 lanes (16 MiB
     * chunks) refused before anything that size is allocated. */
    size_t declared = (size_t)253 << 20;
    char *zeros = calloc(declared, 1);
    size_t cap = ZSTD_compressBound(declared);
    char *frame = malloc(cap);
    ASSERT(zeros && frame);
    size_t n = ZSTD_compress(frame, cap, zeros, declared, 19);
    free(zeros);
    ASSERT(!ZSTD_isError(n) && n < 32 * 1024);
    test_write_file(test_path("data/bomb.jsonl.zst"), frame, n);
    free(frame);
    run = run_lanes("data/bomb.jsonl.zst", 16, "l.db");
    snprintf(needle, sizeof needle, "zstd frame at byte 0 holds %zu bytes; with 16 lanes",
             declared);
    if (run.result.code != 1 || !strstr(run.result.err, "bomb.jsonl.zst") ||
        !strstr(run.result.err, needle) || !strstr(run.result.err, "at most 16777216") ||
        run.max_rss_kb > rss_bound_kb(128))
        test_fail(__FILE__, __LINE__, "exit %d, peak RSS %ld MB, stderr: %s", run.result.code,
                  run.max_rss_kb / 1024, run.result.err ? run.result.err : "");
    cli_result_free(&run.result);
}
