/* Runs: create, read, list. */
#include <stdlib.h>
#include <string.h>

#include "sql.h"

#define RUN_COLUMNS                                                                                \
    "SELECT r.id, r.name, r.recipe_id, coalesce(rc.name, ''), coalesce(r.group_tag, ''), "         \
    "coalesce(b.name, ''), r.digest_kind, r.created_at, r.lanes, "                                 \
    "coalesce((SELECT world_size FROM segments s WHERE s.run_id = r.id "                           \
    "          ORDER BY ordinal DESC LIMIT 1), 0), "                                               \
    "(SELECT count(*) FROM segments s WHERE s.run_id = r.id), "                                    \
    "r.step_count, "                                                                               \
    "coalesce((SELECT min(key) FROM steps t WHERE t.key " ORDO__SQL_STEP_KEYS(                     \
        "r.id") ") - (r.id << 40), 0), "                                                           \
                "coalesce((SELECT max(key) FROM steps t WHERE t.key " ORDO__SQL_STEP_KEYS(         \
                    "r.id") ") - (r.id << 40), 0), "                                               \
                            "(SELECT count(*) FROM checkpoints c WHERE c.run_id = r.id), "         \
                            "(SELECT count(*) FROM events e WHERE e.run_id = r.id AND e.kind = "   \
                            "'conflict'), "                                                        \
                            "coalesce(r.data_root, ''), r.lane_states "                            \
                            "FROM runs r LEFT JOIN recipes rc ON rc.id = r.recipe_id "             \
                            "LEFT JOIN runs b ON b.id = r.baseline_id "

#define MAX_LANES 65536

/* Run `run_id` exists; NOTFOUND naming it otherwise. */
ordo_status ordo__run_exists(ordo_ledger *ledger, int64_t run_id, ordo_error *err)
{
    if (run_id < 1 || run_id > ORDO__RUN_MAX)
        return ordo__error(err, ORDO_NOTFOUND, "run %lld is not in the ledger", (long long)run_id);
    ordo_status status =
        ordo__sql_row(ledger, "SELECT 1 FROM runs WHERE id = ?1", ORDO__BIND(ORDO__INT(run_id)),
                      NULL, NULL, "reading run", err);
    if (status == ORDO_NOTFOUND)
        return ordo__error(err, ORDO_NOTFOUND, "run %lld is not in the ledger", (long long)run_id);
    return status;
}

static const char *text_column(sqlite3_stmt *stmt, int column)
{
    const char *text = (const char *)sqlite3_column_text(stmt, column);
    return text ? text : "";
}

static ordo_status read_run(sqlite3_stmt *stmt, void *item, ordo_error *err)
{
    (void)err;
    ordo_run_info *info = item;
    memset(info, 0, sizeof *info);
    info->id = sqlite3_column_int64(stmt, 0);
    ordo__copy(info->name, sizeof info->name, text_column(stmt, 1));
    ordo__copy(info->recipe_id, sizeof info->recipe_id, text_column(stmt, 2));
    ordo__copy(info->recipe_name, sizeof info->recipe_name, text_column(stmt, 3));
    ordo__copy(info->group_tag, sizeof info->group_tag, text_column(stmt, 4));
    ordo__copy(info->baseline, sizeof info->baseline, text_column(stmt, 5));
    ordo__copy(info->digest_kind, sizeof info->digest_kind, text_column(stmt, 6));
    ordo__copy(info->created_at, sizeof info->created_at, text_column(stmt, 7));
    info->lanes = sqlite3_column_int(stmt, 8);
    info->world_size = sqlite3_column_int(stmt, 9);
    info->segments = sqlite3_column_int64(stmt, 10);
    info->steps = sqlite3_column_int64(stmt, 11);
    info->first_step = sqlite3_column_int64(stmt, 12);
    info->last_step = sqlite3_column_int64(stmt, 13);
    info->checkpoints = sqlite3_column_int64(stmt, 14);
    info->conflicts = sqlite3_column_int64(stmt, 15);
    ordo__copy(info->data_root, sizeof info->data_root, text_column(stmt, 16));
    info->lane_states = sqlite3_column_int64(stmt, 17);
    return ORDO_OK;
}

