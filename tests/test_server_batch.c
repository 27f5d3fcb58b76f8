/* GET /api/runs/{run}/steps/{n}/batch over real HTTP: the library's
 * regenerated batch (ordo_provenance_json) as `ordo batch --json` prints
 * it, piece texts cut to previews, and each refusal with its status (404,
 * 422, 409, 400) naming step, lane and file. */
#include <jansson.h>
#include <stdio.h>

#include "corpus.h"
#include "fixtures.h"
#include "http.h"
#include "testing.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static char db[1024];

/* Run "r" (id 1): 8 lanes at W = 2, 12 steps, checkpoints every 5, then
 * resumed at W = 4 to step 16; run "rank" (id 2): rank-bound lanes. */
static void filled_ledger(void)
{
    corpus_jsonl("data", "doc", 2, 60, 5, 200, 31);
    const char *recipe = corpus_kept(
        corpus_recipe("recipe.json", 8, 16, 32, 2, 4,
                      "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1}]"));
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "r", "--world-size", "2", "--steps", "12",
                   "--checkpoint-every", "5", "--quiet"),
                 0));
    free(ordo_ok(A("resume", "r", "--db", db, "--world-size", "4", "--steps", "16", "--quiet"), 0));
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "rank", "--world-size", "2", "--steps", "3",
                   "--lane-binding", "rank", "--quiet"),
                 0));
}

/* What the library says of step `step` of run 1 (lane -1: every lane),
 * with the provenance in *out when asked (the caller frees it). */
static json_t *library_view(int64_t step, int lane, ordo_provenance **out)
{
    ordo_ledger *ledger = NULL;
    ordo_provenance *p = NULL;
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(db, ORDO_OPEN_READONLY, &ledger, &err), &err);
    ASSERT_OK(ordo_batch_provenance(ledger, 1, step, NULL, &p, &err), &err);
    ordo_ledger_close(ledger);
    char *text = ordo_provenance_json("r", p, lane);
    json_t *view = json_loads(text, 0, NULL);
    ASSERT(view != NULL);
    ordo_free(text);
    if (out)
        *out = p;
    else
        ordo_provenance_free(p);
    return view;
}

static void expect(const http_result *r, int status, const char *code, const char *const *needles)
{
    const char *got = json_string_value(json_object_get(r->json, "code"));
    if (r->status != status || (code && (!got || strcmp(got, code) != 0)))
        test_fail(__FILE__, __LINE__, "expected %d %s, got %d: %s", status, code ? code : "",
                  r->status, r->body);
    for (int i = 0; needles && needles[i]; i++)
        if (!strstr(r->body, needles[i]))
            test_fail(__FILE__, __LINE__, "expected '%s' in: %s", needles[i], r->body);
    if (strstr(r->body, db))
        test_fail(__FILE__, __LINE__, "the answer names the ledger's path: %s", r->body);
}

static void call(const test_server *s, const char *path, int status, const char *code,
                 const char *const *needles)
{
    http_result r = http(s, "GET", path, NULL, NULL);
    expect(&r, status, code, needles);
    http_free(&r);
}

/* The answer is the library's JSON, whole or of one lane, at steps from
 * step 0, from a checkpoint and after a resume; counted in /metrics. */
TEST(server_batch_is_the_library_batch)
{
    filled_ledger();
    test_server s;
    server_up(&s, db, NULL);
    const int64_t steps[] = {1, 7, 11, 14, 16};
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        char path[256];
        snprintf(path, sizeof path, "/api/runs/r/steps/%lld/batch", (long long)steps[i]);
        http_result r = http(&s, "GET", path, NULL, NULL);
        expect(&r, 200, NULL, NULL);
        json_t *want = library_view(steps[i], -1, NULL);
        ASSERT(json_equal(r.json, want));
        ASSERT_EQ_INT(json_array_size(json_object_get(r.json, "samples")), 16);
        json_decref(want);
        http_free(&r);
    }
    http_result r = http(&s, "GET", "/api/runs/r/steps/14/batch?lane=5", NULL, NULL);
    expect(&r, 200, NULL, NULL);
    json_t *want = library_view(14, 5, NULL);
    ASSERT(json_equal(r.json, want));
    ASSERT_EQ_INT(json_array_size(json_object_get(r.json, "samples")), 2);
    json_decref(want);
    http_free(&r);
    r = http(&s, "GET", "/metrics", NULL, NULL);
    ASSERT_CONTAINS(r.body, "ordo_requests_total{route=\"batch\",status=\"2xx\"} 6");
    ASSERT_CONTAINS(r.body, "ordo_request_seconds_total{route=\"batch\"}");
    http_free(&r);
    server_down(&s);
}

