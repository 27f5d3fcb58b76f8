/* The service over real HTTP on 127.0.0.1 (port 0): every endpoint's
 * success path, its bad inputs, tokens, per-lane ingest composing the
 * digests ordo run records, recovery manifests. */
#include <math.h>
#include <sys/wait.h>
#include <unistd.h>

#include "corpus.h"
#include "fixtures.h"
#include "http.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static char db[1024], recipe[1024];

/* A ledger with run "base": ordo run at W = 2 over 8 lanes, 30 steps,
 * checkpoints every 10. */
static void filled_ledger(void)
{
    corpus_jsonl("data", "doc", 2, 60, 5, 200, 31);
    snprintf(recipe, sizeof recipe, "%s",
             corpus_recipe("recipe.json", 8, 16, 32, 2, 4,
                           "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1}]"));
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "base", "--world-size", "2", "--steps",
                   "30", "--checkpoint-every", "10", "--quiet"),
                 0));
}

static const char *str(const http_result *r, const char *key)
{
    const char *v = json_string_value(json_object_get(r->json, key));
    return v ? v : "";
}

static long long num(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static void call(const test_server *s, const char *method, const char *path, const char *token,
                 const char *body, int status, const char *code, const char *needle)
{
    http_result r = http(s, method, path, token, body);
    HTTP_EXPECT(&r, status, code, needle);
    http_free(&r);
}

/* The audit's passes of base's recipe: over its 30 steps, source "a"
 * (the only one) gets all 16 samples of 32 tokens a step, 480 samples, so
 * its passes begun are ceil(480 × 32 / tokens a pass); and they are what
 * the library plans for the recipe indexed from its files. */
static void audit_shows_passes(const test_server *s, const char *rid)
{
    char path[512];
    snprintf(path, sizeof path, "/api/audit?recipe=%s", rid);
    http_result r = http(s, "GET", path, NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, "\"passes\"");
    json_t *passes = json_object_get(r.json, "passes");
    ASSERT_EQ_INT(num(passes, "horizon"), 30);
    json_t *a = json_array_get(json_object_get(passes, "sources"), 0);
    ASSERT_EQ_STR(json_string_value(json_object_get(a, "source")), "a");
    long long tokens = num(a, "tokens_per_pass");
    ASSERT(tokens > 0);
    ASSERT_EQ_INT(num(a, "samples"), 480);
    ASSERT_EQ_INT(num(a, "pass_count"), (480 * 32 + tokens - 1) / tokens);
    ASSERT(num(a, "pass_count") > 1);
    ordo_recipe *local = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recipe_load(recipe, &local, &err), &err);
    ASSERT_OK(ordo_recipe_index(local, NULL, NULL, NULL, &err), &err);
    ordo_source_plan plan;
    ASSERT_OK(ordo_recipe_passes(local, 30, &plan, &err), &err);
    char *text = ordo_source_plan_json(&plan);
    json_t *expected = json_loads(text, 0, NULL);
    ordo_free(text);
    ASSERT(json_equal(expected, a));
    json_decref(expected);
    ordo_recipe_free(local);
    http_free(&r);
}