/* Reads one run by name. */
ordo_status ordo_run_get(ordo_ledger *ledger, const char *name, ordo_run_info *info,
                         ordo_error *err)
{
    ordo_status status =
        ordo__sql_row(ledger, RUN_COLUMNS "WHERE r.name = ?1",
                      ORDO__BIND(ORDO__TEXT(name ? name : "")), read_run, info, "reading run", err);
    if (status == ORDO_NOTFOUND)
        return ordo__error(err, ORDO_NOTFOUND, "run '%s' is not in the ledger", name ? name : "");
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* Reads run `run_id` (ledger.h): the views and the loader take run ids. */
ordo_status ordo__run_get_id(ordo_ledger *ledger, int64_t run_id, ordo_run_info *info,
                             ordo_error *err)
{
    ordo_status status =
        ordo__sql_row(ledger, RUN_COLUMNS "WHERE r.id = ?1", ORDO__BIND(ORDO__INT(run_id)),
                      read_run, info, "reading run", err);
    if (status == ORDO_NOTFOUND)
        return ordo__error(err, ORDO_NOTFOUND, "run %lld is not in the ledger", (long long)run_id);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* Reads every run in id order into a caller-owned array. */
static ordo_status list_items(ordo_ledger *ledger, ordo_run_info **runs, size_t *count,
                              ordo_error *err)
{
    *runs = NULL;
    *count = 0;
    ordo__rows rows = {
        .item_size = sizeof **runs, .read = read_run, .nomem = "out of memory listing runs"};
    ordo_status status =
        ordo__sql_list(ledger, RUN_COLUMNS "ORDER BY r.id", NULL, &rows, "listing runs", err);
    if (status != ORDO_OK) {
        free(rows.items);
        return status;
    }
    *runs = rows.items;
    *count = rows.count;
    return ordo__ok(err);
}

static ordo_status check_spec(const ordo_run_spec *spec, char recipe_id[ORDO_DIGEST_HEX_SIZE],
                              ordo_error *err)
{
    ordo_status status = ordo__check_run_name(spec->name, "run name", err);
    if (status == ORDO_OK && spec->group_tag)
        status = ordo__check_name(spec->group_tag, "group tag", err);
    if (status == ORDO_OK && spec->baseline)
        status = ordo__check_name(spec->baseline, "baseline run name", err);
    if (status == ORDO_OK && spec->digest_kind) {
        status = ordo__check_name(spec->digest_kind, "digest kind", err);
        if (status == ORDO_OK && strlen(spec->digest_kind) >= 32)
            status = ordo__error(err, ORDO_INVALID, "digest kind is longer than 31 bytes");
    }
    if (status != ORDO_OK)
        return status;
    if (spec->lanes < 1 || spec->lanes > MAX_LANES)
        return ordo__error(err, ORDO_INVALID, "lanes (%d) must be between 1 and %d", spec->lanes,
                           MAX_LANES);
    if (spec->baseline && strcmp(spec->baseline, spec->name) == 0)
        return ordo__error(err, ORDO_INVALID, "run '%s' cannot be its own baseline", spec->name);
    unsigned char digest[ORDO_DIGEST_SIZE];
    ordo_error hex_err;
    if (ordo_digest_from_hex(spec->recipe_id, digest, &hex_err) != ORDO_OK)
        return ordo__error(err, ORDO_INVALID, "recipe id: %s", hex_err.message);
    ordo_digest_to_hex(digest, recipe_id);
    return ORDO_OK;
}

/* An existing run of the same name must match the spec field for field. */
static ordo_status same_run(const ordo_run_info *old, const ordo_run_spec *spec,
                            const char *recipe_id, ordo_error *err)
{
    const char *kind = spec->digest_kind ? spec->digest_kind : "ordo";
    const char *field = NULL;
    if (strcmp(old->recipe_id, recipe_id) != 0)
        field = "recipe";
    else if (old->lanes != spec->lanes)
        field = "lanes";
    else if (strcmp(old->group_tag, spec->group_tag ? spec->group_tag : "") != 0)
        field = "group tag";
    else if (strcmp(old->baseline, spec->baseline ? spec->baseline : "") != 0)
        field = "baseline";
    else if (strcmp(old->digest_kind, kind) != 0)
        field = "digest kind";
    if (field)
        return ordo__error(err, ORDO_CONFLICT, "run '%s' already exists with another %s", old->name,
                           field);
    return ORDO_OK;
}

static ordo_status lookup_id(ordo_ledger *ledger, const char *sql, const char *key, int64_t *id,
                             ordo_error *err)
{
    return ordo__sql_row(ledger, sql, ORDO__BIND(ORDO__TEXT(key)), ordo__read_int64, id, "lookup",
                         err);
}

static ordo_status insert_run(ordo_ledger *ledger, const ordo_run_spec *spec, const char *recipe_id,
                              int64_t *run_id, ordo_error *err)
{
    int64_t recipe_rowid = 0, baseline_id = 0;
    ordo_status status =
        lookup_id(ledger, "SELECT 1 FROM recipes WHERE id = ?1", recipe_id, &recipe_rowid, err);
    if (status == ORDO_NOTFOUND)
        return ordo__error(err, ORDO_NOTFOUND, "recipe %s is not in the ledger", recipe_id);
    if (status == ORDO_OK && spec->baseline) {
        status = lookup_id(ledger, "SELECT id FROM runs WHERE name = ?1", spec->baseline,
                           &baseline_id, err);
        if (status == ORDO_NOTFOUND)
            return ordo__error(err, ORDO_NOTFOUND, "baseline run '%s' is not in the ledger",
                               spec->baseline);
    }
    if (status == ORDO_OK)
        status = ordo__sql_exec(
            ledger,
            "INSERT INTO runs (name, recipe_id, group_tag, baseline_id, lanes, digest_kind, "
            "data_root) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            ORDO__BIND(ORDO__TEXT(spec->name), ORDO__TEXT(recipe_id), ORDO__TEXT(spec->group_tag),
                       baseline_id ? ORDO__INT(baseline_id) : ORDO__NULL, ORDO__INT(spec->lanes),
                       ORDO__TEXT(spec->digest_kind ? spec->digest_kind : "ordo"),
                       ORDO__TEXT(spec->data_root)),
            "creating run", err);
    if (status == ORDO_OK)
        *run_id = sqlite3_last_insert_rowid(ledger->db);
    return status;
}

typedef struct {
    const ordo_run_spec *spec;
    const char *recipe_id;
    int64_t *run_id;
} run_creation;

static ordo_status create_locked(ordo_ledger *ledger, void *context, ordo_error *err)
{
    run_creation *c = context;
    ordo_run_info old;
    ordo_error lookup_err;
    ordo_status status = ordo_run_get(ledger, c->spec->name, &old, &lookup_err);
    if (status == ORDO_OK) {
        status = same_run(&old, c->spec, c->recipe_id, err);
        *c->run_id = old.id;
    } else if (status == ORDO_NOTFOUND) {
        status = insert_run(ledger, c->spec, c->recipe_id, c->run_id, err);
    } else if (err) {
        *err = lookup_err;
    }
    return status;
}

/* Creates a run, or returns the identical existing one; see ordo.h. */
ordo_status ordo_run_create(ordo_ledger *ledger, const ordo_run_spec *spec, int64_t *run_id,
                            ordo_error *err)
{
    char recipe_id[ORDO_DIGEST_HEX_SIZE];
    ordo_status status = check_spec(spec, recipe_id, err);
    if (status == ORDO_OK)
        status =
            ordo__transaction(ledger, create_locked, &(run_creation){spec, recipe_id, run_id}, err);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* Every run: see ordo.h. *list is the caller's (ordo_run_list_free). */
ordo_status ordo_runs_list(ordo_ledger *ledger, ordo_run_list **list, ordo_error *err)
{
    *list = calloc(1, sizeof **list);
    if (!*list)
        return ordo__error(err, ORDO_NOMEM, "out of memory listing run");
    ordo_status status = list_items(ledger, &(*list)->items, &(*list)->count, err);
    if (status != ORDO_OK) {
        free(*list);
        *list = NULL;
    }
    return status;
}

/* Frees a list and what its items own (NULL is fine). */
void ordo_run_list_free(ordo_run_list *list)
{
    if (!list)
        return;
    free(list->items);
    free(list);
}
