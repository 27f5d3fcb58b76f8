/* Self-verifying resume through the ordo binary: a checkpoint that does
 * not reproduce what the ledger recorded is refused naming step and lane. */
#include <openssl/evp.h>
#include <sys/stat.h>

#include "corpus.h"
#include "fixtures.h"
#include "http.h"
#include "testing.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static char db[1024];
static char recipe[1024];

static void setup(void)
{
    corpus_jsonl("raw-short", "short", 4, 300, 20, 80, 1);
    corpus_jsonl("raw-long", "long", 2, 150, 200, 800, 2);
    free(ordo_ok(
        A("shard", "--out", test_path("short"), "--docs-per-frame", "16", test_path("raw-short")),
        0));
    free(ordo_ok(
        A("shard", "--out", test_path("long"), "--docs-per-frame", "8", test_path("raw-long")), 0));
    const char *sources =
        "[{\"name\": \"short\", \"paths\": [\"short/*.jsonl.zst\"], \"weight\": 0.5},"
        " {\"name\": \"long\", \"paths\": [\"long/*.jsonl.zst\"], \"weight\": 0.5}]";
    snprintf(recipe, sizeof recipe, "%s", corpus_recipe("recipe.json", 32, 64, 64, 3, 8, sources));
    snprintf(db, sizeof db, "%s", test_path("ledger.db"));
}

/* The state of run 1's checkpoint at `step`, decoded. */
static void read_state(int64_t step, ordo__state *s, ordo_checkpoint *c)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(db, ORDO_OPEN_READONLY, &ledger, &err), &err);
    ASSERT_OK(ordo_checkpoint_get(ledger, 1, step, c, &err), &err);
    ASSERT_OK(ordo__state_decode(c->state, c->state_size, s, &err), &err);
    ordo_ledger_close(ledger);
}

/* Writes raw bytes as run 1's checkpoint at `step`. */
static void write_raw(int64_t step, const unsigned char *data, size_t size)
{
    size_t cap = 2 * size + 128;
    char *sql = malloc(cap);
    int n = snprintf(sql, cap, "UPDATE checkpoints SET lane_state = X'");
    for (size_t i = 0; i < size; i++)
        n += snprintf(sql + n, cap - (size_t)n, "%02x", data[i]);
    snprintf(sql + n, cap - (size_t)n, "' WHERE run_id = 1 AND step = %lld", (long long)step);
    fixture_sql(db, sql);
    free(sql);
}

static void write_state(int64_t step, const ordo__state *s)
{
    unsigned char *data = NULL;
    size_t size = 0;
    ordo_error err;
    ASSERT_OK(ordo__state_encode(s, &data, &size, &err), &err);
    write_raw(step, data, size);
    free(data);
}

/* Run "base" to step 60 checkpointed every 10, and "whole" to step 80
 * unbroken: what a resume of base to 80 must equal. */
static void record_base_and_whole(void)
{
    setup();
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "base", "--world-size", "4", "--steps",
                   "60", "--quiet", "--checkpoint-every", "10"),
                 0));
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "whole", "--world-size", "4", "--steps",
                   "80", "--quiet"),
                 0));
}

enum tamper { UNIT, DOC, OFFSET, UNIT_HUGE, RECORD, RECORD_OTHER, STEP };

/* Lane 5's packer positions moved (what a checkpoint of logical lanes
 * holds), or the state's step changed. A document moved without its
 * record is a checkpoint of format 5 (record unknown); a record moved
 * reads another record as the packer's document. */
static void tamper(ordo__state *s, enum tamper how)
{
    ordo__lane_record *lane = &s->lanes[5];
    switch (how) {
    case UNIT: lane->positions[0].unit += 1; break;
    case DOC: lane->positions[1].doc += 1, lane->positions[1].record = 0; break;
    case RECORD: lane->positions[1].record += 1; break;
    case RECORD_OTHER: lane->positions[1].record = lane->positions[1].record > 1 ? 1 : 2; break;
    case OFFSET: lane->positions[0].offset += 1; break;
    case UNIT_HUGE: lane->positions[1].unit = (uint64_t)1 << 40; break;
    case STEP: s->step -= 1; break;
    }
}