TEST(server_endpoints_answer)
{
    filled_ledger();
    const char *writer = make_token(db, "writer");
    test_server s;
    server_up(&s, db, NULL);
    call(&s, "GET", "/healthz", NULL, NULL, 200, NULL, "\"ok\"");
    /* Reads of what ordo run recorded. */
    http_result r = http(&s, "GET", "/api/runs", NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, "\"base\"");
    const char *recipe_id = json_string_value(
        json_object_get(json_array_get(json_object_get(r.json, "runs"), 0), "recipe_id"));
    char rid[65];
    snprintf(rid, sizeof rid, "%s", recipe_id);
    http_free(&r);
    r = http(&s, "GET", "/api/runs/base", NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, "\"segments\"");
    ASSERT_EQ_INT(num(r.json, "steps"), 30);
    http_free(&r);
    r = http(&s, "GET", "/api/runs/base/steps?from=5&to=30&limit=4", NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, NULL);
    ASSERT_EQ_INT(json_array_size(json_object_get(r.json, "steps")), 4);
    ASSERT_EQ_INT(num(r.json, "next"), 9);
    http_free(&r);
    call(&s, "GET", "/api/runs/base/checkpoints", NULL, NULL, 200, NULL, "\"step\":30");
    char path[512];
    snprintf(path, sizeof path, "/api/recipes/%s", rid);
    call(&s, "GET", path, NULL, NULL, 200, NULL, "\"lanes\":8");
    /* A job that does not link libordo: recipe, run, steps, checkpoint. */
    const char *body = "{\"name\": \"ext\", \"lanes\": 4, \"global_batch\": 8}";
    r = http(&s, "POST", "/api/recipes", writer, body);
    HTTP_EXPECT(&r, 201, NULL, NULL);
    char ext[65];
    snprintf(ext, sizeof ext, "%s", str(&r, "id"));
    http_free(&r);
    call(&s, "POST", "/api/recipes", writer, body, 201, NULL, ext); /* idempotent */
    char run[512];
    snprintf(run, sizeof run, "{\"name\": \"job\", \"recipe_id\": \"%s\", \"world_size\": 2}", ext);
    call(&s, "POST", "/api/runs", writer, run, 201, NULL, "\"created\":true");
    call(&s, "POST", "/api/runs", writer, run, 200, NULL, "\"created\":false");
    snprintf(run, sizeof run, "{\"name\": \"job\", \"recipe_id\": \"%s\", \"world_size\": 4}", ext);
    call(&s, "POST", "/api/runs", writer, run, 409, "conflict", "world size 2, not 4");
    char steps[4096];
    int n = snprintf(steps, sizeof steps, "{\"steps\": [");
    for (int i = 1; i <= 12; i++)
        n += snprintf(steps + n, sizeof steps - (size_t)n,
                      "%s{\"step\": %d, \"batch_digest\": \"%064x\", \"loss\": %d.5, "
                      "\"tokens\": 100}",
                      i > 1 ? ", " : "", i, i, 12 - i);
    snprintf(steps + n, sizeof steps - (size_t)n, "]}");
    call(&s, "POST", "/api/runs/job/steps", writer, steps, 200, NULL, "\"inserted\":12");
    call(&s, "POST", "/api/runs/job/steps", writer, steps, 200, NULL, "\"unchanged\":12");
    call(&s, "POST", "/api/runs/job/segments", writer, "{\"start_step\": 13, \"world_size\": 4}",
         201, NULL, "\"start_step\":13");
    /* a checkpoint's state must be one (of that step and lane count) */
    call(&s, "POST", "/api/runs/job/checkpoints", writer,
         "{\"step\": 12, \"lanes\": 4, \"state\": \"AQIDBA==\"}", 400, "invalid", "state:");
    call(&s, "POST", "/api/runs/job/checkpoints", writer,
         "{\"step\": 12, \"lanes\": 4294967300, \"state\": \"AQIDBA==\"}", 400, "invalid", NULL);
    call(&s, "GET", "/api/runs/job/checkpoints", NULL, NULL, 200, NULL, "\"checkpoints\":[]");
    /* Compare, audit, recovery, metrics. */
    r = http(&s, "GET", "/api/compare?a=base&b=job", NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, "\"recipes\"");
    ASSERT_EQ_INT(num(r.json, "steps_compared"), 12);
    ASSERT(json_array_size(json_object_get(r.json, "recipe_diff")) > 0);
    ASSERT(json_is_false(json_object_get(json_object_get(r.json, "recipes"), "same")));
    http_free(&r);
    snprintf(path, sizeof path, "/api/audit?recipe=%s", rid);
    call(&s, "GET", path, NULL, NULL, 200, NULL, "\"world_sizes\"");
    audit_shows_passes(&s, rid);
    snprintf(path, sizeof path, "/api/audit?recipe=%s", ext);
    r = http(&s, "GET", path, NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, "\"why\"");
    ASSERT(json_is_null(json_object_get(json_object_get(r.json, "passes"), "sources")));
    ASSERT_EQ_INT(num(json_object_get(r.json, "passes"), "horizon"), 12);
    http_free(&r);
    r = http(&s, "GET", "/api/runs/base/recovery?world_size=4&step=20", NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, "\"rank_lanes\":[[0,1],[2,3],[4,5],[6,7]]");
    ASSERT_EQ_INT(num(r.json, "checkpoint_step"), 20);
    ASSERT_EQ_INT(json_array_size(json_object_get(r.json, "expected")), 10);
    ordo_error err;
    ASSERT_OK(ordo_recovery_manifest_check(r.body, strlen(r.body), &err), &err);
    char *tampered = strdup(r.body);
    char *at = strstr(tampered, "\"checkpoint_step\":20");
    at[strlen("\"checkpoint_step\":2")] = '1';
    ASSERT_STATUS(ordo_recovery_manifest_check(tampered, strlen(tampered), &err), ORDO_INVALID,
                  &err);
    ASSERT_CONTAINS(err.message, "SHA-256");
    free(tampered);
    http_free(&r);
    call(&s, "GET", "/api/runs/base/recovery?world_size=3", NULL, NULL, 400, "invalid",
         "lanes (8) must be divisible by world size (3)");
    /* Downsampled views: 30 steps in 7 buckets, all counted once. */
    r = http(&s, "GET", "/api/compare/strip?a=base&b=base&buckets=7", NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, NULL);
    json_t *buckets = json_object_get(r.json, "buckets");
    long long matched = 0;
    for (size_t i = 0; i < json_array_size(buckets); i++)
        matched += json_integer_value(json_array_get(json_array_get(buckets, i), 2));
    ASSERT_EQ_INT(matched, 30);
    ASSERT_EQ_INT(json_array_size(buckets), 6); /* width 5: ceil(30 / 7) */
    http_free(&r);
    r = http(&s, "GET", "/api/runs/job/series?buckets=4", NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, "\"loss\"");
    json_t *first = json_array_get(json_object_get(r.json, "buckets"), 0);
    ASSERT_EQ_INT(num(first, "steps"), 3);
    ASSERT(json_real_value(json_object_get(first, "loss")) == 10.5); /* (11.5+10.5+9.5)/3 */
    http_free(&r);
    r = http(&s, "GET", "/metrics", NULL, NULL);
    ASSERT_EQ_INT(r.status, 200);
    ASSERT_CONTAINS(r.body, "ordo_steps_ingested_total 12");
    ASSERT_CONTAINS(r.body, "ordo_requests_total{route=\"steps\",status=\"2xx\"}");
    http_free(&r);
    server_down(&s);
}

