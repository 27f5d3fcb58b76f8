/* Recipes: canonical JSON and content ids (docs/recipe.md). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "recipe.h"

/* Canonical JSON: sorted keys, compact separators, Jansson's number form. */
ordo_status ordo_recipe_canonicalize(const char *json, size_t len, char **canonical,
                                     char id[ORDO_DIGEST_HEX_SIZE], ordo_error *err)
{
    if (canonical)
        *canonical = NULL;
    if (!json)
        return ordo__error(err, ORDO_INVALID, "recipe JSON is missing");
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return ordo__error(err, ORDO_INVALID,
                           "recipe JSON is malformed at line %d, column %d (byte %d): %s",
                           jerr.line, jerr.column, jerr.position, jerr.text);
    if (!json_is_object(root)) {
        json_decref(root);
        return ordo__error(err, ORDO_INVALID, "recipe JSON must be an object");
    }
    char *text = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(root);
    if (!text)
        return ordo__error(err, ORDO_NOMEM, "out of memory canonicalizing a recipe");
    unsigned char digest[ORDO_DIGEST_SIZE];
    ordo_sha256(text, strlen(text), digest);
    ordo_digest_to_hex(digest, id);
    if (canonical)
        *canonical = text;
    else
        free(text);
    return ordo__ok(err);
}