TEST(resume_refuses_a_tampered_checkpoint_naming_step_and_lane)
{
    record_base_and_whole();
    ordo_checkpoint original;
    ordo__state s;
    read_state(60, &s, &original);
    ASSERT(s.lanes[5].positions[1].record > 0); /* inside its unit: the record is read from */
    ordo__state_free(&s);
    const char *expect[] = {"lane 5", "lane 5", "lane 5", "lane 5", "lane 5", "lane 5", "step 59"};
    for (int how = UNIT; how <= STEP; how++) {
        ordo_checkpoint c;
        read_state(60, &s, &c);
        ordo_checkpoint_free(&c);
        tamper(&s, (enum tamper)how);
        write_state(60, &s);
        ordo__state_free(&s);
        cli_result r = run_ordo(
            NULL, A("resume", "base", "--db", db, "--world-size", "8", "--steps", "80", "--quiet"));
        if (r.code != 1)
            fprintf(stderr, "  tampering %d: exit %d\n", how, r.code);
        ASSERT_EQ_INT(r.code, 1);
        ASSERT_CONTAINS(r.err, "refused");
        ASSERT_CONTAINS(r.err, expect[how]);
        ASSERT_CONTAINS(r.err, "step");
        cli_result_free(&r);
        write_raw(60, original.state, original.state_size);
    }
    ordo_checkpoint_free(&original);
    /* Nothing was recorded by the refused resumes; the honest one agrees. */
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM segments WHERE run_id = 1"), 1);
    ASSERT_EQ_INT(fixture_int(db, "SELECT step_count FROM runs WHERE id = 1"), 60);
    free(ordo_ok(A("resume", "base", "--db", db, "--world-size", "8", "--steps", "80", "--quiet"),
                 0));
    free(ordo_ok(A("compare", "base", "whole", "--db", db), 0));
}