TEST(server_refuses_bad_requests_and_stays_up)
{
    filled_ledger();
    const char *writer = make_token(db, "writer");
    char reader[128];
    snprintf(reader, sizeof reader, "%s", make_token(db, "reader"));
    test_server s;
    server_up(&s, db, NULL);
    const char *run = "/api/runs/base/steps";
    /* Tokens. */
    call(&s, "POST", run, NULL, "{\"steps\": []}", 401, "unauthorized", NULL);
    call(&s, "POST", run, reader, "{\"steps\": []}", 403, "forbidden", NULL);
    call(&s, "POST", run, "ordo_0000000000000000000000000000000000000000000000000000000000000000",
         "{}", 401, "unauthorized", "unknown");
    call(&s, "POST", run, writer, "{\"steps\": [", 400, "bad_json", "line 1");
    call(&s, "POST", run, writer, "[1, 2]", 400, "bad_json", "object");
    call(&s, "POST", run, writer, "{\"steps\": \"no\"}", 400, "invalid", "'steps'");
    call(&s, "POST", run, writer, "{\"steps\": [{\"step\": 0, \"batch_digest\": \"00\"}]}", 400,
         "invalid", "steps[0] needs a step");
    call(&s, "POST", run, writer,
         "{\"steps\": [{\"step\": 1000000000001, \"batch_digest\": \"00\"}]}", 400, "invalid",
         "steps[0]");
    call(&s, "POST", run, writer, "{\"steps\": [{\"step\": 5, \"batch_digest\": \"zz\"}]}", 400,
         "invalid", "64 hex");
    call(&s, "POST", run, writer, "{\"steps\": [{\"step\": \"5\"}]}", 400, "invalid", NULL);
    call(&s, "POST", "/api/runs/nobody/steps", writer,
         "{\"steps\": [{\"step\": 5, \"batch_digest\": \""
         "0000000000000000000000000000000000000000000000000000000000000000\"}]}",
         404, "not_found", "nobody");
    /* A conflicting re-report of step 3 is kept as a conflict, not stored. */
    http_result r = http(&s, "POST", run, writer,
                         "{\"steps\": [{\"step\": 3, \"batch_digest\": \""
                         "0000000000000000000000000000000000000000000000000000000000000001\"}]}");
    HTTP_EXPECT(&r, 200, NULL, "\"conflicts\":1");
    http_free(&r);
    call(&s, "GET", "/api/runs/base", NULL, NULL, 200, NULL, "\"conflicts\":1");
    /* Whole or not at all: a bad item after good ones stores nothing. */
    call(&s, "POST", run, writer,
         "{\"steps\": [{\"step\": 31, \"batch_digest\": \""
         "0000000000000000000000000000000000000000000000000000000000000001\"}, {\"step\": -1}]}",
         400, "invalid", "steps[1]");
    call(&s, "GET", "/api/runs/base/steps?from=31", NULL, NULL, 200, NULL, "\"steps\":[]");
    /* Oversized body: 413 from its Content-Length. */
    char big[256];
    snprintf(big, sizeof big,
             "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
             "Content-Length: 999999999\r\n\r\n{",
             run, writer);
    ASSERT_EQ_INT(http_raw(&s, big, strlen(big)), 413);
    /* Too many items, bad queries, unknown routes and methods. */
    call(&s, "GET", "/api/runs/base/steps?from=0", NULL, NULL, 400, "invalid", NULL);
    call(&s, "GET", "/api/runs/base/steps?limit=x", NULL, NULL, 400, "invalid", NULL);
    call(&s, "GET", "/api/compare?a=base", NULL, NULL, 400, "invalid", NULL);
    call(&s, "GET", "/api/compare?a=base&b=ghost", NULL, NULL, 404, "not_found", "ghost");
    call(&s, "GET", "/api/nothing", NULL, NULL, 404, "not_found", NULL);
    call(&s, "DELETE", "/api/runs/base", writer, NULL, 405, "method_not_allowed", NULL);
    call(&s, "GET", "/api/runs/base/recovery", NULL, NULL, 400, "invalid", "world_size");
    call(&s, "POST", "/api/recipes", writer, "{\"lanes\": 3, \"global_batch\": 8}", 400, "invalid",
         "global_batch (8) must be divisible by lanes (3)");
    call(&s, "POST", "/api/runs", writer, "{\"name\": 5}", 400, "invalid", NULL);
    /* refused run requests record nothing; names are path segments */
    http_result info = http(&s, "GET", "/api/runs/base", NULL, NULL);
    char body[512];
    snprintf(body, sizeof body,
             "{\"name\": \"half\", \"recipe_id\": \"%s\", \"world_size\": 2, "
             "\"lane_plan\": [[0, 1, 2], [3, 4, 5, 6, 7]]}",
             str(&info, "recipe_id"));
    call(&s, "POST", "/api/runs", writer, body, 400, "invalid", "gives rank 0 3 lanes");
    call(&s, "GET", "/api/runs/half", NULL, NULL, 404, "not_found", NULL);
    snprintf(body, sizeof body,
             "{\"name\": \"late\", \"recipe_id\": \"%s\", \"world_size\": 2, "
             "\"resumed_from\": 3}",
             str(&info, "recipe_id"));
    call(&s, "POST", "/api/runs", writer, body, 400, "invalid",
         "resumed-from step (3) must be before the start step (1)");
    call(&s, "GET", "/api/runs/late", NULL, NULL, 404, "not_found", NULL);
    snprintf(body, sizeof body,
             "{\"name\": \"odd\", \"recipe_id\": \"%s\", \"world_size\": 2, "
             "\"lane_binding\": 7}",
             str(&info, "recipe_id"));
    call(&s, "POST", "/api/runs", writer, body, 400, "invalid",
         "lane_binding must be 'logical' or 'rank'");
    snprintf(body, sizeof body,
             "{\"name\": \"a/steps\", \"recipe_id\": \"%s\", "
             "\"world_size\": 2}",
             str(&info, "recipe_id"));
    call(&s, "POST", "/api/runs", writer, body, 400, "invalid", "'/'");
    http_free(&info);
    /* undecodable bytes in a path still get a JSON error */
    http_result odd = http(&s, "GET", "/api/runs/%ff", NULL, NULL);
    ASSERT_EQ_INT(odd.status, 404);
    ASSERT_CONTAINS(odd.body, "\"code\":\"not_found\"");
    http_free(&odd);
    /* a request that may not write is answered before its body is read */
    char raw_post[256];
    snprintf(raw_post, sizeof raw_post,
             "POST /api/recipes HTTP/1.1\r\nHost: x\r\nContent-Length: 60000000\r\n\r\n{");
    ASSERT_EQ_INT(http_raw(&s, raw_post, strlen(raw_post)), 401);
    call(&s, "POST", "/api/runs/base/segments", writer, "{\"start_step\": 31}", 400, "invalid",
         "world_size");
    call(&s, "POST", "/api/runs/base/segments", writer, "{\"start_step\": 31, \"world_size\": 3}",
         400, "invalid", "lanes (8) must be divisible by world size (3)");
    /* the same lane plan rule, and words, as a run's first segment */
    call(&s, "POST", "/api/runs/base/segments", writer,
         "{\"start_step\": 31, \"world_size\": 2, \"lane_plan\": [[0, 1, 2], [3, 4, 5, 6, 7]]}",
         400, "invalid", "lane_plan gives rank 0 3 lanes; every rank owns 4");
    call(&s, "POST", "/api/runs/base/segments", writer,
         "{\"start_step\": 31, \"world_size\": 2, \"lane_binding\": \"sideways\"}", 400, "invalid",
         "lane_binding must be 'logical' or 'rank'");
    call(&s, "POST", "/api/runs/base/checkpoints", writer,
         "{\"step\": 1, \"lanes\": 8, "
         "\"state\": \"%%%\"}",
         400, "invalid", "base64");
    /* The dashboard's files: only compiled-in names, never the disk. */
    call(&s, "GET", "/", NULL, NULL, 200, NULL, NULL);
    call(&s, "GET", "/static/app.js", NULL, NULL, 200, NULL, NULL);
    call(&s, "GET", "/static/../migrations/0001_initial.sql", NULL, NULL, 400, "non_canonical_path",
         NULL);
    call(&s, "GET", "/static/%2e%2e/%2e%2e/etc/passwd", NULL, NULL, 400, "non_canonical_path",
         NULL);
    call(&s, "GET", "/static/", NULL, NULL, 400, "non_canonical_path", NULL);
    call(&s, "GET", "/static/nothing.js", NULL, NULL, 404, "not_found", NULL);
    call(&s, "POST", "/static/app.js", writer, "{}", 405, "method_not_allowed", NULL);
    /* Views: bad arguments. */
    call(&s, "GET", "/api/compare/strip?a=base", NULL, NULL, 400, "invalid", "?a=RUN&b=RUN");
    call(&s, "GET", "/api/compare/strip?a=base&b=base&buckets=0", NULL, NULL, 400, "invalid", NULL);
    call(&s, "GET", "/api/compare/strip?a=base&b=ghost", NULL, NULL, 404, "not_found", "ghost");
    call(&s, "GET", "/api/runs/base/series?buckets=100001", NULL, NULL, 400, "invalid", NULL);
    call(&s, "GET", "/api/runs/ghost/series", NULL, NULL, 404, "not_found", NULL);
    int garbage = http_raw(&s, "GARBAGE\r\n\r\n", 11); /* an error, or just closed */
    ASSERT(garbage == 0 || garbage >= 400);
    /* Healthy afterwards. */
    call(&s, "GET", "/healthz", NULL, NULL, 200, NULL, "ok");
    server_down(&s);
}

