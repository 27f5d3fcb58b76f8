/* Applies migrations/NNNN_*.sql (compiled in) under PRAGMA user_version. */
#include <stdio.h>
#include <stdlib.h>

#include "embedded.h"
#include "sql.h"
#include "migrate.h"
#include "step_blocks.h"

/* The newest schema version: one per migration file. */
int ordo_schema_version_latest(void)
{
    return (int)ordo__migrations_count;
}

static int current_version(ordo_ledger *ledger)
{
    return ordo_ledger_schema_version(ledger);
}

/* Runs migration `version` (1-based) in its own transaction, unless another
 * connection applied it while this one waited for the write lock. */
static ordo_status apply_one(ordo_ledger *ledger, int version, ordo_error *err)
{
    const struct ordo__embedded *file = &ordo__migrations[version - 1];
    if (atoi(file->name) != version)
        return ordo__error(err, ORDO_DB, "migration '%s' is out of order: expected %04d_*.sql",
                           file->name, version);
    ordo_status status = ordo__begin(ledger, err);
    if (status != ORDO_OK)
        return status;
    int now = current_version(ledger);
    if (now >= version) {
        ordo__rollback(ledger);
        return ORDO_OK;
    }
    char *message = NULL;
    if (sqlite3_exec(ledger->db, file->data, NULL, NULL, &message) != SQLITE_OK) {
        status = ordo__error(err, ORDO_DB, "ledger '%s': migration %s failed: %s", ledger->path,
                             file->name, message ? message : "unknown error");
        sqlite3_free(message);
        ordo__rollback(ledger);
        return status;
    }
    if (version == 3 && (status = ordo__step_blocks_rebuild(ledger, err)) != ORDO_OK) {
        ordo__rollback(ledger);
        return status;
    }
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", version);
    if (sqlite3_exec(ledger->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        status = ordo__db_error(ledger, err, sql);
        ordo__rollback(ledger);
        return status;
    }
    return ordo__commit(ledger, err);
}

/* Applies every pending migration in order; see ordo.h. */
ordo_status ordo_ledger_migrate(ordo_ledger *ledger, int *from, int *to, ordo_error *err)
{
    int start = current_version(ledger);
    if (from)
        *from = start;
    if (to)
        *to = start;
    if (start < 0)
        return ordo__db_error(ledger, err, "reading schema version");
    int latest = ordo_schema_version_latest();
    if (start > latest)
        return ordo__error(err, ORDO_VERSION,
                           "ledger '%s' has schema version %d, newer than this ordo's %d: "
                           "use a newer ordo",
                           ledger->path, start, latest);
    for (int version = start + 1; version <= latest; version++) {
        ordo_status status = apply_one(ledger, version, err);
        if (status != ORDO_OK)
            return status;
        if (to)
            *to = version;
    }
    return ordo__ok(err);
}
