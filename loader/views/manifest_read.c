/* Reading a recovery manifest back: what a restarted job resumes from. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/* The expected digests, in step order from `first` on; 0, or the 1-based
 * position of the first malformed one. */
static int expected_digests(json_t *list, int64_t first, ordo_manifest *m)
{
    size_t n = json_array_size(list);
    m->expected = malloc((n ? n : 1) * ORDO_DIGEST_SIZE);
    if (!m->expected)
        return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(list, i);
        ordo_error err;
        if (json_integer_value(json_object_get(e, "step")) != first + (int64_t)i ||
            ordo_digest_from_hex(json_string_value(json_object_get(e, "batch_digest")),
                                 m->expected + i * ORDO_DIGEST_SIZE, &err) != ORDO_OK)
            return (int)i + 1;
    }
    m->expected_count = n;
    return 0;
}

static ordo_status read_checkpoint(json_t *root, ordo_manifest *m, ordo_error *err)
{
    json_t *checkpoint = json_object_get(root, "checkpoint");
    const char *state = json_string_value(json_object_get(checkpoint, "state"));
    m->checkpoint.step = json_integer_value(json_object_get(checkpoint, "step"));
    m->checkpoint.lanes = (int)json_integer_value(json_object_get(checkpoint, "lanes"));
    m->world_size = (int)json_integer_value(json_object_get(root, "world_size"));
    if (!state ||
        ordo_base64_decode(state, strlen(state), &m->checkpoint.state, &m->checkpoint.state_size,
                           NULL) != ORDO_OK ||
        m->checkpoint.step < 1 || m->world_size < 1)
        return ordo__error(err, ORDO_INVALID, "manifest: bad checkpoint or world size");
    int bad = expected_digests(json_object_get(root, "expected"), m->checkpoint.step + 1, m);
    if (bad < 0)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    if (bad)
        return ordo__error(err, ORDO_INVALID, "manifest: expected digest %d is malformed", bad);
    return ORDO_OK;
}

static ordo_status read_recipe(ordo_ledger *ledger, json_t *root, const char *data_root,
                               ordo_manifest *m, ordo_error *err)
{
    const char *root_dir =
        data_root ? data_root : json_string_value(json_object_get(root, "data_root"));
    char *canonical = json_dumps(json_object_get(root, "recipe"), JSON_COMPACT | JSON_SORT_KEYS);
    ordo_error why;
    ordo_status status =
        canonical ? ordo_recipe_parse_with(canonical, strlen(canonical), root_dir ? root_dir : ".",
                                           ORDO_RECIPE_VERIFY_SHARDS, ledger, &m->recipe, &why)
                  : ordo__error(&why, ORDO_NOMEM, "out of memory");
    free(canonical);
    if (status == ORDO_OK)
        status = ordo_recipe_index(m->recipe, ledger, NULL, NULL, &why);
    if (status == ORDO_OK && strcmp(ordo_recipe_id(m->recipe), m->run.recipe_id) != 0)
        return ordo__error(err, ORDO_INVALID,
                           "manifest: its recipe does not hash to its recipe_id");
    if (status != ORDO_OK)
        return ordo__error(err, status, "refused: %s", why.message);
    return ORDO_OK;
}

static ordo_status read_manifest(ordo_ledger *ledger, json_t *root, const char *data_root,
                                 ordo_manifest *m, ordo_error *err)
{
    const char *run = json_string_value(json_object_get(root, "run"));
    const char *recipe_id = json_string_value(json_object_get(root, "recipe_id"));
    if (!run || ordo_run_get(ledger, run, &m->run, NULL) != ORDO_OK)
        return ordo__error(err, ORDO_NOTFOUND, "manifest: run '%s' is not in this ledger",
                           run ? run : "");
    if (strcmp(m->run.recipe_id, recipe_id ? recipe_id : "") != 0)
        return ordo__error(err, ORDO_INVALID, "manifest: recipe differs from run '%s''s", run);
    ordo_status status = read_checkpoint(root, m, err);
    return status == ORDO_OK ? read_recipe(ledger, root, data_root, m, err) : status;
}

/* Checks and reads a manifest against the ledger; see ordo.h. */
ordo_status ordo_recovery_manifest_read(ordo_ledger *ledger, const char *json, size_t len,
                                        const char *data_root, ordo_manifest **manifest,
                                        ordo_error *err)
{
    *manifest = NULL;
    ordo_error why;
    if (ordo_recovery_manifest_check(json, len, &why) != ORDO_OK)
        return ordo__error(err, why.status, "refused: %s", why.message);
    ordo_manifest *m = calloc(1, sizeof *m);
    json_t *root = m ? json_loadb(json, len, 0, NULL) : NULL;
    ordo_status status = !m      ? ordo__error(err, ORDO_NOMEM, "out of memory")
                         : !root ? ordo__error(err, ORDO_NOMEM, "out of memory reading a manifest")
                                 : read_manifest(ledger, root, data_root, m, err);
    json_decref(root);
    if (status != ORDO_OK) {
        ordo_manifest_free(m);
        return status;
    }
    *manifest = m;
    return ordo__ok(err);
}

/* Frees a manifest and what it owns; see ordo.h. */
void ordo_manifest_free(ordo_manifest *manifest)
{
    if (!manifest)
        return;
    ordo_recipe_free(manifest->recipe);
    free(manifest->checkpoint.state);
    free(manifest->expected);
    free(manifest);
}