/* Eight ranks of a job that does not link libordo, each posting its own
 * lane's digests concurrently: the ledger composes exactly the batch
 * digests ordo run recorded in-process. */
TEST(server_lanes_from_eight_ranks_compose_the_batch_digests)
{
    filled_ledger();
    const char *writer = make_token(db, "writer");
    test_server s;
    server_up(&s, db, NULL);
    http_result r = http(&s, "GET", "/api/runs/base/steps?limit=30", NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, NULL);
    json_t *recorded = json_incref(json_object_get(r.json, "steps"));
    ASSERT_EQ_INT(json_array_size(recorded), 30);
    http_result info = http(&s, "GET", "/api/runs/base", NULL, NULL);
    char run[512], rid[65];
    snprintf(rid, sizeof rid, "%s", str(&info, "recipe_id"));
    snprintf(run, sizeof run,
             "{\"name\": \"lanes\", \"recipe_id\": \"%s\", \"world_size\": 8, "
             "\"baseline\": \"base\"}",
             rid);
    http_free(&info);
    http_free(&r);
    call(&s, "POST", "/api/runs", writer, run, 201, NULL, NULL);
    pid_t ranks[8];
    for (int rank = 0; rank < 8; rank++) {
        ranks[rank] = fork();
        ASSERT(ranks[rank] >= 0);
        if (ranks[rank] > 0)
            continue;
        /* rank `rank` owns lane `rank`; it reports in batches of 10 steps */
        for (int from = 0; from < 30; from += 10) {
            char body[8192];
            int n = snprintf(body, sizeof body, "{\"rank\": %d, \"lanes\": [", rank);
            for (int i = from; i < from + 10; i++) {
                json_t *step = json_array_get(recorded, (size_t)i);
                const char *digest = json_string_value(
                    json_array_get(json_object_get(step, "lane_digests"), (size_t)rank));
                n += snprintf(body + n, sizeof body - (size_t)n,
                              "%s{\"step\": %lld, \"lane\": %d, \"digest\": \"%s\"}",
                              i > from ? ", " : "", num(step, "step"), rank, digest);
            }
            snprintf(body + n, sizeof body - (size_t)n, "]}");
            http_result post = http(&s, "POST", "/api/runs/lanes/steps", writer, body);
            if (post.status != 200)
                _exit(1);
            http_free(&post);
        }
        _exit(0);
    }
    for (int rank = 0; rank < 8; rank++) {
        int status = 0;
        ASSERT(waitpid(ranks[rank], &status, 0) == ranks[rank]);
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    static char last_lanes[8][65];
    for (int lane = 0; lane < 8; lane++)
        snprintf(last_lanes[lane], sizeof last_lanes[lane], "%s",
                 json_string_value(json_array_get(
                     json_object_get(json_array_get(recorded, 29), "lane_digests"), (size_t)lane)));
    json_decref(recorded);
    r = http(&s, "GET", "/api/compare?a=base&b=lanes", NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, NULL);
    ASSERT_EQ_INT(num(r.json, "steps_compared"), 30);
    ASSERT_EQ_INT(num(r.json, "matched"), 30);
    http_free(&r);
    /* Divergence from the baseline is flagged when a step's last lane
     * arrives: run "odd" reports step 30's lanes with lane 5 changed. */
    snprintf(run, sizeof run,
             "{\"name\": \"odd\", \"recipe_id\": \"%s\", \"world_size\": 8, "
             "\"baseline\": \"base\"}",
             rid);
    call(&s, "POST", "/api/runs", writer, run, 201, NULL, NULL);
    char body[8192];
    for (int lane = 0; lane < 8; lane++) { /* rank `lane` owns lane `lane` */
        snprintf(body, sizeof body,
                 "{\"rank\": %d, \"lanes\": [{\"step\": 30, \"lane\": %d, \"digest\": \"%s\"}]}",
                 lane, lane,
                 lane == 5 ? "00000000000000000000000000000000000000000000000000000000"
                             "0000beef"
                           : last_lanes[lane]);
        r = http(&s, "POST", "/api/runs/odd/steps", writer, body);
        HTTP_EXPECT(&r, 200, NULL, lane < 7 ? "\"completed_steps\":0" : "\"completed_steps\":1");
        if (lane < 7)
            http_free(&r);
    }
    ASSERT_EQ_INT(num(r.json, "diverged"), 1);
    ASSERT_CONTAINS(r.body, "\"baseline_digest\"");
    http_free(&r);
    /* A lane re-reported with another digest is a conflict; a lane outside
     * the plan is refused. */
    call(&s, "POST", "/api/runs/lanes/steps", writer,
         "{\"rank\": 2, \"lanes\": [{\"step\": 4, \"lane\": 2, \"digest\": \""
         "0000000000000000000000000000000000000000000000000000000000000001\"}]}",
         200, NULL, "\"conflicts\":1");
    call(&s, "POST", "/api/runs/lanes/steps", writer,
         "{\"rank\": 0, \"lanes\": [{\"step\": 40, \"lane\": 8, \"digest\": \""
         "0000000000000000000000000000000000000000000000000000000000000001\"}]}",
         400, "invalid", "lane 8 is not one of the 8 lanes");
    server_down(&s);
}

TEST(server_reads_need_a_token_off_loopback_unless_public)
{
    filled_ledger();
    /* The rule itself is decided by the bound address; on loopback reads
     * are open and writes are not. */
    test_server s;
    server_up(&s, db, NULL);
    call(&s, "GET", "/api/runs", NULL, NULL, 200, NULL, NULL);
    call(&s, "POST", "/api/recipes", NULL, "{}", 401, "unauthorized", NULL);
    server_down(&s);
    /* Bound to every address (not only loopback): reads need a token. */
    char reader[128];
    snprintf(reader, sizeof reader, "%s", make_token(db, "reader"));
    server_up(&s, db, A("--listen", "0.0.0.0:0"));
    call(&s, "GET", "/api/runs", NULL, NULL, 401, "unauthorized", "--public-read");
    /* ... and a token over plain HTTP there is refused, not used */
    call(&s, "GET", "/api/runs", reader, NULL, 403, "insecure", "--tls-cert");
    call(&s, "GET", "/healthz", NULL, NULL, 200, NULL, NULL);
    server_down(&s);
    server_up(&s, db, A("--listen", "0.0.0.0:0", "--insecure"));
    call(&s, "GET", "/api/runs", reader, NULL, 200, NULL, "\"base\"");
    call(&s, "POST", "/api/recipes", reader, "{}", 403, "forbidden", NULL);
    server_down(&s);
    server_up(&s, db, A("--listen", "0.0.0.0:0", "--public-read"));
    call(&s, "GET", "/api/runs", NULL, NULL, 200, NULL, "\"base\"");
    call(&s, "GET", "/api/audit", NULL, NULL, 400, "invalid", "recipe");
    server_down(&s);
    cli_result c = run_ordo(NULL, A("serve", "--db", db, "--listen", "nowhere"));
    ASSERT_EQ_INT(c.code, 2);
    ASSERT_CONTAINS(c.err, "--listen 'nowhere'");
    cli_result_free(&c);
}

/* Re-signs a manifest after editing it, as a forger who knows the format
 * would: only the expected digests can then catch a changed run. */
static char *resign(json_t *m)
{
    json_object_del(m, "sha256");
    char *text = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
    unsigned char digest[ORDO_DIGEST_SIZE];
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_sha256(text, strlen(text), digest);
    ordo_digest_to_hex(digest, hex);
    free(text);
    json_object_set_new(m, "sha256", json_string(hex));
    return json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
}

TEST(server_manifest_drives_a_resume_step_for_step)
{
    filled_ledger();
    test_server s;
    server_up(&s, db, NULL);
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/api/runs/base/recovery?world_size=4&step=10",
             s.port);
    /* From the manifest alone (fetched over HTTP), at W = 4 from step 10. */
    free(ordo_ok(A("resume", "--manifest", url, "--as", "from-manifest", "--steps", "30", "--db",
                   db, "--quiet"),
                 0));
    char *out = ordo_ok(A("compare", "base", "from-manifest", "--db", db, "--json"), 0);
    json_t *r = json_loads(out, 0, NULL);
    free(out);
    ASSERT_EQ_INT(num(r, "steps_compared"), 20);
    ASSERT_EQ_INT(num(r, "matched"), 20);
    json_decref(r);
    /* A manifest URL that is no URL, or names no server, is a clear error. */
    cli_result bad = run_ordo(
        NULL, A("resume", "--manifest", "http://127.0.0.1:x/a", "--steps", "30", "--db", db));
    ASSERT_EQ_INT(bad.code, 1);
    ASSERT_CONTAINS(bad.err, "bad port");
    cli_result_free(&bad);
    bad = run_ordo(NULL, A("resume", "--manifest", "ftp://x/y", "--steps", "30", "--db", db));
    ASSERT_EQ_INT(bad.code, 1);
    ASSERT_CONTAINS(bad.err, "cannot open manifest");
    cli_result_free(&bad);
    /* A tampered manifest is refused before anything is recorded. */
    http_result m = http(&s, "GET", "/api/runs/base/recovery?world_size=4&step=10", NULL, NULL);
    ASSERT_EQ_INT(m.status, 200);
    char *tampered = strdup(m.body);
    char *at = strstr(tampered, "\"world_size\":4");
    at[strlen("\"world_size\":")] = '8';
    test_write_file(test_path("tampered.json"), tampered, strlen(tampered));
    free(tampered);
    cli_result c = run_ordo(NULL, A("resume", "--manifest", test_path("tampered.json"), "--as", "t",
                                    "--steps", "30", "--db", db));
    ASSERT_EQ_INT(c.code, 1);
    ASSERT_CONTAINS(c.err, "SHA-256 does not match");
    cli_result_free(&c);
    /* A manifest whose expected digests the job does not reproduce stops
     * the job loudly at that step, and the ledger says so. */
    json_t *forged = json_incref(m.json);
    json_t *first = json_array_get(json_object_get(forged, "expected"), 3);
    json_object_set_new(first, "batch_digest",
                        json_string("00000000000000000000000000000000000000000000000000000000"
                                    "0000abcd"));
    char *text = resign(forged);
    json_decref(forged);
    test_write_file(test_path("forged.json"), text, strlen(text));
    free(text);
    c = run_ordo(NULL, A("resume", "--manifest", test_path("forged.json"), "--as", "f", "--steps",
                         "30", "--db", db));
    ASSERT_EQ_INT(c.code, 1);
    ASSERT_CONTAINS(c.err, "REPLAY MISMATCH at step 14");
    cli_result_free(&c);
    http_result f = http(&s, "GET", "/api/runs/f", NULL, NULL);
    ASSERT_CONTAINS(f.body, "replay_mismatch");
    ASSERT_EQ_INT(num(f.json, "last_step"), 14);
    http_free(&f);
    http_free(&m);
    server_down(&s);
}

