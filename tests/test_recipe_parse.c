/* Digests and recipes: hex forms, batch digests, canonical JSON, ids. */
#include "fixtures.h"

TEST(digest_hex_round_trip_and_sha256_vector)
{
    unsigned char digest[ORDO_DIGEST_SIZE], back[ORDO_DIGEST_SIZE];
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_sha256("", 0, digest);
    ordo_digest_to_hex(digest, hex);
    ASSERT_EQ_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ordo_error err;
    ASSERT_OK(ordo_digest_from_hex("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
                                   back, &err), &err);
    ASSERT(memcmp(digest, back, ORDO_DIGEST_SIZE) == 0);
}

TEST(digest_hex_refuses_wrong_length_and_characters)
{
    unsigned char digest[ORDO_DIGEST_SIZE];
    ordo_error err;
    ASSERT_STATUS(ordo_digest_from_hex("abc", digest, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "got 3");
    ASSERT_STATUS(ordo_digest_from_hex("", digest, &err), ORDO_INVALID, &err);
    char long_hex[80];
    memset(long_hex, 'a', 65);
    long_hex[65] = '\0';
    ASSERT_STATUS(ordo_digest_from_hex(long_hex, digest, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "more than 64");
    char bad[65];
    memset(bad, '0', 64);
    bad[64] = '\0';
    bad[17] = 'g';
    ASSERT_STATUS(ordo_digest_from_hex(bad, digest, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "offset 17");
    ASSERT_STATUS(ordo_digest_from_hex(NULL, digest, &err), ORDO_INVALID, &err);
}

TEST(batch_digest_is_sha256_of_lane_digests)
{
    unsigned char lanes[2 * ORDO_DIGEST_SIZE], batch[ORDO_DIGEST_SIZE];
    ordo_sha256("a", 1, lanes);
    ordo_sha256("b", 1, lanes + ORDO_DIGEST_SIZE);
    ordo_batch_digest(lanes, 2, batch);
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(batch, hex);
    ASSERT_EQ_STR(hex, "e5a01fee14e0ed5c48714f22180f25ad8365b53f9779f79dc4a3d7e93963f94a");
}

TEST(recipe_canonical_form_and_id)
{
    const char *a = "{ \"b\": {\"d\": 0.5, \"c\": \"\xc3\xa9\"},\n  \"a\": [1, 2] }";
    const char *b = "{\"a\":[1,2],\"b\":{\"c\":\"\\u00e9\",\"d\":0.5}}";
    char *canonical = NULL;
    char id_a[ORDO_DIGEST_HEX_SIZE], id_b[ORDO_DIGEST_HEX_SIZE];
    ordo_error err;
    ASSERT_OK(ordo_recipe_canonicalize(a, strlen(a), &canonical, id_a, &err), &err);
    ASSERT_EQ_STR(canonical, "{\"a\":[1,2],\"b\":{\"c\":\"\xc3\xa9\",\"d\":0.5}}");
    ASSERT_EQ_STR(id_a, "f4c35cd050cc0327f1a54a5cfa6ccbd1bb02f0edeb2abae1ecedbb9892d7d656");
    ordo_free(canonical);
    ASSERT_OK(ordo_recipe_canonicalize(b, strlen(b), NULL, id_b, &err), &err);
    ASSERT_EQ_STR(id_a, id_b);
}

TEST(recipe_bad_json_is_refused_with_position)
{
    char id[ORDO_DIGEST_HEX_SIZE];
    ordo_error err;
    const char *broken = "{\"a\": 1,\n \"b\": }";
    ASSERT_STATUS(ordo_recipe_canonicalize(broken, strlen(broken), NULL, id, &err), ORDO_INVALID,
                  &err);
    ASSERT_CONTAINS(err.message, "line 2");
    ASSERT_CONTAINS(err.message, "column");
    const char *dup = "{\"a\": 1, \"a\": 2}";
    ASSERT_STATUS(ordo_recipe_canonicalize(dup, strlen(dup), NULL, id, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "duplicate");
    ASSERT_STATUS(ordo_recipe_canonicalize("[1]", 3, NULL, id, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "must be an object");
    const char bad_utf8[] = "{\"a\": \"\xff\xfe\"}";
    ASSERT_STATUS(ordo_recipe_canonicalize(bad_utf8, sizeof bad_utf8 - 1, NULL, id, &err),
                  ORDO_INVALID, &err);
    ASSERT_STATUS(ordo_recipe_canonicalize("", 0, NULL, id, &err), ORDO_INVALID, &err);
}

TEST(recipe_put_get_is_idempotent)
{
    ordo_ledger *ledger = fixture_open("r.db");
    char id[ORDO_DIGEST_HEX_SIZE], again[ORDO_DIGEST_HEX_SIZE];
    ordo_error err;
    ASSERT_OK(ordo_recipe_put(ledger, fixture_recipe, strlen(fixture_recipe), id, &err), &err);
    ASSERT_OK(ordo_recipe_put(ledger, fixture_recipe, strlen(fixture_recipe), again, &err), &err);
    ASSERT_EQ_STR(id, again);
    ASSERT_EQ_INT(fixture_int(test_path("r.db"), "SELECT count(*) FROM recipes"), 1);
    char *canonical = NULL;
    ASSERT_OK(ordo_recipe_get(ledger, id, &canonical, &err), &err);
    char expected_id[ORDO_DIGEST_HEX_SIZE];
    ASSERT_OK(ordo_recipe_canonicalize(canonical, strlen(canonical), NULL, expected_id, &err),
              &err);
    ASSERT_EQ_STR(expected_id, id);
    ordo_free(canonical);
    ASSERT_STATUS(ordo_recipe_get(ledger, "00", &canonical, &err), ORDO_INVALID, &err);
    char unknown[ORDO_DIGEST_HEX_SIZE];
    memset(unknown, 'a', 64);
    unknown[64] = '\0';
    ASSERT_STATUS(ordo_recipe_get(ledger, unknown, &canonical, &err), ORDO_NOTFOUND, &err);
    ordo_ledger_close(ledger);
}

TEST(recipe_id_collision_is_refused)
{
    ordo_ledger *ledger = fixture_open("c.db");
    char id[ORDO_DIGEST_HEX_SIZE];
    ordo_error err;
    ASSERT_OK(ordo_recipe_put(ledger, fixture_recipe, strlen(fixture_recipe), id, &err), &err);
    ordo_ledger_close(ledger);
    /* Forge a different body under the same id, as a collision would. */
    fixture_sql(test_path("c.db"), "UPDATE recipes SET canonical = '{\"forged\":1}'");
    ledger = fixture_open("c.db");
    ASSERT_STATUS(ordo_recipe_put(ledger, fixture_recipe, strlen(fixture_recipe), id, &err),
                  ORDO_CONFLICT, &err);
    ASSERT_CONTAINS(err.message, "different body");
    ordo_ledger_close(ledger);
}
