/* Stored recipes: put by content id, get by id (docs/ledger.md). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"

static char *recipe_name(const char *canonical)
{
    json_t *root = json_loads(canonical, 0, NULL);
    const char *name = json_string_value(json_object_get(root, "name"));
    char *copy = NULL;
    if (name && *name) {
        copy = ordo__strdup(name);
        if (copy && strlen(copy) > ORDO_NAME_MAX) {
            size_t cut = ORDO_NAME_MAX; /* never inside a UTF-8 sequence */
            while (cut > 0 && ((unsigned char)copy[cut] & 0xC0) == 0x80)
                cut--;
            copy[cut] = '\0';
        }
    }
    json_decref(root);
    return copy;
}

/* A recipe's positive whole-number field: 0 when absent, -1 when it is
 * anything else. */
static json_int_t recipe_count(json_t *recipe, const char *key)
{
    json_t *v = json_object_get(recipe, key);
    if (!v)
        return 0;
    return json_is_integer(v) && json_integer_value(v) > 0 ? json_integer_value(v) : -1;
}

/* What any stored recipe must hold, even one of a loader that is not ordo
 * (only fields it has are checked): lanes and global batch positive whole
 * numbers, the batch divisible by the lanes. */
static ordo_status check_counts(const char *canonical, ordo_error *err)
{
    json_t *root = json_loads(canonical, 0, NULL);
    if (!root)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a recipe");
    json_int_t lanes = recipe_count(root, "lanes"), batch = recipe_count(root, "global_batch");
    json_decref(root);
    if (lanes < 0 || batch < 0)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: 'lanes' and 'global_batch' must be "
                           "positive whole numbers");
    if (lanes > 0 && batch > 0 && batch % lanes != 0)
        return ordo__error(err, ORDO_INVALID,
                           "global_batch (%lld) must be divisible by lanes "
                           "(%lld)",
                           (long long)batch, (long long)lanes);
    return ORDO_OK;
}

/* After an insert that changed nothing: the stored body must be ours. */
static ordo_status check_same_body(ordo_ledger *ledger, const char *id, const char *canonical,
                                   ordo_error *err)
{
    char *stored = NULL;
    ordo_status status = ordo_recipe_get(ledger, id, &stored, err);
    if (status == ORDO_OK && strcmp(stored, canonical) != 0)
        status =
            ordo__error(err, ORDO_CONFLICT, "recipe id %s is recorded with a different body", id);
    free(stored);
    return status;
}

/* Stores a recipe under its id; see ordo.h. */
ordo_status ordo_recipe_put(ordo_ledger *ledger, const char *json, size_t len,
                            char id[ORDO_DIGEST_HEX_SIZE], ordo_error *err)
{
    char *canonical = NULL, *name = NULL;
    ordo_status status = ordo__writable(ledger, err);
    if (status == ORDO_OK)
        status = ordo_recipe_canonicalize(json, len, &canonical, id, err);
    if (status == ORDO_OK)
        status = check_counts(canonical, err);
    if (status != ORDO_OK)
        goto done;
    name = recipe_name(canonical);
    status = ordo__sql_exec(ledger,
                            "INSERT INTO recipes (id, name, canonical) VALUES (?1, ?2, ?3) "
                            "ON CONFLICT (id) DO NOTHING",
                            ORDO__BIND(ORDO__TEXT(id), ORDO__TEXT(name), ORDO__TEXT(canonical)),
                            "storing recipe", err);
    if (status == ORDO_OK && sqlite3_changes(ledger->db) == 0)
        status = check_same_body(ledger, id, canonical, err);
    else if (status == ORDO_OK)
        status = ordo__ok(err);
done:
    free(canonical);
    free(name);
    return status;
}

/* Reads a recipe's canonical JSON by id. */
ordo_status ordo_recipe_get(ordo_ledger *ledger, const char *id, char **canonical, ordo_error *err)
{
    *canonical = NULL;
    unsigned char digest[ORDO_DIGEST_SIZE];
    char normalized[ORDO_DIGEST_HEX_SIZE];
    ordo_error hex_err;
    if (ordo_digest_from_hex(id, digest, &hex_err) != ORDO_OK)
        return ordo__error(err, ORDO_INVALID, "recipe id: %s", hex_err.message);
    ordo_digest_to_hex(digest, normalized);
    ordo_status status = ordo__sql_row(ledger, "SELECT canonical FROM recipes WHERE id = ?1",
                                       ORDO__BIND(ORDO__TEXT(normalized)), ordo__read_text,
                                       canonical, "reading recipe", err);
    if (status == ORDO_NOTFOUND)
        return ordo__error(err, ORDO_NOTFOUND, "recipe %s is not in the ledger", normalized);
    if (status == ORDO_OK && !*canonical)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a recipe");
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* A stored recipe's lane count; see ordo.h. */
ordo_status ordo_recipe_lanes(ordo_ledger *ledger, const char *id, int *lanes, ordo_error *err)
{
    *lanes = 0;
    char *canonical = NULL;
    ordo_status status = ordo_recipe_get(ledger, id, &canonical, err);
    if (status != ORDO_OK)
        return status;
    json_t *root = json_loads(canonical, 0, NULL);
    free(canonical);
    if (!root)
        return ordo__error(err, ORDO_NOMEM, "out of memory reading recipe %s", id);
    json_int_t count = recipe_count(root, "lanes");
    json_decref(root);
    if (count < 1 || count > ORDO_LANES_MAX)
        return ordo__error(err, ORDO_INVALID, "recipe %s has no 'lanes'", id);
    *lanes = (int)count;
    return ordo__ok(err);
}
