/* GET /api/recipes/{id}/plan: what a rank needs to open the recipe without
 * hashing or indexing the corpus (docs/api.md). The document is the
 * library's (ordo_recipe_plan_export), served as it wrote it. */
#include <string.h>

#include "server.h"

static int is_recipe_id(const char *id)
{
    size_t n = strlen(id);
    return n == ORDO_DIGEST_HEX_SIZE - 1 && strspn(id, "0123456789abcdef") == n;
}

/* GET /api/recipes/{id}/plan */
response api_recipe_plan(const char *id)
{
    if (!is_recipe_id(id))
        return json_error(400, "invalid",
                          "'%.80s' is not a recipe id (64 lowercase hex characters)", id);
    ordo_error err;
    ordo_ledger *ledger = server_ledger(&err);
    char *plan = NULL;
    if (!ledger || ordo_recipe_plan_export(ledger, id, &plan, NULL, &err) != ORDO_OK)
        return status_error(&err);
    return (response){.status = 200, .owned_text = plan, .content_type = "application/json"};
}
