/* The write path of the service over real HTTP on 127.0.0.1 (port 0):
 * divergence events under concurrent writers, request bodies' keys and
 * shapes, lane reports' ranks and their cost. */
#include <sys/wait.h>
#include <unistd.h>

#include "fixtures.h"
#include "http.h"

static char db[1024];

static long long num(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static void expect(const http_result *r, int status, const char *code, const char *needle)
{
    const char *got = json_string_value(json_object_get(r->json, "code"));
    if (r->status != status || (code && (!got || strcmp(got, code) != 0)) ||
        (needle && !strstr(r->body, needle)))
        test_fail(__FILE__, __LINE__, "expected %d %s '%s', got %d: %s", status,
                  code ? code : "", needle ? needle : "", r->status, r->body);
}

static void call(const test_server *s, const char *path, const char *token, const char *body,
                 int status, const char *code, const char *needle)
{
    http_result r = http(s, "POST", path, token, body);
    expect(&r, status, code, needle);
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
    expect(&r, 201, NULL, NULL);
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
        n += (size_t)snprintf(body + n, cap - n, "%s{\"step\": %d, \"batch_digest\": \"%056x%08x\"}",
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
    snprintf(sql, sizeof sql, "SELECT count(%s) FROM events WHERE kind = '%s' AND run_id = "
             "(SELECT id FROM runs WHERE name = '%s')", distinct ? "DISTINCT step" : "*", kind,
             run);
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
    free(run_ordo(NULL, (const char *const[]){"migrate", "--db", db, NULL}).out);
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
