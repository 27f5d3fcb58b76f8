/* Fuzzes the recipe parser and canonicalizer, and the reader of a stored
 * recipe's mixture alone (the views' targets), with arbitrary JSON text. */
#include <stdlib.h>
#include <string.h>

#include "testing.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* A mixture that reads gives weights summing to 1 at any step. */
static void mixture_alone(const unsigned char *data, size_t size)
{
    ordo_recipe *recipe = NULL;
    ordo_error err;
    if (ordo__mixture_read((const char *)data, size, &recipe, &err) != ORDO_OK)
        return;
    int n = (int)recipe->source_count;
    double *weights = calloc((size_t)n, sizeof *weights);
    const int64_t steps[] = {1, 2, 1000, ORDO_STEP_MAX};
    for (size_t i = 0; weights && i < sizeof steps / sizeof steps[0]; i++) {
        if (ordo_recipe_step_weights(recipe, steps[i], weights, &err) != ORDO_OK)
            abort();
        double total = 0;
        for (int s = 0; s < n; s++)
            total += weights[s];
        if (total < 1 - 1e-6 || total > 1 + 1e-6)
            abort();
    }
    free(weights);
    ordo_recipe_free(recipe);
}

/* A recipe that parses: its weights at any step are normalised, and its
 * canonical form parses to the same id. */
static void parsed(const unsigned char *data, size_t size)
{
    ordo_error err;
    ordo_recipe *recipe = NULL;
    /* paths resolve in a folder with no shards: globs match nothing */
    if (ordo_recipe_parse((const char *)data, size, "/nonexistent-ordo-fuzz", 0, &recipe, &err) !=
        ORDO_OK)
        return;
    ordo_recipe_info info;
    ordo_recipe_describe(recipe, &info);
    double *weights = calloc((size_t)info.source_count, sizeof *weights);
    static const int64_t steps[] = {1, 2, 100, 801, 1000000, ORDO_STEP_MAX};
    for (size_t i = 0; weights && i < sizeof steps / sizeof *steps; i++) {
        double sum = 0;
        if (ordo_recipe_step_weights(recipe, steps[i], weights, &err) != ORDO_OK)
            abort();
        for (int s = 0; s < info.source_count; s++)
            sum += weights[s] < 0 ? 2 : weights[s];
        if (sum < 1 - 1e-6 || sum > 1 + 1e-6)
            abort();
    }
    free(weights);
    const char *resolved = ordo_recipe_canonical(recipe);
    ordo_recipe *again = NULL;
    if (ordo_recipe_parse(resolved, strlen(resolved), "/nonexistent-ordo-fuzz", 0, &again, &err) ==
        ORDO_OK) {
        if (strcmp(ordo_recipe_id(again), ordo_recipe_id(recipe)) != 0)
            abort();
        ordo_recipe_free(again);
    }
    ordo_recipe_free(recipe);
}

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
    parsed(data, size);
    mixture_alone(data, size);
    return 0;
}
