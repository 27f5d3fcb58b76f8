/* The write path of the service over real HTTP on 127.0.0.1 (port 0):
 * divergence events under concurrent writers, request bodies' keys and
 * shapes, lane reports' ranks, a long write and ordo run. */
#include <pthread.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "corpus.h"
#include "fixtures.h"
#include "http.h"

static char db[1024];

static long long num(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static void call(const test_server *s, const char *path, const char *token, const char *body,
                 int status, const char *code, const char *needle)
{
    http_result r = http(s, "POST", path, token, body);
    HTTP_EXPECT(&r, status, code, needle);
    http_free(&r);
}

/* A ledger with an external recipe of `lanes` lanes (global batch 2 per
 * lane); returns its id in `id`. */
static void external_recipe(const test_server *s, const char *writer, int lanes, char id[65])
{
    char body[128];
    snprintf(body, sizeof body, "{\"name\": \"ext\", \"lanes\": %d, \"global_batch\": %d}", lanes,
             2 * lanes);
    http_result r = http(s, "POST", "/api/recipes", writer, body);
    HTTP_EXPECT(&r, 201, NULL, NULL);
    snprintf(id, 65, "%s", json_string_value(json_object_get(r.json, "id")));
    http_free(&r);
}

static void create_run(const test_server *s, const char *writer, const char *name,
                       const char *recipe, int world, const char *baseline)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"name\": \"%s\", \"recipe_id\": \"%s\", \"world_size\": %d%s%s%s}", name, recipe,
             world, baseline ? ", \"baseline\": \"" : "", baseline ? baseline : "",
             baseline ? "\"" : "");
    call(s, "/api/runs", writer, body, 201, NULL, NULL);
}

/* {"steps": [...]} for steps from..to with batch digests made of `fill`. */
static char *steps_body(int from, int to, int fill)
{
    size_t cap = (size_t)(to - from + 1) * 120 + 32, n = 0;
    char *body = malloc(cap);
    ASSERT(body != NULL);
    n += (size_t)snprintf(body, cap, "{\"steps\": [");
    for (int i = from; i <= to; i++)
        n +=
            (size_t)snprintf(body + n, cap - n, "%s{\"step\": %d, \"batch_digest\": \"%056x%08x\"}",
                             i > from ? ", " : "", i, fill, i);
    snprintf(body + n, cap - n, "]}");
    return body;
}

/* Posts steps from..to in requests of `per` steps; returns the sum of the
 * answers' "diverged" (or -1 on any answer but 200). */
static long long post_steps(const test_server *s, const char *run, const char *writer, int from,
                            int to, int per, int fill)
{
    char path[256];
    snprintf(path, sizeof path, "/api/runs/%s/steps", run);
    long long diverged = 0;
    for (int first = from; first <= to; first += per) {
        int last = first + per - 1 < to ? first + per - 1 : to;
        char *body = steps_body(first, last, fill);
        http_result r = http(s, "POST", path, writer, body);
        free(body);
        if (r.status != 200) {
            fprintf(stderr, "POST %s: %d %s\n", path, r.status, r.body);
            http_free(&r);
            return -1;
        }
        diverged += num(r.json, "diverged");
        http_free(&r);
    }
    return diverged;
}

/* Events of `kind` of run `run` (distinct steps when `distinct`). */
static long long events_of(const char *run, const char *kind, int distinct)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT count(%s) FROM events WHERE kind = '%s' AND run_id = "
             "(SELECT id FROM runs WHERE name = '%s')",
             distinct ? "DISTINCT step" : "*", kind, run);
    return fixture_int(db, sql);
}

/* `clients` processes post disjoint steps of run `run` (500 each, 25 a
 * request) against a baseline that differs at every step: every
 * divergence is answered, counted and kept as an event. */