static void put_varint(unsigned char *out, size_t *n, uint64_t v)
{
    do {
        out[(*n)++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

/* A logical lanes' state as format 5 wrote it: positions without their
 * record (docs/recipe.md, "Checkpoints"). */
static unsigned char *encode_format_5(const ordo__state *s, size_t *size)
{
    unsigned char *out = malloc(64 + s->lane_count * (1 + s->sources * 3) * 10);
    size_t n = 0;
    uint64_t head[] = {5, 0, s->recipe_tag, s->step, s->stride, s->sources, s->lane_count};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        put_varint(out, &n, head[i]);
    for (uint64_t l = 0; l < s->lane_count; l++) {
        put_varint(out, &n, s->lanes[l].lane);
        for (uint32_t i = 0; i < s->sources; i++) {
            put_varint(out, &n, s->lanes[l].positions[i].unit);
            put_varint(out, &n, s->lanes[l].positions[i].doc);
            put_varint(out, &n, s->lanes[l].positions[i].offset);
        }
    }
    *size = n;
    return out;
}

/* A checkpoint of format 5 (an older ordo's) still resumes, to the same
 * batches, reading its units from their start; the resume's own
 * checkpoints are of format 6, their positions with records. */
TEST(resume_reads_checkpoints_of_format_5)
{
    record_base_and_whole();
    ordo_checkpoint c;
    ordo__state s;
    read_state(60, &s, &c);
    int inside = 0;
    for (uint64_t l = 0; l < s.lane_count; l++)
        for (uint32_t i = 0; i < s.sources; i++)
            inside += s.lanes[l].positions[i].record > 0;
    ASSERT(inside > 0);
    ASSERT_EQ_INT(c.state[0], 6);
    size_t size = 0;
    unsigned char *old = encode_format_5(&s, &size);
    ordo__state back;
    ordo_error err;
    ASSERT_OK(ordo__state_decode(old, size, &back, &err), &err);
    ASSERT_EQ_INT((long long)back.lanes[5].positions[1].doc,
                  (long long)s.lanes[5].positions[1].doc);
    ASSERT_EQ_INT((long long)back.lanes[5].positions[1].record, 0);
    ordo__state_free(&back);
    write_raw(60, old, size);
    free(old);
    ordo__state_free(&s);
    ordo_checkpoint_free(&c);
    free(ordo_ok(A("resume", "base", "--db", db, "--world-size", "8", "--steps", "80", "--quiet",
                   "--checkpoint-every", "10"),
                 0));
    free(ordo_ok(A("compare", "base", "whole", "--db", db), 0));
    read_state(70, &s, &c);
    ASSERT_EQ_INT(c.state[0], 6);
    ordo__state_free(&s);
    ordo_checkpoint_free(&c);
}

/* Run 1's lane states (epoch_states) and its checkpoint at `step`
 * rewritten as format 5 wrote them; lane 5's second packer moved a
 * document on in the state recorded with step `moved` (0: none). */
static void states_as_format_5(int64_t step, int64_t moved)
{
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(db, ORDO_OPEN_READONLY, &ledger, &err), &err);
    for (int64_t at = 1;;) {
        ordo_checkpoint c;
        if (ordo__epoch_state_find(ledger, 1, at, INT64_MAX, &c, &err) != ORDO_OK)
            break;
        ordo__state s;
        ASSERT_OK(ordo__state_decode(c.state, c.state_size, &s, &err), &err);
        if (c.step == moved)
            s.lanes[5].positions[1].doc += 1;
        size_t size = 0;
        unsigned char *old = encode_format_5(&s, &size);
        size_t cap = 2 * size + 128;
        char *sql = malloc(cap);
        int n = snprintf(sql, cap, "UPDATE epoch_states SET lane_state = X'");
        for (size_t i = 0; i < size; i++)
            n += snprintf(sql + n, cap - (size_t)n, "%02x", old[i]);
        snprintf(sql + n, cap - (size_t)n, "' WHERE run_id = 1 AND step = %lld", (long long)c.step);
        fixture_sql(db, sql);
        free(sql);
        free(old);
        ordo__state_free(&s);
        at = c.step + 1;
        ordo_checkpoint_free(&c);
    }
    ordo_ledger_close(ledger);
    ordo_checkpoint c;
    ordo__state s;
    read_state(step, &s, &c);
    size_t size = 0;
    unsigned char *old = encode_format_5(&s, &size);
    write_raw(step, old, size);
    free(old);
    ordo__state_free(&s);
    ordo_checkpoint_free(&c);
}

/* An upgrade: a job of an ordo writing format 5 ran past its last
 * checkpoint (40) to step 60, its lane states recorded; this version
 * resumes from the checkpoint and records the states of steps 41-60 again,
 * in format 6. The same positions are no conflict, and the stored states
 * take the newer format; a state that really differs still is one. */
TEST(resume_over_lane_states_of_format_5_is_no_conflict)
{
    record_base_and_whole();
    fixture_sql(db, "DELETE FROM checkpoints WHERE run_id = 1 AND step > 40");
    ASSERT(fixture_int(db, "SELECT count(*) FROM epoch_states WHERE run_id = 1 AND step > 40") >=
           2);
    int64_t moved = fixture_int(db, "SELECT max(step) FROM epoch_states WHERE run_id = 1 AND "
                                    "step > 40 AND step <= 60");
    states_as_format_5(40, moved);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM epoch_states WHERE run_id = 1 AND "
                                  "substr(lane_state, 1, 1) <> x'05'"),
                  0);
    free(ordo_ok(A("resume", "base", "--db", db, "--world-size", "8", "--steps", "80", "--quiet"),
                 0));
    cli_result r = run_ordo(NULL, A("compare", "base", "whole", "--db", db));
    ASSERT_EQ_INT(r.code, 3); /* the batches match; the moved state is a conflict */
    ASSERT_CONTAINS(r.out, "matched         80");
    ASSERT_CONTAINS(r.out, "diverged        0");
    ASSERT_CONTAINS(r.out, "base: 1 steps");
    cli_result_free(&r);
    /* the moved one is the only conflict, and the only state left of format 5 */
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM events WHERE run_id = 1 AND kind = "
                                  "'conflict'"),
                  1);
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM events WHERE run_id = 1 AND kind = 'conflict' AND step = %lld",
             (long long)moved);
    ASSERT_EQ_INT(fixture_int(db, sql), 1);
    ASSERT_EQ_INT(fixture_int(db,
                              "SELECT count(*) FROM epoch_states WHERE run_id = 1 AND step > 40 "
                              "AND substr(lane_state, 1, 1) = x'05'"),
                  1);
    ASSERT(fixture_int(db, "SELECT count(*) FROM epoch_states WHERE run_id = 1 AND step > 40 AND "
                           "substr(lane_state, 1, 1) = x'06'") >= 1);
}

