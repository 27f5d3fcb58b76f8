/* Recovery manifests: everything a restarted job needs to resume a run at
 * a new world size, and the digests its first steps must have. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/sql.h"
#include "pipeline/pipeline.h"

static json_t *rank_lanes(int lanes, int world)
{
    json_t *plan = json_array();
    for (int r = 0; r < world; r++) {
        json_t *owned = json_array();
        for (int l = r * (lanes / world); l < (r + 1) * (lanes / world); l++)
            json_array_append_new(owned, json_integer(l));
        json_array_append_new(plan, owned);
    }
    return plan;
}

static json_t *lane_states(const ordo_checkpoint *c, ordo_error *err)
{
    ordo__state s;
    if (ordo__state_decode(c->state, c->state_size, &s, err) != ORDO_OK)
        return NULL;
    json_t *list = json_array();
    for (uint64_t i = 0; i < s.lane_count; i++)
        json_array_append_new(list,
                              json_pack("{s:I, s:I, s:I}", "lane", (json_int_t)s.lanes[i].lane,
                                        "flush_epoch", (json_int_t)s.lanes[i].epoch, "delivered",
                                        (json_int_t)s.lanes[i].delivered));
    ordo__state_free(&s);
    return list;
}

typedef struct {
    json_t *list;
} expected_scan;

static int add_expected(const ordo_step *s, void *context)
{
    expected_scan *e = context;
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(s->batch_digest, hex);
    json_array_append_new(
        e->list, json_pack("{s:I, s:s}", "step", (json_int_t)s->step, "batch_digest", hex));
    return 0;
}

/* The SHA-256 (hex) of a manifest's canonical text without "sha256". */
static int manifest_digest(json_t *manifest, char hex[ORDO_DIGEST_HEX_SIZE])
{
    json_t *copy = json_copy(manifest);
    json_object_del(copy, "sha256");
    char *text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(copy);
    if (!text)
        return -1;
    unsigned char digest[ORDO_DIGEST_SIZE];
    ordo_sha256(text, strlen(text), digest);
    free(text);
    ordo_digest_to_hex(digest, hex);
    return 0;
}

static ordo_status build(ordo_ledger *ledger, const ordo_run_info *run, int world,
                         const ordo_checkpoint *c, int expected, json_t **out, ordo_error *err)
{
    char *canonical = NULL;
    ordo_status status = ordo_recipe_get(ledger, run->recipe_id, &canonical, err);
    if (status != ORDO_OK)
        return status;
    json_t *recipe = json_loads(canonical, 0, NULL);
    ordo_free(canonical);
    json_t *lanes = lane_states(c, err);
    char *state = ordo__base64_encode(c->state, c->state_size);
    expected_scan e = {json_array()};
    if (lanes && state)
        status = ordo_steps_scan(ledger, run->id, c->step + 1, c->step + expected, add_expected, &e,
                                 err);
    else if (!lanes)
        status = err ? err->status : ORDO_INVALID;
    json_t *m = NULL;
    if (status == ORDO_OK && state && recipe)
        m = json_pack("{s:s, s:s, s:s, s:o, s:i, s:i, s:s, s:o, s:I, s:I, s:{s:I, s:i, s:s}, "
                      "s:o, s:o}",
                      "format", "ordo-recovery-1", "run", run->name, "recipe_id", run->recipe_id,
                      "recipe", json_incref(recipe), "lanes", run->lanes, "world_size", world,
                      "lane_binding", "logical", "rank_lanes", rank_lanes(run->lanes, world),
                      "checkpoint_step", (json_int_t)c->step, "resume_at_step",
                      (json_int_t)(c->step + 1), "checkpoint", "step", (json_int_t)c->step, "lanes",
                      c->lanes, "state", state, "lane_state", json_incref(lanes), "expected",
                      json_incref(e.list));
    json_decref(recipe);
    json_decref(lanes);
    json_decref(e.list);
    free(state);
    if (status == ORDO_OK && !m)
        status = ordo__error(err, ORDO_NOMEM, "out of memory writing a manifest");
    if (status == ORDO_OK)
        json_object_set_new(m, "data_root",
                            run->data_root[0] ? json_string(run->data_root) : json_null());
    char hex[ORDO_DIGEST_HEX_SIZE];
    if (status == ORDO_OK && manifest_digest(m, hex) != 0)
        status = ordo__error(err, ORDO_NOMEM, "out of memory writing a manifest");
    if (status == ORDO_OK)
        json_object_set_new(m, "sha256", json_string(hex));
    if (status != ORDO_OK)
        json_decref(m);
    else
        *out = m;
    return status;
}