static void concurrent_divergences(const test_server *s, const char *writer, const char *run,
                                   int clients)
{
    int pipes[8][2];
    pid_t pids[8];
    for (int c = 0; c < clients; c++) {
        ASSERT(pipe(pipes[c]) == 0);
        pids[c] = fork();
        ASSERT(pids[c] >= 0);
        if (pids[c] == 0) {
            long long d = post_steps(s, run, writer, 1 + 500 * c, 500 * (c + 1), 25, 0xbad);
            _exit(write(pipes[c][1], &d, sizeof d) == (ssize_t)sizeof d && d >= 0 ? 0 : 1);
        }
        close(pipes[c][1]);
    }
    long long answered = 0;
    for (int c = 0; c < clients; c++) {
        long long d = -1;
        ASSERT(read(pipes[c][0], &d, sizeof d) == (ssize_t)sizeof d);
        close(pipes[c][0]);
        int status = 0;
        ASSERT(waitpid(pids[c], &status, 0) == pids[c]);
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        answered += d;
    }
    long long steps = 500LL * clients;
    ASSERT_EQ_INT(answered, steps);
    ASSERT_EQ_INT(events_of(run, "divergence", 0), steps);
    ASSERT_EQ_INT(events_of(run, "divergence", 1), steps);
}

TEST(divergence_events_survive_concurrent_writers)
{
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    free(ordo_ok((const char *const[]){"migrate", "--db", db, NULL}, 0));
    const char *writer = make_token(db, "writer");
    test_server s;
    server_up(&s, db, (const char *const[]){"--threads", "8", NULL});
    char recipe[65];
    external_recipe(&s, writer, 4, recipe);
    create_run(&s, writer, "base", recipe, 1, NULL);
    ASSERT_EQ_INT(post_steps(&s, "base", writer, 1, 4000, 1000, 0x600d), 0);
    create_run(&s, writer, "four", recipe, 1, "base");
    create_run(&s, writer, "eight", recipe, 1, "base");
    concurrent_divergences(&s, writer, "four", 4);
    concurrent_divergences(&s, writer, "eight", 8);
    http_result m = http(&s, "GET", "/metrics", NULL, NULL);
    ASSERT_CONTAINS(m.body, "ordo_divergences_total 6000\n");
    http_free(&m);
    server_down(&s);
}

#define DIGEST(n) "000000000000000000000000000000000000000000000000000000000000000" #n

/* Request bodies: unknown keys are refused naming them (except inside a
 * recipe and a metrics map), steps and lanes never come together, metrics
 * are scalars, lane reports name their rank. */