/* A lane digest recorded for a step the resume replays, changed in the
 * ledger: the resume names that step and lane. */
TEST(resume_checks_the_replayed_steps_against_the_ledger)
{
    setup();
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "base", "--world-size", "4", "--steps",
                   "60", "--quiet", "--checkpoint-every", "10"),
                 0));
    fixture_sql(db,
                "UPDATE steps SET lane_digests = CAST(substr(lane_digests, 1, 96) || "
                "zeroblob(32) || substr(lane_digests, 129) AS BLOB) WHERE key = (1 << 40) + 60");
    cli_result r = run_ordo(
        NULL, A("resume", "base", "--db", db, "--world-size", "2", "--steps", "70", "--quiet"));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "does not reproduce step 60 of lane 3");
    cli_result_free(&r);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM segments WHERE run_id = 1"), 1);
}

/* A resume that crashed before its first checkpoint (its segment and some
 * steps recorded, no checkpoint): resuming again replaces that segment. A
 * run that crashed before any checkpoint resumes from step 0 at another
 * world size, or runs again at another one. Every ending equals the
 * uninterrupted run. */
TEST(resume_after_a_crashed_resume_or_before_any_checkpoint)
{
    setup();
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "whole", "--world-size", "4", "--steps",
                   "30", "--quiet"),
                 0));
    /* run to 10 (checkpoints 5, 10); a resume at W=4 dies after step 12 */
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "v", "--world-size", "8", "--steps", "10",
                   "--quiet", "--checkpoint-every", "5"),
                 0));
    free(ordo_ok(A("resume", "v", "--db", db, "--world-size", "4", "--steps", "12", "--quiet",
                   "--checkpoint-every", "100"),
                 0));
    fixture_sql(db, "DELETE FROM checkpoints WHERE step = 12");
    free(ordo_ok(A("resume", "v", "--db", db, "--world-size", "16", "--steps", "20", "--quiet",
                   "--checkpoint-every", "100"),
                 0));
    fixture_sql(db, "DELETE FROM checkpoints WHERE step = 20");
    free(ordo_ok(A("resume", "v", "--db", db, "--world-size", "2", "--steps", "30", "--quiet"), 0));
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM segments s JOIN runs r ON r.id = "
                                  "s.run_id WHERE r.name = 'v'"),
                  2);
    ASSERT_EQ_INT(fixture_int(db, "SELECT world_size FROM segments s JOIN runs r ON r.id = "
                                  "s.run_id WHERE r.name = 'v' AND ordinal = 1"),
                  2);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM events e JOIN runs r ON r.id = e.run_id "
                                  "WHERE r.name = 'v' AND kind = 'conflict'"),
                  0);
    free(ordo_ok(A("compare", "whole", "v", "--db", db), 0));
    /* killed before its first checkpoint: resume at W=8 from step 0 */
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "w", "--world-size", "4", "--steps", "6",
                   "--quiet", "--checkpoint-every", "100"),
                 0));
    fixture_sql(db, "DELETE FROM checkpoints WHERE step = 6");
    free(ordo_ok(A("resume", "w", "--db", db, "--world-size", "8", "--steps", "30", "--quiet"), 0));
    free(ordo_ok(A("compare", "whole", "w", "--db", db), 0));
    /* or `ordo run` again at another world size */
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "x", "--world-size", "4", "--steps", "6",
                   "--quiet", "--checkpoint-every", "100"),
                 0));
    fixture_sql(db, "DELETE FROM checkpoints WHERE step = 6");
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "x", "--world-size", "8", "--steps", "30",
                   "--quiet"),
                 0));
    free(ordo_ok(A("compare", "whole", "x", "--db", db), 0));
    ASSERT_EQ_INT(fixture_int(db, "SELECT world_size FROM segments s JOIN runs r ON r.id = "
                                  "s.run_id WHERE r.name = 'x'"),
                  8);
    /* a checkpoint after the start still refuses an in-place resume */
    cli_result r = run_ordo(NULL, A("resume", "v", "--db", db, "--from-step", "10", "--world-size",
                                    "4", "--steps", "40", "--quiet"));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "later checkpoint");
    cli_result_free(&r);
}

