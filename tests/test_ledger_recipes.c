/* Recipes in the ledger: put and get by id, idempotent; a forged body
 * under an existing id is refused. */
#include "fixtures.h"

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
