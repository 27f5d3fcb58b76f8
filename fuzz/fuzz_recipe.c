/* Fuzzes the recipe parser and canonicalizer with arbitrary JSON text. */
#include <stdlib.h>
#include <string.h>

#include "ordo.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char id[ORDO_DIGEST_HEX_SIZE];
    char *canonical = NULL;
    ordo_error err;
    if (ordo_recipe_canonicalize((const char *)data, size, &canonical, id, &err) == ORDO_OK) {
        /* canonical form is a fixed point */
        char *again = NULL;
        char id2[ORDO_DIGEST_HEX_SIZE];
        if (ordo_recipe_canonicalize(canonical, strlen(canonical), &again, id2, &err) != ORDO_OK ||
            strcmp(again, canonical) != 0 || strcmp(id, id2) != 0)
            abort();
        ordo_free(again);
        ordo_free(canonical);
    }
    ordo_recipe *recipe = NULL;
    /* paths resolve in a folder with no shards: globs match nothing */
    if (ordo_recipe_parse((const char *)data, size, "/nonexistent-ordo-fuzz", 0, &recipe, &err) ==
        ORDO_OK)
        ordo_recipe_free(recipe);
    return 0;
}