static int valid_utf8(const char *text, size_t len)
{
    json_t *s = json_stringn(text, len);
    json_decref(s);
    return s != NULL;
}

/* ?text=1: every piece has its decoded text, whole when it is short and
 * valid UTF-8; a piece that cuts a character has U+FFFD for its bytes. */
TEST(server_batch_text_gives_each_piece_decoded)
{
    filled_ledger();
    test_server s;
    server_up(&s, db, NULL);
    ordo_provenance *p = NULL;
    json_t *plain = library_view(9, 3, &p);
    http_result r = http(&s, "GET", "/api/runs/r/steps/9/batch?lane=3&text=1", NULL, NULL);
    expect(&r, 200, NULL, A("\"text_limits\":{\"piece_bytes\":1024"));
    size_t i, k, whole = 0, replaced = 0;
    json_t *sample;
    json_array_foreach(json_object_get(r.json, "samples"), i, sample)
    {
        json_t *piece, *pieces = json_object_get(sample, "pieces");
        json_array_foreach(pieces, k, piece)
        {
            char *text = NULL;
            size_t len = 0;
            ordo_error err;
            int row = 3 * p->per_lane + (int)json_integer_value(json_object_get(sample, "row"));
            ASSERT_OK(ordo_provenance_piece_text(p, row, (int)k, &text, &len, &err), &err);
            const char *got = json_string_value(json_object_get(piece, "text"));
            ASSERT(got != NULL);
            ASSERT(json_is_false(json_object_get(piece, "text_cut")));
            if (valid_utf8(text, len)) {
                ASSERT_EQ_INT(json_string_length(json_object_get(piece, "text")), len);
                ASSERT(memcmp(got, text, len) == 0);
                whole++;
            } else {
                ASSERT(strstr(got, "\xEF\xBF\xBD") != NULL);
                replaced++;
            }
            ordo_free(text);
            json_object_del(piece, "text");
            json_object_del(piece, "text_cut");
        }
    }
    ASSERT(whole > 0);
    (void)replaced;
    /* without the texts, the answer is the library's */
    json_object_del(r.json, "text_limits");
    ASSERT(json_equal(r.json, plain));
    json_decref(plain);
    ordo_provenance_free(p);
    http_free(&r);
    server_down(&s);
}

/* Pieces longer than 1,024 bytes are cut to 1,024 (at a character), and
 * an answer holds at most 1 MiB of text: pieces beyond it get null. */
TEST(server_batch_text_is_bounded)
{
    corpus_jsonl("data", "doc", 2, 400, 2000, 4000, 9);
    const char *recipe =
        corpus_recipe("long.json", 2, 1040, 1100, 1, 0,
                      "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], \"weight\": 1}]");
    snprintf(db, sizeof db, "%s", test_path("l.db"));
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "long", "--world-size", "1", "--steps", "1",
                   "--quiet"),
                 0));
    test_server s;
    server_up(&s, db, NULL);
    http_result r = http(&s, "GET", "/api/runs/long/steps/1/batch?text=1", NULL, NULL);
    expect(&r, 200, NULL, NULL);
    size_t i, k, total = 0, cut = 0, nulls = 0;
    json_t *sample, *piece;
    json_array_foreach(json_object_get(r.json, "samples"), i, sample)
    {
        json_array_foreach(json_object_get(sample, "pieces"), k, piece)
        {
            json_t *text = json_object_get(piece, "text");
            int is_cut = json_is_true(json_object_get(piece, "text_cut"));
            if (json_is_null(text)) {
                ASSERT(is_cut);
                ASSERT(total >= (size_t)1 << 20);
                nulls++;
                continue;
            }
            ASSERT(json_string_length(text) <= 1024);
            json_int_t span =
                json_integer_value(json_array_get(json_object_get(piece, "tokens"), 1)) -
                json_integer_value(json_array_get(json_object_get(piece, "tokens"), 0));
            if (span > 1026) { /* more than 1,024 bytes of text besides bos and eos */
                ASSERT(is_cut);
                cut++;
            }
            total += json_string_length(text);
        }
    }
    ASSERT(cut > 0);
    ASSERT(nulls > 0);
    ASSERT(total >= (size_t)1 << 20 && total < ((size_t)1 << 20) + 1024);
    http_free(&r);
    server_down(&s);
}

