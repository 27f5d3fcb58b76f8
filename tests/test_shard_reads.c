/* Reading shards: only regular files, a deadline on fetched manifests,
 * chunk digests checked as chunks are read, memory bounded per lane, and
 * bad records named by line and byte. */
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <unistd.h>
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