TEST(request_bodies_refuse_unknown_keys_and_mixed_shapes)
{
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    free(ordo_ok((const char *const[]){"migrate", "--db", db, NULL}, 0));
    const char *writer = make_token(db, "writer");
    test_server s;
    server_up(&s, db, NULL);
    char recipe[65], body[1024];
    /* a recipe is any object: its keys are the loader's business */
    call(&s, "/api/recipes", writer,
         "{\"name\": \"x\", \"lanes\": 4, \"global_batch\": 8, "
         "\"grup\": {\"any\": [1]}}",
         201, NULL, NULL);
    external_recipe(&s, writer, 4, recipe);
    snprintf(body, sizeof body,
             "{\"name\": \"r\", \"recipe_id\": \"%s\", \"world_size\": 2, "
             "\"grup\": \"a\"}",
             recipe);
    call(&s, "/api/runs", writer, body, 400, "invalid", "a run: unknown key 'grup'");
    http_result none = http(&s, "GET", "/api/runs/r", NULL, NULL); /* nothing was created */
    HTTP_EXPECT(&none, 404, "not_found", NULL);
    http_free(&none);
    create_run(&s, writer, "r", recipe, 2, NULL);
    call(&s, "/api/runs/r/segments", writer,
         "{\"start_step\": 5, \"world_size\": 4, "
         "\"world\": 4}",
         400, "invalid", "a segment: unknown key 'world'");
    call(&s, "/api/runs/r/steps", writer,
         "{\"steps\": [{\"step\": 1, \"batch_digest\": \"" DIGEST(1) "\", \"los\": 2.5}]}", 400,
         "invalid", "steps[0] has an unknown key 'los'");
    call(&s, "/api/runs/r/steps", writer, "{\"stepz\": []}", 400, "invalid", "unknown key 'stepz'");
    call(&s, "/api/runs/r/steps", writer,
         "{\"rank\": 0, \"lanes\": [{\"step\": 1, \"lane\": 0, "
         "\"digest\": \"" DIGEST(1) "\", \"rnak\": 0}]}",
         400, "invalid", "lanes[0] has an unknown key 'rnak'");
    call(&s, "/api/runs/r/checkpoints", writer,
         "{\"step\": 1, \"lanes\": 4, \"state\": "
         "\"AAAA\", \"stat\": 1}",
         400, "invalid", "a checkpoint: unknown key 'stat'");
    /* both shapes at once: refused, nothing of either recorded */
    /* a string spliced with DIGEST() does not format stably */
    // clang-format off
    call(&s, "/api/runs/r/steps", writer,
         "{\"steps\": [{\"step\": 1, \"batch_digest\": \"" DIGEST(1) "\"}], \"rank\": 0, "
         "\"lanes\": [{\"step\": 2, \"lane\": 0, \"digest\": \"" DIGEST(1) "\"}]}",
         400, "invalid", "not both");
    // clang-format on
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM steps"), 0);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM lane_reports"), 0);
    /* metrics: a map of scalars, its names free */
    call(&s, "/api/runs/r/steps", writer,
         "{\"steps\": [{\"step\": 1, \"batch_digest\": \"" DIGEST(
             1) "\", \"metrics\": {\"lr\": {\"now\": 1}}}]}",
         400, "invalid", "step 1: metrics: 'lr' is an object");
    call(&s, "/api/runs/r/steps", writer,
         "{\"steps\": [{\"step\": 1, \"batch_digest\": \"" DIGEST(
             1) "\", \"metrics\": {\"lr\": [1, 2]}}]}",
         400, "invalid", "'lr' is an array");
    call(&s, "/api/runs/r/steps", writer,
         "{\"steps\": [{\"step\": 1, \"batch_digest\": \"" DIGEST(1) "\", \"metrics\": 3}]}", 400,
         "invalid", "steps[0] metrics must be an object of scalars");
    call(&s, "/api/runs/r/steps", writer,
         "{\"steps\": [{\"step\": 1, \"batch_digest\": \"" DIGEST(
             1) "\", \"metrics\": {\"any name\": 1.5, \"phase\": \"warmup\", \"ok\": true, "
                "\"gap\": null}}]}",
         200, NULL, "\"inserted\":1");
    /* lane reports need their rank */
    call(&s, "/api/runs/r/steps", writer,
         "{\"lanes\": [{\"step\": 2, \"lane\": 0, \"digest\": \"" DIGEST(1) "\"}]}", 400, "invalid",
         "needs 'rank'");
    call(&s, "/api/runs/r/steps", writer,
         "{\"rank\": -1, \"lanes\": [{\"step\": 2, \"lane\": 0, "
         "\"digest\": \"" DIGEST(1) "\"}]}",
         400, "invalid", "needs 'rank'");
    call(&s, "/api/runs/r/steps", writer, "{\"rank\": 0}", 400, "invalid", "'lanes'");
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM lane_reports"), 0);
    server_down(&s);
}

static void post_lane(const test_server *s, const char *writer, int rank, int step, int lane,
                      const char *digest, int status, const char *needle)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"rank\": %d, \"lanes\": [{\"step\": %d, \"lane\": %d, "
             "\"digest\": \"%s\"}]}",
             rank, step, lane, digest);
    call(s, "/api/runs/r/steps", writer, body, status, status == 200 ? NULL : "invalid", needle);
}

/* A rank cannot report another rank's lane: the first writer no longer
 * wins and the honest rank's reports are never turned into conflicts. */