/* ---- the HTTP layer: one parse of the path for authorisation and
 * dispatch, tokens, methods ---- */

/* Every spelling of a write route that a router might normalise. */
static const char *const write_paths[] = {"/api/recipes", "/api/runs", "/api/runs/base/steps",
                                          "/api/runs/base/segments", "/api/runs/base/checkpoints"};
static const char *const spellings[][2] = {{"/", ""}, {"//", ""},    {"/.", ""},
                                           {"", "/"}, {"/x/..", ""}, {"", ""}};

/* path with its first '/' after "api" written as %2F */
static void encoded_slash(const char *path, char *out, size_t size)
{
    snprintf(out, size, "/api%%2F%s", path + strlen("/api/"));
}

/* Asserts that no spelling of any write route writes without a writer
 * token; returns how many requests were refused. */
static int no_write_without_writer(const test_server *s, const char *reader)
{
    const char *tokens[] = {
        NULL, reader, "ordo_0000000000000000000000000000000000000000000000000000000000000000"};
    const char *body = "{\"name\": \"sneak\", \"lanes\": 4, \"global_batch\": 8, \"steps\": [], "
                       "\"start_step\": 40, \"world_size\": 2}";
    int refused = 0;
    for (size_t w = 0; w < sizeof write_paths / sizeof *write_paths; w++)
        for (size_t v = 0; v <= sizeof spellings / sizeof *spellings; v++)
            for (size_t t = 0; t < 3; t++) {
                char path[256];
                if (v == sizeof spellings / sizeof *spellings)
                    encoded_slash(write_paths[w], path, sizeof path);
                else
                    snprintf(path, sizeof path, "%s%s%s", spellings[v][0], write_paths[w],
                             spellings[v][1]);
                http_result r = http(s, "POST", path, tokens[t], body);
                if (r.status < 400 || r.status >= 500)
                    test_fail(__FILE__, __LINE__, "POST %s with %s token: %d %s", path,
                              t == 0   ? "no"
                              : t == 1 ? "a reader"
                                       : "a wrong",
                              r.status, r.body);
                refused++;
                http_free(&r);
            }
    return refused;
}