/* Zeroes lane 2's digest of step 8 of run 1 in the ledger. */
static void tamper_lane_digest(void)
{
    unsigned char lanes[8 * ORDO_DIGEST_SIZE];
    ordo_ledger *ledger = NULL;
    ordo_provenance *p = NULL;
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(db, ORDO_OPEN_READONLY, &ledger, &err), &err);
    ASSERT_OK(ordo_batch_provenance(ledger, 1, 8, NULL, &p, &err), &err);
    memcpy(lanes, p->lane_digests, sizeof lanes);
    ordo_provenance_free(p);
    ordo_ledger_close(ledger);
    memset(lanes + 2 * ORDO_DIGEST_SIZE, 0, ORDO_DIGEST_SIZE);
    char sql[1024];
    int n = sprintf(sql, "UPDATE steps SET lane_digests = X'");
    for (size_t i = 0; i < sizeof lanes; i++)
        n += sprintf(sql + n, "%02x", lanes[i]);
    sprintf(sql + n, "' WHERE key = (1 << 40) + 8");
    fixture_sql(db, sql);
}

/* Hostile and malformed requests: 400 for a step or lane that is not
 * one, a path that is not canonical; 404 for runs and steps not recorded;
 * a write method refused. */
TEST(server_batch_refuses_bad_requests)
{
    filled_ledger();
    const char *writer = make_token(db, "writer");
    test_server s;
    server_up(&s, db, NULL);
    const char *bad_steps[] = {"0",
                               "-1",
                               "abc",
                               "1e3",
                               "+5",
                               "%205",
                               "5%20",
                               "0x10",
                               "99999999999999999999999",
                               "1000000000001",
                               "7.0"};
    for (size_t i = 0; i < sizeof bad_steps / sizeof *bad_steps; i++) {
        char path[256];
        snprintf(path, sizeof path, "/api/runs/r/steps/%s/batch", bad_steps[i]);
        call(&s, path, 400, "invalid", A("is not a step number"));
    }
    const char *bad_lanes[] = {"8", "-1", "x", "99999999999999999999", "", "1.5", "%2B1"};
    for (size_t i = 0; i < sizeof bad_lanes / sizeof *bad_lanes; i++) {
        char path[256];
        snprintf(path, sizeof path, "/api/runs/r/steps/3/batch?lane=%s", bad_lanes[i]);
        call(&s, path, 400, "invalid", A("is not a lane of run 'r' (lanes 0 to 7)"));
    }
    call(&s, "/api/runs/r/steps/3/batch?text=yes", 400, "invalid", A("text must be 1 or 0"));
    call(&s, "/api/runs/r/steps/../batch", 400, "non_canonical_path", NULL);
    call(&s, "/api/runs/../steps/3/batch", 400, "non_canonical_path", NULL);
    call(&s, "/api/runs/r/steps/3/batch/", 400, "non_canonical_path", NULL);
    call(&s, "/api/runs/r%2F..%2Fx/steps/3/batch", 400, "non_canonical_path", NULL);
    call(&s, "/api/runs/r/steps/3/batch/x", 404, "not_found", NULL);
    call(&s, "/api/runs/nosuch/steps/3/batch", 404, "not_found", A("nosuch"));
    call(&s, "/api/runs/r/steps/17/batch", 404, "not_found",
         A("step 17 of run 'r'", "steps 1 to 16"));
    call(&s, "/api/runs/r/steps/1000000000000/batch", 404, "not_found", A("steps 1 to 16"));
    http_result r = http(&s, "POST", "/api/runs/r/steps/3/batch", writer, "{}");
    ASSERT_EQ_INT(r.status, 405);
    http_free(&r);
    r = http(&s, "GET", "/metrics", NULL, NULL);
    ASSERT_CONTAINS(r.body, "ordo_requests_total{route=\"batch\",status=\"4xx\"}");
    http_free(&r);
    server_down(&s);
    /* off loopback, a read needs a token here as on every GET */
    char reader[128];
    snprintf(reader, sizeof reader, "%s", make_token(db, "reader"));
    server_up(&s, db, A("--listen", "0.0.0.0:0", "--insecure"));
    call(&s, "/api/runs/r/steps/3/batch", 401, "unauthorized", NULL);
    r = http(&s, "GET", "/api/runs/r/steps/3/batch?lane=0", reader, NULL);
    expect(&r, 200, NULL, A("\"step\":3"));
    http_free(&r);
    server_down(&s);
}

/* What cannot be answered is said: 422 for rank-bound lanes, a foreign
 * digest kind and a checkpoint that does not reproduce the ledger; 409 for
 * a changed shard, shards not where the run read them and a lane digest
 * the batch does not reproduce, each naming step, lane and file. */