TEST(lane_reports_are_refused_for_lanes_the_rank_does_not_own)
{
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    free(ordo_ok((const char *const[]){"migrate", "--db", db, NULL}, 0));
    const char *writer = make_token(db, "writer");
    test_server s;
    server_up(&s, db, NULL);
    char recipe[65];
    external_recipe(&s, writer, 4, recipe);
    create_run(&s, writer, "r", recipe, 2, NULL); /* rank 0: lanes 0, 1; rank 1: 2, 3 */
    post_lane(&s, writer, 1, 1, 0, DIGEST(9), 400,
              "lane 0 of step 1 belongs to rank 0 under the segment's lane plan, not to rank 1");
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM lane_reports"), 0);
    /* a body with one foreign lane among its own is refused whole */
    call(&s, "/api/runs/r/steps", writer,
         "{\"rank\": 1, \"lanes\": [{\"step\": 1, \"lane\": 2, "
         "\"digest\": \"" DIGEST(3) "\"}, {\"step\": 1, \"lane\": 1, \"digest\": \"" DIGEST(
             9) "\"}]}",
         400, "invalid", "lane report 1: lane 1 of step 1 belongs to rank 0");
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM lane_reports"), 0);
    /* the honest ranks' reports compose the step, with no conflict */
    post_lane(&s, writer, 0, 1, 0, DIGEST(1), 200, NULL);
    post_lane(&s, writer, 0, 1, 1, DIGEST(2), 200, NULL);
    post_lane(&s, writer, 1, 1, 2, DIGEST(3), 200, NULL);
    http_result r = http(
        &s, "POST", "/api/runs/r/steps", writer,
        "{\"rank\": 1, \"lanes\": [{\"step\": 1, \"lane\": 3, \"digest\": \"" DIGEST(4) "\"}]}");
    HTTP_EXPECT(&r, 200, NULL, "\"completed_steps\":1");
    ASSERT_EQ_INT(num(r.json, "conflicts"), 0);
    http_free(&r);
    ASSERT_EQ_INT(events_of("r", "conflict", 0), 0);
    /* at a new world size the plan of the covering segment decides */
    call(&s, "/api/runs/r/segments", writer, "{\"start_step\": 2, \"world_size\": 4}", 201, NULL,
         NULL);
    post_lane(&s, writer, 0, 2, 1, DIGEST(2), 400, "belongs to rank 1");
    post_lane(&s, writer, 1, 2, 1, DIGEST(2), 200, NULL);
    post_lane(&s, writer, 1, 1, 1, DIGEST(2), 400, "belongs to rank 0");
    server_down(&s);
}

/* Commits the write transaction it was given after 11 s: a long write,
 * longer than a write used to wait. */
static void *long_write(void *db_handle)
{
    struct timespec hold = {11, 0};
    nanosleep(&hold, NULL);
    sqlite3_exec(db_handle, "COMMIT", NULL, NULL, NULL);
    return NULL;
}

/* Another connection's long write makes `ordo run` on the same ledger
 * wait (up to its bound), not fail; a write whose wait runs out says how
 * long it waited. */
TEST(a_long_write_makes_ordo_run_wait_instead_of_failing)
{
    corpus_jsonl("data", "doc", 2, 40, 5, 200, 31);
    const char *recipe = corpus_recipe("recipe.json", 8, 16, 32, 2, 4,
                                       "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], "
                                       "\"weight\": 1}]");
    char path[1024];
    snprintf(path, sizeof path, "%s", recipe);
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    free(ordo_ok((const char *const[]){"migrate", "--db", db, NULL}, 0));
    free(ordo_ok((const char *const[]){"index", path, "--db", db, NULL}, 0));
    sqlite3 *holder = NULL;
    ASSERT(sqlite3_open(db, &holder) == SQLITE_OK);
    ASSERT_EQ_INT(sqlite3_exec(holder,
                               "BEGIN IMMEDIATE; INSERT INTO api_tokens (name, role, "
                               "token_hash) VALUES ('x', 'reader', zeroblob(32))",
                               NULL, NULL, NULL),
                  SQLITE_OK);
    /* bounded: a short wait runs out with a message saying so */
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(db, 0, &ledger, &err), &err);
    ordo_ledger_set_lock_timeout(ledger, 100);
    char id[ORDO_DIGEST_HEX_SIZE];
    ASSERT_STATUS(ordo_recipe_put(ledger, "{\"lanes\": 8}", 12, id, &err), ORDO_BUSY, &err);
    ASSERT_CONTAINS(err.message, "another writer held the ledger's lock for more than 0.1 s");
    ordo_ledger_close(ledger);
    /* `ordo run` waits the long write out */
    pthread_t thread;
    ASSERT(pthread_create(&thread, NULL, long_write, holder) == 0);
    cli_result c =
        run_ordo(NULL, (const char *const[]){"run", path, "--db", db, "--name", "w", "--world-size",
                                             "2", "--steps", "10", "--quiet", NULL});
    pthread_join(thread, NULL);
    sqlite3_close(holder);
    if (c.code != 0)
        test_fail(__FILE__, __LINE__, "ordo run failed (%d): %s", c.code, c.err);
    cli_result_free(&c);
    ASSERT_EQ_INT(fixture_int(db, "SELECT step_count FROM runs WHERE name = 'w'"), 10);
}