TEST(server_writes_need_a_writer_token_on_every_path_spelling)
{
    filled_ledger();
    const char *writer_made = make_token(db, "writer");
    char writer[128], reader[128];
    snprintf(writer, sizeof writer, "%s", writer_made);
    snprintf(reader, sizeof reader, "%s", make_token(db, "reader"));
    test_server s;
    server_up(&s, db, NULL);
    ASSERT_EQ_INT(no_write_without_writer(&s, reader), 5 * 7 * 3);
    /* Nothing was written: still one run, and no recipe named "sneak". */
    http_result r = http(&s, "GET", "/api/runs", NULL, NULL);
    ASSERT_EQ_INT(json_array_size(json_object_get(r.json, "runs")), 1);
    http_free(&r);
    /* Non-canonical spellings are refused as such, even with the writer. */
    call(&s, "POST", "//api/recipes", writer, "{}", 400, "non_canonical_path", "//api/recipes");
    call(&s, "GET", "//api/runs", NULL, NULL, 400, "non_canonical_path", NULL);
    call(&s, "GET", "/api/runs/base%2Fsteps", NULL, NULL, 400, "non_canonical_path", NULL);
    /* What a page on another origin can send without asking (a form or
     * text/plain, no Authorization) never writes; neither does a writer's
     * body that does not say it is JSON. */
    const char *form = "POST /api/recipes HTTP/1.1\r\nHost: x\r\nOrigin: http://evil.example\r\n"
                       "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}";
    ASSERT_EQ_INT(http_raw(&s, form, strlen(form)), 401);
    char typed[512];
    snprintf(typed, sizeof typed,
             "POST /api/recipes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
             "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 2\r\n\r\n{}",
             writer);
    ASSERT_EQ_INT(http_raw(&s, typed, strlen(typed)), 415);
    /* The writer on the canonical path still writes. */
    call(&s, "POST", "/api/recipes", writer,
         "{\"name\": \"ok\", \"lanes\": 4, \"global_batch\": 8}", 201, NULL, "\"id\"");
    server_down(&s);
    /* On every address too (tokens refused over plain HTTP there). */
    server_up(&s, db, A("--listen", "0.0.0.0:0"));
    ASSERT_EQ_INT(no_write_without_writer(&s, reader), 5 * 7 * 3);
    server_down(&s);
}

TEST(server_head_is_get_without_a_body)
{
    filled_ledger();
    test_server s;
    server_up(&s, db, NULL);
    const char *paths[] = {"/healthz", "/api/runs", "/api/runs/base", "/metrics", "/"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        http_result r = http(&s, "HEAD", paths[i], NULL, NULL);
        if (r.status != 200 || r.body[0] || !strstr(r.headers, "Content-Type"))
            test_fail(__FILE__, __LINE__, "HEAD %s: %d, body '%s'", paths[i], r.status, r.body);
        http_free(&r);
    }
    call(&s, "HEAD", "/api/runs/ghost", NULL, NULL, 404, NULL, "");
    server_down(&s);
}

