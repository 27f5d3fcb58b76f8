/* GET /api/recipes/{id}/plan over real HTTP on 127.0.0.1 (port 0): the plan
 * a rank opens the recipe from without hashing the corpus, the library's
 * document byte for byte; unknown, unindexed and malformed ids; read-role
 * authorisation like every other read. */
#include "corpus.h"
#include "fixtures.h"
#include "http.h"

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static void call(const test_server *s, const char *method, const char *path, const char *token,
                 int status, const char *code, const char *needle)
{
    http_result r = http(s, method, path, token, NULL);
    HTTP_EXPECT(&r, status, code, needle);
    http_free(&r);
}

/* A ledger at l.db holding recipe r.json indexed (id into `id`), and a
 * second recipe stored but not indexed (id into `bare`). */
static void indexed_ledger(char id[ORDO_DIGEST_HEX_SIZE], char bare[ORDO_DIGEST_HEX_SIZE])
{
    corpus_jsonl("data", "doc", 2, 80, 20, 300, 61);
    const char *path = corpus_recipe("r.json", 4, 8, 16, 2, 4,
                                     "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], "
                                     "\"weight\": 1}]");
    ordo_ledger *ledger = fixture_open("l.db");
    ordo_error err;
    ordo_recipe *r = NULL;
    ASSERT_OK(ordo_recipe_load_with(path, ledger, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, ledger, NULL, NULL, &err), &err);
    memcpy(id, ordo_recipe_id(r), ORDO_DIGEST_HEX_SIZE);
    ordo_recipe_free(r);
    const char *other = "{\"seed\": 9, \"global_batch\": 8, \"lanes\": 4}";
    ASSERT_OK(ordo_recipe_put(ledger, other, strlen(other), bare, &err), &err);
    ordo_ledger_close(ledger);
}

TEST(server_plan_opens_the_recipe_without_hashing_its_shards)
{
    char id[ORDO_DIGEST_HEX_SIZE], bare[ORDO_DIGEST_HEX_SIZE];
    indexed_ledger(id, bare);
    test_server s;
    server_up(&s, test_path("l.db"), NULL);
    char path[256];
    snprintf(path, sizeof path, "/api/recipes/%s/plan", id);
    http_result r = http(&s, "GET", path, NULL, NULL);
    HTTP_EXPECT(&r, 200, NULL, "\"format\":\"ordo-plan\"");
    ASSERT_CONTAINS(r.headers, "application/json");
    /* the library's document as it wrote it */
    ordo_ledger *ledger = NULL;
    ordo_error err;
    ASSERT_OK(ordo_ledger_open(test_path("l.db"), ORDO_OPEN_READONLY, &ledger, &err), &err);
    char *direct = NULL;
    ASSERT_OK(ordo_recipe_plan_export(ledger, id, &direct, NULL, &err), &err);
    ordo_ledger_close(ledger);
    ASSERT_EQ_STR(r.body, direct);
    ordo_free(direct);
    ordo_recipe *planned = NULL;
    ASSERT_OK(ordo_recipe_open_plan(r.body, strlen(r.body), id, corpus_kept(test_path("")),
                                    &planned, &err),
              &err);
    int hashed = -1;
    ordo_recipe_hashed(planned, &hashed, NULL);
    ASSERT_EQ_INT(hashed, 0);
    ASSERT_EQ_STR(ordo_recipe_id(planned), id);
    ordo_recipe_free(planned);
    http_free(&r);
    /* HEAD is GET without a body; the route is counted in /metrics */
    call(&s, "HEAD", path, NULL, 200, NULL, NULL);
    call(&s, "GET", "/metrics", NULL, 200, NULL, "route=\"plan\",status=\"2xx\"");
    server_down(&s);
}

TEST(server_plan_refuses_unknown_unindexed_and_malformed_ids)
{
    char id[ORDO_DIGEST_HEX_SIZE], bare[ORDO_DIGEST_HEX_SIZE];
    indexed_ledger(id, bare);
    test_server s;
    server_up(&s, test_path("l.db"), NULL);
    const char *unknown = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    char path[512];
    snprintf(path, sizeof path, "/api/recipes/%s/plan", unknown);
    call(&s, "GET", path, NULL, 404, "not_found", unknown);
    snprintf(path, sizeof path, "/api/recipes/%s/plan", bare);
    call(&s, "GET", path, NULL, 404, "not_found", "is not indexed");
    call(&s, "GET", path, NULL, 404, NULL, bare);
    /* not an id: upper case, short, long, other characters, encoded */
    char upper[ORDO_DIGEST_HEX_SIZE];
    for (int i = 0; i < ORDO_DIGEST_HEX_SIZE; i++)
        upper[i] = (char)(id[i] >= 'a' && id[i] <= 'f' ? id[i] - 32 : id[i]);
    snprintf(path, sizeof path, "/api/recipes/%s/plan", upper);
    call(&s, "GET", path, NULL, 400, "invalid", "is not a recipe id");
    call(&s, "GET", "/api/recipes/abc/plan", NULL, 400, "invalid", "'abc' is not a recipe id");
    snprintf(path, sizeof path, "/api/recipes/%s0/plan", id);
    call(&s, "GET", path, NULL, 400, "invalid", NULL);
    call(&s, "GET", "/api/recipes/%27%3Cx%3E%22/plan", NULL, 400, "invalid", "is not a recipe id");
    call(&s, "GET", "/api/recipes/..%2Fx/plan", NULL, 400, "non_canonical_path", NULL);
    call(&s, "GET", "/api/recipes/%FF%FE/plan", NULL, 400, "invalid", NULL);
    /* other spellings are other resources; writes are not taken */
    snprintf(path, sizeof path, "/api/recipes/%s/plans", id);
    call(&s, "GET", path, NULL, 404, "not_found", NULL);
    snprintf(path, sizeof path, "/api/recipes/%s/plan/x", id);
    call(&s, "GET", path, NULL, 404, "not_found", NULL);
    snprintf(path, sizeof path, "/api/recipes/%s/plan", id);
    http_result post = http(&s, "POST", path, make_token(test_path("l.db"), "writer"), "{}");
    HTTP_EXPECT(&post, 405, NULL, NULL);
    http_free(&post);
    call(&s, "GET", path, NULL, 200, NULL, id); /* still up */
    server_down(&s);
}

TEST(server_plan_is_a_read_needing_a_token_off_loopback)
{
    char id[ORDO_DIGEST_HEX_SIZE], bare[ORDO_DIGEST_HEX_SIZE];
    indexed_ledger(id, bare);
    char reader[128];
    snprintf(reader, sizeof reader, "%s", make_token(test_path("l.db"), "reader"));
    char path[256];
    snprintf(path, sizeof path, "/api/recipes/%s/plan", id);
    test_server s;
    server_up(&s, test_path("l.db"), A("--listen", "0.0.0.0:0", "--insecure"));
    call(&s, "GET", path, NULL, 401, "unauthorized", NULL);
    call(&s, "GET", path, "not-a-token", 401, "unauthorized", NULL);
    call(&s, "GET", path, reader, 200, NULL, "\"recipe_id\"");
    server_down(&s);
}
