/* Reading shards: only regular files, a deadline on fetched manifests,
 * chunk digests checked as chunks are read, memory bounded per lane, and
 * bad records named by line and byte. */
#define _DEFAULT_SOURCE /* nanosleep, MSG_NOSIGNAL */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
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
    free(ordo_ok(A("shard", "--out", test_path("shards"), "--docs-per-frame", "10",
                   test_path("raw")), 0));
    snprintf(recipe, sizeof recipe, "%s",
             corpus_recipe("recipe.json", 4, 8, 32, 2, 0,
                           "[{\"name\": \"a\", \"paths\": [\"shards/*.jsonl.zst\"], "
                           "\"weight\": 1}]"));
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "base", "--world-size", "2", "--steps",
                   "10", "--checkpoint-every", "5", "--quiet"), 0));
}

/* A resume over a shard that is no longer a regular file ends at once. */
static void expect_resume_refused(const char *kind)
{
    watched_run run = run_ordo_watched(NULL, A("resume", "base", "--db", db, "--world-size", "2",
                                               "--steps", "20"), 30);
    if (run.result.code != 1 || !strstr(run.result.err, "shard-00000.jsonl.zst") ||
        !strstr(run.result.err, "is not a regular file") || run.seconds > 20)
        test_fail(__FILE__, __LINE__, "%s: exit %d after %.1f s, stderr: %s", kind,
                  run.result.code, run.seconds, run.result.err ? run.result.err : "");
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
    free(ordo_ok(A("resume", "base", "--db", db, "--world-size", "2", "--steps", "20",
                   "--quiet"), 0));
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM steps"), 20);
}

/* A server that answers one request with a status line and then one byte
 * every 100 ms for up to 60 s; `trickling` stays 1 while it still sends. */
typedef struct {
    int listener;
    atomic_int trickling, sent;
} trickle_server;

static void *trickle(void *arg)
{
    trickle_server *s = arg;
    int fd = accept(s->listener, NULL, NULL);
    if (fd < 0)
        return NULL;
    char request[4096];
    (void)!read(fd, request, sizeof request);
    const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n";
    int ok = send(fd, head, sizeof head - 1, MSG_NOSIGNAL) > 0;
    s->trickling = 1;
    for (int i = 0; ok && i < 600; i++) {
        struct timespec pause = {0, 100 * 1000 * 1000};
        nanosleep(&pause, NULL);
        ok = send(fd, "x", 1, MSG_NOSIGNAL) == 1;
        s->sent += ok;
    }
    s->trickling = ok; /* 0: the client hung up while bytes still came */
    close(fd);
    return NULL;
}

TEST(manifest_url_fetch_has_a_total_deadline)
{
    trickle_server s = {.listener = socket(AF_INET, SOCK_STREAM, 0)};
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    ASSERT(s.listener >= 0);
    ASSERT(bind(s.listener, (struct sockaddr *)&addr, sizeof addr) == 0);
    ASSERT(listen(s.listener, 4) == 0);
    ASSERT(getsockname(s.listener, (struct sockaddr *)&addr, &len) == 0);
    pthread_t thread;
    ASSERT(pthread_create(&thread, NULL, trickle, &s) == 0);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/runs/r/manifest", ntohs(addr.sin_port));
    watched_run run = run_ordo_watched(A("ORDO_HTTP_DEADLINE_MS=1500"),
                                       A("resume", "--manifest", url, "--steps", "5", "--db",
                                         test_path("l.db")), 30);
    int still_sending = s.trickling;
    pthread_join(thread, NULL);
    close(s.listener);
    if (run.result.code != 1 || !strstr(run.result.err, "within 1500 ms") || run.seconds > 10)
        test_fail(__FILE__, __LINE__, "exit %d after %.1f s, stderr: %s", run.result.code,
                  run.seconds, run.result.err ? run.result.err : "");
    ASSERT(run.seconds >= 1.4);
    ASSERT(still_sending);       /* it gave up while bytes were still coming */
    ASSERT_EQ_INT(s.trickling, 0); /* and hung up on the server */
    ASSERT(s.sent >= 5);
    cli_result_free(&run.result);
}

static cli_result index_one(const char *glob)
{
    char sources[256];
    snprintf(sources, sizeof sources, "[{\"name\": \"a\", \"paths\": [\"%s\"], \"weight\": 1}]",
             glob);
    return run_ordo(NULL, A("index", corpus_recipe("recipe.json", 4, 8, 32, 2, 0, sources),
                            "--db", test_path("l.db")));
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
    snprintf(needle, sizeof needle, "line 5, zstd frame at byte %ld, record at byte 17 of its "
                                    "content: text field is not a string", second);
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "b.jsonl.zst");
    ASSERT_CONTAINS(r.err, needle);
    cli_result_free(&r);
}
