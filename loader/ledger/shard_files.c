/* What each shard file was when last hashed: path, size, time, SHA-256
 * (the shard_files table, docs/ledger.md). */
#include <string.h>

#include "sql.h"

/* The digest recorded for a shard file; see ledger.h. */
ordo_status ordo__shard_file_known(ordo_ledger *ledger, const char *path, uint64_t size,
                                   int64_t mtime_ns, unsigned char out[ORDO_DIGEST_SIZE],
                                   int *found, ordo_error *err)
{
    *found = 0;
    if (!ledger)
        return ORDO_OK;
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger, "SELECT sha256 FROM shard_files WHERE path = ?1 AND size_bytes = ?2 AND "
                "mtime_ns = ?3", &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_text(stmt, 1, path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 2, (int64_t)size);
    sqlite3_bind_int64(stmt, 3, mtime_ns);
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && sqlite3_column_bytes(stmt, 0) == ORDO_DIGEST_SIZE) {
        memcpy(out, sqlite3_column_blob(stmt, 0), ORDO_DIGEST_SIZE);
        *found = 1;
    } else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        status = ordo__db_error(ledger, err, "reading what a shard file was");
    }
    sqlite3_finalize(stmt);
    return status;
}

/* Records what a hashed shard file was; see ledger.h. */
ordo_status ordo__shard_file_record(ordo_ledger *ledger, const char *path, uint64_t size,
                                    int64_t mtime_ns, const unsigned char sha256[ORDO_DIGEST_SIZE],
                                    ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger, "INSERT OR REPLACE INTO shard_files (path, size_bytes, mtime_ns, sha256) "
                "VALUES (?1, ?2, ?3, ?4)", &stmt, err);
    if (status == ORDO_OK) {
        sqlite3_bind_text(stmt, 1, path, -1, SQLITE_STATIC);
        sqlite3_bind_int64(stmt, 2, (int64_t)size);
        sqlite3_bind_int64(stmt, 3, mtime_ns);
        sqlite3_bind_blob(stmt, 4, sha256, ORDO_DIGEST_SIZE, SQLITE_STATIC);
        if (sqlite3_step(stmt) != SQLITE_DONE)
            status = ordo__db_error(ledger, err, "recording a shard file");
    }
    sqlite3_finalize(stmt);
    return status;
}