/* Padded base64 of `size` bytes (owned), written here independently of
 * the library's decoder it is checked against. */
static char *base64(const unsigned char *data, size_t size)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((size + 2) / 3 * 4 + 1), *at = out;
    ASSERT(out != NULL);
    for (size_t i = 0; i < size; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16;
        if (i + 1 < size)
            v |= (uint32_t)data[i + 1] << 8;
        if (i + 2 < size)
            v |= data[i + 2];
        *at++ = digits[v >> 18 & 63];
        *at++ = digits[v >> 12 & 63];
        *at++ = i + 1 < size ? digits[v >> 6 & 63] : '=';
        *at++ = i + 2 < size ? digits[v & 63] : '=';
    }
    *at = '\0';
    return out;
}

/* The lane state run `run` recorded with `step` as base64 (owned), or
 * NULL when it recorded none. */
static char *recorded_lane_state(const char *run, int step)
{
    sqlite3 *handle = NULL;
    sqlite3_stmt *stmt = NULL;
    ASSERT(sqlite3_open_v2(db, &handle, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    ASSERT(sqlite3_prepare_v2(handle,
                              "SELECT lane_state FROM epoch_states WHERE step = ?2 AND run_id = "
                              "(SELECT id FROM runs WHERE name = ?1)",
                              -1, &stmt, NULL) == SQLITE_OK);
    sqlite3_bind_text(stmt, 1, run, -1, SQLITE_STATIC);
    sqlite3_bind_int(stmt, 2, step);
    char *out = NULL;
    if (sqlite3_step(stmt) == SQLITE_ROW)
        out = base64(sqlite3_column_blob(stmt, 0), (size_t)sqlite3_column_bytes(stmt, 0));
    sqlite3_finalize(stmt);
    sqlite3_close(handle);
    return out;
}

/* {"steps": [step `step` with its lane digests from `recorded`, and `lane_state`
 * (NULL: none) given as is]} (owned). */
static char *step_with_state(json_t *recorded, int step, const char *lane_state)
{
    json_t *item = json_object();
    json_object_set_new(item, "step", json_integer(step));
    json_object_set(item, "lane_digests",
                    json_object_get(json_array_get(recorded, (size_t)step - 1), "lane_digests"));
    if (lane_state)
        json_object_set_new(item, "lane_state", json_string(lane_state));
    json_t *body = json_pack("{s:[o]}", "steps", item);
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    ASSERT(text != NULL);
    return text;
}

#define EPOCH_STATES(run)                                                                          \
    fixture_int(db, "SELECT count(*) FROM epoch_states WHERE run_id = "                            \
                    "(SELECT id FROM runs WHERE name = '" run "')")

/* A job reporting through the service gives every lane's state with the
 * first step of each flush epoch after the first ("lane_state", base64):
 * stored, and the step's batch is then regenerated from its epoch. Bad
 * base64 is refused naming the item and the key; a state of another step
 * with the library's message; lane reports take no state. */
TEST(steps_carry_lane_states_through_the_service)
{
    corpus_jsonl("data", "doc", 2, 60, 5, 200, 31);
    const char *recipe = corpus_one_source(8, 16, 32, 2, 4);
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    /* what a job at W = 2 plays: ordo run's digests and lane states */
    free(ordo_ok((const char *const[]){"run", recipe, "--db", db, "--name", "job", "--world-size",
                                       "2", "--steps", "8", "--quiet", NULL},
                 0));
    ASSERT_EQ_INT(EPOCH_STATES("job"), 3); /* with steps 3, 5 and 7 */
    const char *writer = make_token(db, "writer");
    test_server s;
    ASSERT(chdir(test_path("")) == 0); /* a run the service made reads shards from here */
    server_up(&s, db, NULL);
    http_result r = http(&s, "GET", "/api/runs/job", NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, NULL);
    char recipe_id[65];
    snprintf(recipe_id, sizeof recipe_id, "%s",
             json_string_value(json_object_get(r.json, "recipe_id")));
    http_free(&r);
    create_run(&s, writer, "svc", recipe_id, 2, NULL);
    http_result steps = http(&s, "GET", "/api/runs/job/steps", NULL, NULL);
    HTTP_EXPECT(&steps, 200, NULL, NULL);
    json_t *recorded = json_object_get(steps.json, "steps");
    ASSERT_EQ_INT(json_array_size(recorded), 8);
    char *state3 = recorded_lane_state("job", 3);
    ASSERT(state3 != NULL);
    /* refused: not base64, empty, too long, not a string, a state of another step */
    const char *bad[] = {"@@@@", "AAA", "AA=A", "", NULL};
    for (size_t i = 0; bad[i]; i++) {
        char *body = step_with_state(recorded, 3, bad[i]);
        call(&s, "/api/runs/svc/steps", writer, body, 400, "invalid",
             "steps[0] lane_state must be padded base64 of 1 to 16777216 bytes");
        free(body);
    }
    /* over 16 MiB decoded: refused before it is decoded */
    size_t too_long = ((size_t)16 << 20) / 3 * 4 + 8;
    char *state = malloc(too_long + 1);
    ASSERT(state != NULL);
    memset(state, 'A', too_long);
    state[too_long] = '\0';
    char *body = step_with_state(recorded, 3, state);
    free(state);
    call(&s, "/api/runs/svc/steps", writer, body, 400, "invalid",
         "steps[0] lane_state must be padded base64 of 1 to 16777216 bytes");
    free(body);
    call(&s, "/api/runs/svc/steps", writer,
         "{\"steps\": [{\"step\": 3, \"batch_digest\": \"" DIGEST(1) "\", \"lane_state\": 7}]}",
         400, "invalid", "steps[0] lane_state must be padded base64");
    body = step_with_state(recorded, 5, state3);
    call(&s, "/api/runs/svc/steps", writer, body, 400, "invalid",
         "step 5: its lane state was taken after step 3, not this one");
    free(body);
    call(&s, "/api/runs/svc/steps", writer,
         "{\"steps\": [{\"step\": 3, \"batch_digest\": \"" DIGEST(
             1) "\", \"lane_state\": \"AAAA\"}]}",
         400, "invalid", "step 3: its lane state is not a checkpoint");
    call(&s, "/api/runs/svc/steps", writer,
         "{\"rank\": 0, \"lanes\": [{\"step\": 3, \"lane\": 0, \"digest\": \"" DIGEST(
             1) "\", \"lane_state\": \"AAAA\"}]}",
         400, "invalid", "lanes[0] has an unknown key 'lane_state'");
    ASSERT_EQ_INT(EPOCH_STATES("svc"), 0);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM steps WHERE run_id = "
                                  "(SELECT id FROM runs WHERE name = 'svc')"),
                  0);
    /* the job's steps, each epoch's first with its state */
    for (int step = 1; step <= 8; step++) {
        state = recorded_lane_state("job", step);
        body = step_with_state(recorded, step, state);
        call(&s, "/api/runs/svc/steps", writer, body, 200, NULL, "\"inserted\":1");
        free(body);
        free(state);
    }
    ASSERT_EQ_INT(EPOCH_STATES("svc"), 3);
    /* the same state again is no conflict */
    body = step_with_state(recorded, 3, state3);
    call(&s, "/api/runs/svc/steps", writer, body, 200, NULL, "\"conflicts\":0");
    free(body);
    const int at[] = {2, 4, 5, 8};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        char path[128], from[64];
        snprintf(path, sizeof path, "/api/runs/svc/steps/%d/batch", at[i]);
        snprintf(from, sizeof from, "\"from_step\":%d,\"from\":\"%s\"", (at[i] - 1) / 2 * 2,
                 at[i] <= 2 ? "start" : "epoch");
        r = http(&s, "GET", path, NULL, NULL);
        HTTP_EXPECT(&r, 200, NULL, from);
        http_free(&r);
    }
    free(state3);
    http_free(&steps);
    server_down(&s);
}
