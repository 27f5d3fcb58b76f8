/* A stored recipe's mixture alone: its sources' names and weights or
 * schedule, and its global batch, read from the canonical JSON without the
 * tokenizer's rank file or any shard, for the views that set a run's
 * delivered shares against their targets. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recipe.h"

#define MAX_SOURCES 1024

/* One source: a unique non-empty name and, without a schedule, a weight
 * finite and >= 0 (the sum is checked after). */
static ordo_status read_source(ordo_recipe *r, json_t *entry, size_t index, int scheduled,
                               ordo_error *err)
{
    const char *name = json_string_value(json_object_get(entry, "name"));
    if (!name || !*name)
        return ordo__error(err, ORDO_INVALID, "recipe: sources[%zu] needs a non-empty 'name'",
                           index);
    for (size_t i = 0; i < index; i++)
        if (strcmp(r->sources[i].name, name) == 0)
            return ordo__error(err, ORDO_INVALID, "recipe: source name '%s' is used twice", name);
    if (!(r->sources[index].name = ordo__strdup(name)))
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a recipe");
    r->source_count = (uint32_t)index + 1;
    if (scheduled)
        return ORDO_OK;
    json_t *weight = json_object_get(entry, "weight");
    double w = json_number_value(weight);
    if (!json_is_number(weight) || !isfinite(w) || w < 0 || w > 1e300)
        return ordo__error(err, ORDO_INVALID,
                           "recipe: source '%s': 'weight' must be a finite number >= 0", name);
    r->sources[index].weight = w;
    return ORDO_OK;
}

static ordo_status read_sources(ordo_recipe *r, json_t *root, ordo_error *err)
{
    json_t *sources = json_object_get(root, "sources"), *entry;
    if (!json_is_array(sources) || json_array_size(sources) == 0 ||
        json_array_size(sources) > MAX_SOURCES)
        return ordo__error(err, ORDO_INVALID, "recipe: 'sources' must be an array of 1 to %d",
                           MAX_SOURCES);
    if (!(r->sources = calloc(json_array_size(sources), sizeof *r->sources)))
        return ordo__error(err, ORDO_NOMEM, "out of memory reading a recipe");
    int scheduled = json_object_get(root, "schedule") != NULL;
    double total = 0;
    size_t i;
    json_array_foreach(sources, i, entry)
    {
        if (!json_is_object(entry))
            return ordo__error(err, ORDO_INVALID, "recipe: sources[%zu] must be an object", i);
        ordo_status status = read_source(r, entry, i, scheduled, err);
        if (status != ORDO_OK)
            return status;
        total += r->sources[i].weight;
    }
    if (!scheduled && !(total > 0 && isfinite(total)))
        return ordo__error(err, ORDO_INVALID,
                           "recipe: the sources' weights must have a positive finite sum");
    return ORDO_OK;
}

/* Reads the mixture of recipe JSON; see recipe.h. */
ordo_status ordo__mixture_read(const char *json, size_t len, ordo_recipe **out, ordo_error *err)
{
    *out = NULL;
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(root)) {
        json_decref(root);
        return ordo__error(err, ORDO_INVALID, "recipe JSON must be an object");
    }
    ordo_recipe *r = calloc(1, sizeof *r);
    ordo_status status = r ? ORDO_OK : ordo__error(err, ORDO_NOMEM, "out of memory");
    if (r)
        r->bos_id = ORDO__NO_TOKEN, r->eos_id = ORDO_BYTES_EOT; /* no tokenizer is read */
    json_t *batch = json_object_get(root, "global_batch");
    if (status == ORDO_OK && batch &&
        (!json_is_integer(batch) || json_integer_value(batch) < 1 ||
         json_integer_value(batch) > 1 << 24))
        status = ordo__error(err, ORDO_INVALID,
                             "recipe: 'global_batch' must be an integer from 1 to %d", 1 << 24);
    if (status == ORDO_OK) {
        r->global_batch = batch ? (int)json_integer_value(batch) : 0;
        status = read_sources(r, root, err);
    }
    if (status == ORDO_OK)
        status = ordo__mixture_parse(r, root, err);
    json_decref(root);
    if (status != ORDO_OK) {
        ordo_recipe_free(r);
        return status;
    }
    *out = r;
    return ordo__ok(err);
}