static int keep_lanes(const ordo_step *step, void *context)
{
    memcpy(context, step->lane_digests, (size_t)step->lane_count * ORDO_DIGEST_SIZE);
    return 0;
}

/* POSTs lanes first..last of step 12 with their recorded digests, each
 * lane by the rank that owns it at W = 4 (8 lanes a rank), a body a rank. */
static void post_lanes(const test_server *srv, const char *token, const unsigned char *digests,
                       int first, int last)
{
    for (int rank = first / 8; rank <= last / 8; rank++) {
        char body[8192];
        int n = snprintf(body, sizeof body, "{\"rank\": %d, \"lanes\": [", rank);
        int from = first > rank * 8 ? first : rank * 8;
        int to = last < rank * 8 + 7 ? last : rank * 8 + 7;
        for (int lane = from; lane <= to; lane++) {
            char hex[ORDO_DIGEST_HEX_SIZE];
            ordo_digest_to_hex(digests + (size_t)lane * ORDO_DIGEST_SIZE, hex);
            n += snprintf(body + n, sizeof body - (size_t)n,
                          "%s{\"step\": 12, \"lane\": %d, "
                          "\"digest\": \"%s\"}",
                          lane > from ? ", " : "", lane, hex);
        }
        snprintf(body + n, sizeof body - (size_t)n, "]}");
        http_result r = http(srv, "POST", "/api/runs/base/steps", token, body);
        ASSERT_EQ_INT(r.status, 200);
        http_free(&r);
    }
}

static long long manifest_step(const test_server *srv, size_t *expected)
{
    http_result r = http(srv, "GET", "/api/runs/base/recovery?world_size=8", NULL, NULL);
    ASSERT_EQ_INT(r.status, 200);
    long long step = json_integer_value(json_object_get(r.json, "checkpoint_step"));
    *expected = json_array_size(json_object_get(r.json, "expected"));
    http_free(&r);
    return step;
}

/* Over HTTP: a checkpoint past every report is a 400; one whose step has
 * lanes pending is a 202 "held", which a recovery manifest does not use
 * until the step's last lane is in. */
TEST(service_refuses_unreached_and_holds_pending_checkpoints)
{
    setup();
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "base", "--world-size", "4", "--steps",
                   "12", "--quiet", "--checkpoint-every", "10"),
                 0));
    /* step 12 and its checkpoint as a job sends them: lanes from the ranks,
     * the checkpoint from a background thread, in any order */
    ordo_checkpoint c;
    ordo__state s;
    read_state(12, &s, &c);
    ordo__state_free(&s);
    char *state = malloc(4 * ((c.state_size + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)state, c.state, (int)c.state_size);
    ordo_checkpoint_free(&c);
    unsigned char digests[32 * ORDO_DIGEST_SIZE];
    ordo_ledger *ledger = fixture_open("ledger.db");
    ordo_error err;
    ASSERT_OK(ordo_steps_scan(ledger, 1, 12, 12, keep_lanes, digests, &err), &err);
    ordo_ledger_close(ledger);
    fixture_sql(db, "DELETE FROM checkpoints WHERE step = 12; DELETE FROM step_blocks; "
                    "DELETE FROM steps WHERE key = (1 << 40) + 12; "
                    "UPDATE runs SET step_count = 11");
    const char *writer = make_token(db, "writer");
    test_server srv;
    server_up(&srv, db, NULL);
    post_lanes(&srv, writer, digests, 0, 15);
    char body[4096];
    snprintf(body, sizeof body, "{\"step\": 12, \"lanes\": 32, \"state\": \"%s\"}", state);
    http_result r = http(&srv, "POST", "/api/runs/base/checkpoints", writer, body);
    ASSERT_EQ_INT(r.status, 202);
    ASSERT_CONTAINS(r.body, "\"held\":true");
    http_free(&r);
    size_t expected = 0;
    ASSERT_EQ_INT(manifest_step(&srv, &expected), 10);
    ASSERT_EQ_INT(expected, 1); /* step 11; 12 is not complete */
    post_lanes(&srv, writer, digests, 16, 31);
    ASSERT_EQ_INT(manifest_step(&srv, &expected), 12);
    r = http(&srv, "GET", "/api/runs/base/checkpoints", NULL, NULL);
    ASSERT_CONTAINS(r.body, "\"held\":false");
    ASSERT(!strstr(r.body, "\"held\":true"));
    http_free(&r);
    server_down(&srv);
    /* a checkpoint no report has reached is refused (the library's rule,
     * the same through the CLI and the service) */
    server_up(&srv, db, NULL);
    fixture_sql(db, "DELETE FROM checkpoints WHERE step = 12; DELETE FROM lane_reports; "
                    "DELETE FROM step_blocks; DELETE FROM steps WHERE key = (1 << 40) + 12; "
                    "UPDATE runs SET step_count = 11");
    r = http(&srv, "POST", "/api/runs/base/checkpoints", writer, body);
    ASSERT_EQ_INT(r.status, 400);
    ASSERT_CONTAINS(r.body, "no report has reached that step");
    http_free(&r);
    server_down(&srv);
    free(state);
}