TEST(server_errors_name_what_the_client_sent_never_the_ledger_file)
{
    filled_ledger();
    const char *writer = make_token(db, "writer");
    test_server s;
    server_up(&s, db, NULL);
    http_result info = http(&s, "GET", "/api/runs/base", NULL, NULL);
    char body[512];
    snprintf(body, sizeof body, "{\"name\": \"job\", \"recipe_id\": \"%s\", \"world_size\": 2}",
             str(&info, "recipe_id"));
    http_free(&info);
    call(&s, "POST", "/api/runs", writer, body, 201, NULL, NULL);
    /* A 404 names the run as the client named it, not by an internal id. */
    call(&s, "GET", "/api/runs/job/recovery?world_size=2", NULL, NULL, 404, "not_found",
         "run 'job' has no checkpoints");
    call(&s, "GET", "/api/runs/job/recovery?world_size=2&step=5", NULL, NULL, 404, "not_found",
         "run 'job' has no checkpoint at step 5");
    call(&s, "GET", "/api/runs/base/recovery?world_size=2&step=7", NULL, NULL, 404, "not_found",
         "run 'base' has no checkpoint at step 7");
    server_down(&s);
    /* A full disk: a 500 that says so, without the ledger's path. */
    server_file_limit = 128 * 1024;
    server_up(&s, db, NULL);
    server_file_limit = 0;
    char *steps = malloc(1 << 20);
    int n = snprintf(steps, 1 << 20, "{\"steps\": [");
    for (int i = 1; i <= 5000; i++)
        n += snprintf(steps + n, (size_t)(1 << 20) - (size_t)n,
                      "%s{\"step\": %d, \"batch_digest\": \"%064x\"}", i > 1 ? ", " : "", i, i);
    snprintf(steps + n, (size_t)(1 << 20) - (size_t)n, "]}");
    http_result full = http(&s, "POST", "/api/runs/job/steps", writer, steps);
    free(steps);
    char folder[1024];
    snprintf(folder, sizeof folder, "%s", db);
    *strrchr(folder, '/') = '\0';
    if (full.status != 500 || strstr(full.body, folder) || strstr(full.body, "l.db") ||
        !strstr(full.body, "the ledger"))
        test_fail(__FILE__, __LINE__, "a full disk answered %d: %s", full.status, full.body);
    http_free(&full);
    call(&s, "GET", "/healthz", NULL, NULL, 200, NULL, NULL);
    server_down(&s);
}

TEST(server_token_list_and_revoke)
{
    filled_ledger();
    char writer[128], reader[128];
    snprintf(writer, sizeof writer, "%s", make_token(db, "writer"));
    snprintf(reader, sizeof reader, "%s", make_token(db, "reader"));
    char *out = ordo_ok(A("token", "list", "--json", "--db", db), 0);
    json_t *list = json_loads(out, 0, NULL);
    ASSERT_EQ_INT(json_array_size(list), 2);
    ASSERT(!strstr(out, writer + 5) && !strstr(out, reader + 5)); /* never a secret */
    json_t *first = json_array_get(list, 0);
    ASSERT_EQ_STR(json_string_value(json_object_get(first, "role")), "writer");
    ASSERT(json_is_null(json_object_get(first, "revoked_at")));
    unsigned char hash[ORDO_DIGEST_SIZE];
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_sha256(writer, strlen(writer), hash);
    ordo_digest_to_hex(hash, hex);
    hex[12] = '\0';
    ASSERT_EQ_STR(json_string_value(json_object_get(first, "fingerprint")), hex);
    char id[32];
    snprintf(id, sizeof id, "%lld", num(first, "id"));
    json_decref(list);
    free(out);
    out = ordo_ok(A("token", "list", "--db", db), 0);
    ASSERT_CONTAINS(out, "FINGERPRINT");
    ASSERT_CONTAINS(out, hex);
    free(out);
    /* Revoked on a running server: refused from the next request on. */
    test_server s;
    server_up(&s, db, NULL);
    call(&s, "POST", "/api/recipes", writer, "{\"name\": \"r\", \"lanes\": 4, \"global_batch\": 8}",
         201, NULL, NULL);
    free(ordo_ok(A("token", "revoke", id, "--db", db), 0));
    call(&s, "POST", "/api/recipes", writer, "{\"name\": \"r\", \"lanes\": 4, \"global_batch\": 8}",
         401, "unauthorized", "revoked");
    call(&s, "GET", "/api/runs", writer, NULL, 401, "unauthorized", NULL);
    call(&s, "GET", "/api/runs", reader, NULL, 200, NULL, NULL);
    server_down(&s);
    out = ordo_ok(A("token", "list", "--json", "--db", db), 0);
    list = json_loads(out, 0, NULL);
    ASSERT(json_is_string(json_object_get(json_array_get(list, 0), "revoked_at")));
    json_decref(list);
    free(out);
    /* Bad ids are clear errors. */
    cli_result c = run_ordo(NULL, A("token", "revoke", "999", "--db", db));
    ASSERT_EQ_INT(c.code, 1);
    ASSERT_CONTAINS(c.err, "token 999 is not in the ledger");
    cli_result_free(&c);
    c = run_ordo(NULL, A("token", "revoke", "x", "--db", db));
    ASSERT_EQ_INT(c.code, 2);
    ASSERT_CONTAINS(c.err, "not 'x'");
    cli_result_free(&c);
}

/* A job resuming through the service after its resume crashed before its
 * first checkpoint registers its segment again with replace_crashed; a
 * segment that took a checkpoint is never replaced. */
TEST(server_segment_replaces_a_crashed_resume)
{
    filled_ledger();
    const char *writer = make_token(db, "writer");
    test_server s;
    server_up(&s, db, NULL);
    const char *resume = "{\"start_step\": 31, \"world_size\": 4, \"resumed_from\": 30}";
    call(&s, "POST", "/api/runs/base/segments", writer, resume, 201, NULL, "\"start_step\":31");
    /* the resumed job crashed before step 31's checkpoint: it comes back */
    call(&s, "POST", "/api/runs/base/segments", writer, resume, 400, "invalid",
         "must be after the previous segment's (31)");
    call(&s, "POST", "/api/runs/base/segments", writer,
         "{\"start_step\": 31, \"world_size\": 4, \"replace_crashed\": \"yes\"}", 400, "invalid",
         "replace_crashed must be true or false");
    call(&s, "POST", "/api/runs/base/segments", writer,
         "{\"start_step\": 31, \"world_size\": 8, \"resumed_from\": 30, "
         "\"replace_crashed\": true}",
         201, NULL, "\"start_step\":31");
    http_result r = http(&s, "GET", "/api/runs/base", NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, NULL);
    json_t *segments = json_object_get(r.json, "segments");
    ASSERT_EQ_INT(json_array_size(segments), 2);
    ASSERT_EQ_INT(num(json_array_get(segments, 1), "world_size"), 8);
    http_free(&r);
    /* the checkpoint at step 30 is after 21: nothing from 21 on is replaced */
    call(&s, "POST", "/api/runs/base/segments", writer,
         "{\"start_step\": 21, \"world_size\": 4, \"replace_crashed\": true}", 400, "invalid",
         "checkpoint at step 30");
    server_down(&s);
}

