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
    ordo_status status =
        ordo__sql_row(ledger,
                      "SELECT sha256 FROM shard_files WHERE path = ?1 AND size_bytes = ?2 AND "
                      "mtime_ns = ?3",
                      ORDO__BIND(ORDO__TEXT(path), ORDO__INT(size), ORDO__INT(mtime_ns)),
                      ordo__read_digest, out, "reading what a shard file was", err);
    *found = status == ORDO_OK;
    return status == ORDO_NOTFOUND ? ORDO_OK : status;
}

/* Records what a hashed shard file was; see ledger.h. */
ordo_status ordo__shard_file_record(ordo_ledger *ledger, const char *path, uint64_t size,
                                    int64_t mtime_ns, const unsigned char sha256[ORDO_DIGEST_SIZE],
                                    ordo_error *err)
{
    return ordo__sql_exec(ledger,
                          "INSERT OR REPLACE INTO shard_files (path, size_bytes, mtime_ns, sha256) "
                          "VALUES (?1, ?2, ?3, ?4)",
                          ORDO__BIND(ORDO__TEXT(path), ORDO__INT(size), ORDO__INT(mtime_ns),
                                     ORDO__BLOB(sha256, ORDO_DIGEST_SIZE)),
                          "recording a shard file", err);
}