/* The recovery-manifest path checks the same: a manifest whose checkpoint
 * state was changed, and re-signed as a forger who knows the format would,
 * is refused naming step and lane, and nothing is recorded. */
TEST(resume_from_a_forged_manifest_state_is_refused)
{
    setup();
    free(ordo_ok(A("run", recipe, "--db", db, "--name", "base", "--world-size", "4", "--steps",
                   "40", "--quiet", "--checkpoint-every", "20"),
                 0));
    ordo_ledger *ledger = fixture_open("ledger.db");
    char *text = NULL;
    ordo_error err;
    ASSERT_OK(ordo_recovery_manifest(ledger, fixture_run_id(ledger, "base"), 8, 40, 5, &text, &err),
              &err);
    ordo_ledger_close(ledger);
    json_t *m = json_loads(text, 0, NULL);
    ordo_free(text);
    json_t *checkpoint = json_object_get(m, "checkpoint");
    const char *b64 = json_string_value(json_object_get(checkpoint, "state"));
    size_t len = strlen(b64);
    unsigned char *raw = malloc(len);
    int n = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)len);
    n -= (b64[len - 1] == '=') + (b64[len - 2] == '=');
    ordo__state s;
    ASSERT_OK(ordo__state_decode(raw, (size_t)n, &s, &err), &err);
    free(raw);
    s.lanes[3].positions[0].offset += 1;
    unsigned char *forged = NULL;
    size_t size = 0;
    ASSERT_OK(ordo__state_encode(&s, &forged, &size, &err), &err);
    ordo__state_free(&s);
    char *forged_b64 = malloc(4 * ((size + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)forged_b64, forged, (int)size);
    free(forged);
    json_object_set_new(checkpoint, "state", json_string(forged_b64));
    free(forged_b64);
    json_object_del(m, "sha256");
    char *body = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
    unsigned char digest[ORDO_DIGEST_SIZE];
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_sha256(body, strlen(body), digest);
    ordo_digest_to_hex(digest, hex);
    free(body);
    json_object_set_new(m, "sha256", json_string(hex));
    body = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(m);
    test_write_file(test_path("forged.json"), body, strlen(body));
    free(body);
    cli_result r = run_ordo(NULL, A("resume", "--manifest", test_path("forged.json"), "--as",
                                    "forged", "--steps", "60", "--db", db, "--quiet"));
    ASSERT_EQ_INT(r.code, 1);
    ASSERT_CONTAINS(r.err, "refused");
    ASSERT_CONTAINS(r.err, "lane 3");
    ASSERT_CONTAINS(r.err, "step 40");
    cli_result_free(&r);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM runs"), 1);
    ASSERT_EQ_INT(fixture_int(db, "SELECT count(*) FROM segments"), 1);
}