TEST(server_batch_says_why_it_cannot_answer)
{
    filled_ledger();
    const char *writer = make_token(db, "writer");
    test_server s;
    server_up(&s, db, NULL);
    call(&s, "/api/runs/rank/steps/2/batch", 422, "unprocessable",
         A("step 2 of run 'rank'", "rank-bound"));
    /* a job that does not link libordo, with its own digests */
    http_result r = http(&s, "GET", "/api/runs/r", NULL, NULL);
    char body[512];
    snprintf(body, sizeof body,
             "{\"name\": \"foreign\", \"recipe_id\": \"%s\", \"world_size\": 2, "
             "\"digest_kind\": \"xxh3\"}",
             json_string_value(json_object_get(r.json, "recipe_id")));
    http_free(&r);
    r = http(&s, "POST", "/api/runs", writer, body);
    ASSERT_EQ_INT(r.status, 201);
    http_free(&r);
    snprintf(body, sizeof body, "{\"steps\": [{\"step\": 1, \"batch_digest\": \"%064d\"}]}", 7);
    r = http(&s, "POST", "/api/runs/foreign/steps", writer, body);
    ASSERT_EQ_INT(r.status, 200);
    http_free(&r);
    call(&s, "/api/runs/foreign/steps/1/batch", 422, "unprocessable",
         A("step 1 of run 'foreign'", "digests are of kind 'xxh3'"));
    /* the shards changed in place, same sizes */
    char *shards[2], name[64];
    size_t sizes[2];
    for (int f = 0; f < 2; f++) {
        snprintf(name, sizeof name, "data/doc-%d.jsonl", f);
        shards[f] = test_read_file(test_path(name), &sizes[f]);
        char *copy = malloc(sizes[f]);
        memcpy(copy, shards[f], sizes[f]);
        for (size_t i = 0; i < sizes[f]; i++)
            if (copy[i] == 'a')
                copy[i] = 'A';
        test_write_file(test_path(name), copy, sizes[f]);
        free(copy);
    }
    call(&s, "/api/runs/r/steps/3/batch", 409, "conflict",
         A("step 3 of run 'r' (the ledger, replayed from the lane state recorded with step 3): "
           "lane ",
           "data/doc-", "changed since it was indexed"));
    for (int f = 0; f < 2; f++) {
        snprintf(name, sizeof name, "data/doc-%d.jsonl", f);
        test_write_file(test_path(name), shards[f], sizes[f]);
        free(shards[f]);
    }
    /* shards not where the run read them */
    char from[1024], to[1024];
    snprintf(from, sizeof from, "%s", test_path("data"));
    snprintf(to, sizeof to, "%s", test_path("moved"));
    ASSERT(rename(from, to) == 0);
    call(&s, "/api/runs/r/steps/3/batch", 409, "conflict",
         A("step 3 of run 'r' (the ledger, replayed from ", "): lane ", "cannot open shard",
           "data/doc-"));
    ASSERT(rename(to, from) == 0);
    call(&s, "/api/runs/r/steps/3/batch", 200, NULL, NULL);
    /* a tampered lane state (of epoch 11-12): its epoch refused, others answered */
    fixture_tamper_state(db, "epoch_states", 1, 11, 5);
    call(&s, "/api/runs/r/steps/12/batch", 409, "conflict",
         A("step 12 of run 'r' (the ledger, replayed from the lane state recorded with step 11)",
           "regenerated step 11 of lane 5"));
    call(&s, "/api/runs/r/steps/9/batch", 200, NULL, A("\"from_step\":8", "\"from\":\"epoch\""));
    /* without lane states, a tampered checkpoint before the step's epoch */
    fixture_sql(db, "DELETE FROM epoch_states");
    fixture_tamper_state(db, "checkpoints", 1, 12, 5);
    call(&s, "/api/runs/r/steps/14/batch", 422, "unprocessable",
         A("step 14 of run 'r' (the ledger, replayed from the checkpoint at step 12)", "lane 5",
           "checkpoint at step 12"));
    call(&s, "/api/runs/r/steps/7/batch", 200, NULL,
         A("\"from_step\":5", "\"from\":\"checkpoint\""));
    call(&s, "/api/runs/r/steps/9/batch", 200, NULL, /* the checkpoint at 10 is of its epoch */
         A("\"from_step\":8", "\"from\":\"epoch\""));
    /* a lane digest the regenerated batch does not reproduce */
    tamper_lane_digest();
    call(&s, "/api/runs/r/steps/8/batch", 409, "conflict",
         A("step 8 of run 'r' (the ledger, replayed from the checkpoint at step 5)",
           "regenerated step 8 of lane 2", "ledger recorded 0000"));
    r = http(&s, "GET", "/metrics", NULL, NULL);
    ASSERT_CONTAINS(r.body, "ordo_requests_total{route=\"batch\",status=\"4xx\"} 7");
    http_free(&r);
    server_down(&s);
}
