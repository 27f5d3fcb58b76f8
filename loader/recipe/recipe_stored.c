/* A recipe as the ledger stores it, with the plan the ledger holds for it
 * (chunk tables, token estimates), opened without reading any shard: what
 * a reader of the ledger (the service's audit) plans from. */
#include <stdlib.h>
#include <string.h>

#include "recipe.h"

static ordo_status not_indexed(const ordo_recipe *r, const char *what, const char *name,
                               ordo_error *err)
{
    return ordo__error(err, ORDO_NOTFOUND,
                       "recipe %s is not indexed in this ledger (no %s for '%s'): run ordo index",
                       r->id, what, name);
}

static ordo_status load_plan(ordo_recipe *r, ordo_ledger *ledger, ordo_error *err)
{
    for (uint32_t s = 0; s < r->source_count; s++) {
        ordo__source *src = &r->sources[s];
        for (uint32_t i = 0; i < src->shard_count; i++) {
            ordo__shard *shard = &src->shards[i];
            int found = 0;
            ordo__shard_key key = ordo__shard_key_of(r, src, shard);
            ordo_status status = ordo__chunk_table_load(ledger, shard, &key, &found, err);
            if (status != ORDO_OK)
                return status;
            if (!found)
                return not_indexed(r, "chunk table", shard->path, err);
        }
    }
    ordo_status status = ordo__recipe_finish_plan(r, err);
    for (uint32_t s = 0; status == ORDO_OK && s < r->source_count; s++) {
        ordo__source *src = &r->sources[s];
        ordo__estimate sample = {0};
        int found = 0;
        status = ordo__estimate_load(ledger, r->id, src->name, &sample, &found, err);
        if (status == ORDO_OK && !found)
            return not_indexed(r, "token estimate", src->name, err);
        src->sample_records = sample.records;
        src->sample_bytes = sample.bytes;
        src->sample_tokens = sample.tokens;
    }
    return status;
}

/* Opens a stored recipe with its stored plan; see ordo.h. */
ordo_status ordo_recipe_open_stored(ordo_ledger *ledger, const char *id, const char *data_root,
                                    ordo_recipe **recipe, ordo_error *err)
{
    *recipe = NULL;
    char *canonical = NULL;
    ordo_recipe *r = NULL;
    ordo_status status = ordo_recipe_get(ledger, id, &canonical, err);
    if (status == ORDO_OK)
        status = ordo_recipe_parse(canonical, strlen(canonical), data_root ? data_root : ".", 0, &r,
                                   err);
    if (status == ORDO_OK)
        status = load_plan(r, ledger, err);
    free(canonical);
    if (status != ORDO_OK) {
        ordo_recipe_free(r);
        return status;
    }
    r->planned = 1;
    *recipe = r;
    return ordo__ok(err);
}