/* The run view's data: a run of a schedule ramping web 0.75 -> 0.25 from
 * step 11 to step 21 (B = 16, 30 steps). Its steps and series give the
 * target share of each source (at the ramp's middle, step 16, exactly 0.5)
 * and the delivered one (what ordo run recorded), the series a summary
 * per source; a run whose recipe has no mixture gives nulls, not errors. */
TEST(server_run_view_gives_target_and_delivered_shares)
{
    corpus_jsonl("data", "doc", 2, 60, 5, 200, 31);
    const char *ramp = corpus_recipe(
        "ramp.json", 8, 16, 16, 2, 0,
        "[{\"name\": \"web\", \"paths\": [\"data/doc-0.jsonl\"]},"
        " {\"name\": \"books\", \"paths\": [\"data/doc-1.jsonl\"]}],"
        " \"schedule\": [{\"step\": 1, \"weights\": {\"web\": 0.75, \"books\": 0.25}},"
        " {\"step\": 21, \"linear_from\": 11, \"weights\": {\"web\": 0.25, \"books\": 0.75}}]");
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    free(ordo_ok(A("run", ramp, "--db", db, "--name", "ramp", "--world-size", "2", "--steps", "30",
                   "--quiet"),
                 0));
    const char *writer = make_token(db, "writer");
    test_server s;
    server_up(&s, db, NULL);
    http_result r = http(&s, "GET", "/api/runs/ramp/steps?from=16&to=16", NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, "\"target_shares\":[0.5,0.5]");
    json_t *step = json_array_get(json_object_get(r.json, "steps"), 0);
    json_t *delivered = json_object_get(step, "delivered_shares");
    json_t *tokens = json_object_get(step, "source_tokens");
    ASSERT_EQ_INT(json_array_size(delivered), 2);
    long long web = json_integer_value(json_array_get(tokens, 0));
    long long books = json_integer_value(json_array_get(tokens, 1));
    double step16 = (double)web / (double)(web + books);
    ASSERT(json_real_value(json_array_get(delivered, 0)) == step16);
    /* within 2 samples of 16 x the target: the loader's bound */
    ASSERT(fabs(step16 * 16 - 8) <= 2);
    http_free(&r);

    r = http(&s, "GET", "/api/runs/ramp/series?buckets=30", NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, "\"sources\":[\"web\",\"books\"]");
    json_t *buckets = json_object_get(r.json, "buckets");
    ASSERT_EQ_INT(json_array_size(buckets), 30);
    json_t *b16 = json_array_get(buckets, 15);
    ASSERT_EQ_INT(num(b16, "from"), 16);
    ASSERT(json_real_value(json_array_get(json_object_get(b16, "target_shares"), 0)) == 0.5);
    ASSERT(json_real_value(json_array_get(json_object_get(b16, "delivered_shares"), 0)) == step16);
    double at13 = json_real_value(
        json_array_get(json_object_get(json_array_get(buckets, 12), "target_shares"), 0));
    ASSERT(fabs(at13 - (0.75 - 0.5 * 2 / 10.0)) < 1e-8); /* step 13: 0.65 */
    json_t *mixture = json_object_get(r.json, "mixture");
    ASSERT_EQ_INT(num(mixture, "global_batch"), 16);
    ASSERT_EQ_INT(num(mixture, "steps"), 30);
    ASSERT_EQ_INT(num(mixture, "measured_steps"), 30);
    json_t *first = json_array_get(json_object_get(mixture, "by_source"), 0);
    ASSERT_EQ_STR(json_string_value(json_object_get(first, "name")), "web");
    double mean = json_real_value(json_object_get(first, "target_mean"));
    /* steps 1-11 at 0.75, 12-20 down the ramp, 21-30 at 0.25 */
    double by_hand = 0;
    for (int k = 1; k <= 30; k++)
        by_hand += (k <= 11 ? 0.75 : k >= 21 ? 0.25 : 0.75 - 0.5 * (k - 11) / 10.0) / 30;
    ASSERT(fabs(mean - by_hand) < 1e-8);
    ASSERT(fabs(json_real_value(json_object_get(first, "delivered")) - by_hand) < 0.01);
    ASSERT(fabs(json_real_value(json_object_get(first, "worst_deviation_samples"))) <= 2);
    ASSERT(num(first, "worst_step") >= 1);
    http_free(&r);

    /* A job that does not link libordo: its recipe has no sources. */
    r = http(&s, "POST", "/api/recipes", writer, "{\"name\": \"ext\", \"lanes\": 4}");
    char body[256];
    snprintf(body, sizeof body, "{\"name\": \"job\", \"recipe_id\": \"%s\", \"world_size\": 2}",
             str(&r, "id"));
    http_free(&r);
    call(&s, "POST", "/api/runs", writer, body, 201, NULL, NULL);
    call(&s, "POST", "/api/runs/job/steps", writer,
         "{\"steps\": [{\"step\": 1, \"batch_digest\": \"" /* 64 hex */
         "0000000000000000000000000000000000000000000000000000000000000001\","
         " \"source_tokens\": [5, 3]}]}",
         200, NULL, "\"inserted\":1");
    call(&s, "GET", "/api/runs/job/steps", NULL, NULL, 200, NULL,
         "\"target_shares\":null,\"delivered_shares\":null");
    call(&s, "GET", "/api/runs/job/series", NULL, NULL, 200, NULL,
         "\"by_source\":[],\"unavailable\":\"recipe: 'sources' must be an array of 1 to 1024\"");
    server_down(&s);
}