/* The recovery manifest of a run; see ordo.h. */
ordo_status ordo_recovery_manifest(ordo_ledger *ledger, int64_t run_id, int world_size,
                                   int64_t step, int expected_steps, char **json, ordo_error *err)
{
    *json = NULL;
    ordo_run_info run;
    ordo_status status = ordo__run_get_id(ledger, run_id, &run, err);
    if (status != ORDO_OK)
        return status;
    if (world_size < 1 || world_size > 65536 || run.lanes % world_size != 0)
        return ordo__error(err, ORDO_INVALID, "lanes (%d) must be divisible by world size (%d)",
                           run.lanes, world_size);
    if (expected_steps < 0 || expected_steps > 10000)
        return ordo__error(err, ORDO_INVALID, "expected steps (%d) must be 0 to 10000",
                           expected_steps);
    ordo_checkpoint c;
    status = ordo_checkpoint_get(ledger, run.id, step, &c, err);
    if (status == ORDO_NOTFOUND && step) /* named by its name */
        return ordo__error(err, status, "run '%s' has no checkpoint at step %lld", run.name,
                           (long long)step);
    if (status == ORDO_NOTFOUND)
        return ordo__error(err, status, "run '%s' has no checkpoints", run.name);
    if (status != ORDO_OK)
        return status;
    if (c.lanes != run.lanes)
        status = ordo__error(err, ORDO_INVALID,
                             "the checkpoint at step %lld covers %d lanes, the run has %d "
                             "(a rank-bound run cannot be resumed elastically)",
                             (long long)c.step, c.lanes, run.lanes);
    json_t *m = NULL;
    if (status == ORDO_OK)
        status = build(ledger, &run, world_size, &c, expected_steps, &m, err);
    ordo_checkpoint_free(&c);
    if (status != ORDO_OK)
        return status;
    *json = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(m);
    return *json ? ordo__ok(err) : ordo__error(err, ORDO_NOMEM, "out of memory");
}

/* Checks a manifest's own SHA-256 and shape; see ordo.h. */
ordo_status ordo_recovery_manifest_check(const char *json, size_t len, ordo_error *err)
{
    json_error_t jerr;
    json_t *m = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!m)
        return ordo__error(err, ORDO_INVALID,
                           "manifest: malformed JSON at line %d, column %d: "
                           "%s",
                           jerr.line, jerr.column, jerr.text);
    const char *claimed = json_string_value(json_object_get(m, "sha256"));
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_status status = ORDO_OK;
    if (!json_is_object(m) || strcmp(json_string_value(json_object_get(m, "format"))
                                         ? json_string_value(json_object_get(m, "format"))
                                         : "",
                                     "ordo-recovery-1") != 0)
        status = ordo__error(err, ORDO_INVALID, "manifest: not an ordo-recovery-1 manifest");
    else if (!claimed || manifest_digest(m, hex) != 0 || strcmp(hex, claimed) != 0)
        status = ordo__error(err, ORDO_INVALID,
                             "manifest: its SHA-256 does not match its "
                             "content (changed or damaged in transit)");
    json_decref(m);
    return status == ORDO_OK ? ordo__ok(err) : status;
}
