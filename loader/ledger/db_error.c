/* SQLite errors as statuses and messages. */
#include <stdio.h>

#include "sql.h"

/* Maps the connection's last SQLite error to a status and message. */
ordo_status ordo__db_error(ordo_ledger *ledger, ordo_error *err, const char *what)
{
    int code = sqlite3_extended_errcode(ledger->db);
    ordo_status status = ORDO_DB;
    const char *hint = "";
    char busy[128];
    switch (code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        status = ORDO_BUSY;
        snprintf(busy, sizeof busy,
                 " (another writer held the ledger's lock for more than "
                 "%.1f s, the wait allowed)",
                 ledger->lock_timeout_ms / 1e3);
        hint = busy;
        break;
    case SQLITE_NOTADB:
        status = ORDO_NOTLEDGER;
        hint = " (not an SQLite database)";
        break;
    case SQLITE_CORRUPT:
        status = ORDO_NOTLEDGER;
        hint = " (the file is damaged or truncated)";
        break;
    case SQLITE_FULL:
        status = ORDO_IO;
        hint = " (disk full)";
        break;
    case SQLITE_IOERR:
        status = ORDO_IO;
        if (code == SQLITE_IOERR_WRITE || code == SQLITE_IOERR_FSYNC ||
            code == SQLITE_IOERR_TRUNCATE || code == SQLITE_IOERR_SHMSIZE)
            hint = " (writing failed: is the disk full, or the file at its size limit?)";
        break;
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM: status = ORDO_IO; break;
    case SQLITE_CONSTRAINT: status = ORDO_INVALID; break;
    default: break;
    }
    char system[ORDO__ERRNO_TEXT_SIZE + 8] = "";
    int errnum = sqlite3_system_errno(ledger->db);
    if (status == ORDO_IO && errnum) {
        char text[ORDO__ERRNO_TEXT_SIZE];
        snprintf(system, sizeof system, " (%s)", ordo__errno_text(errnum, text));
        hint = ""; /* the system's reason says it better */
    }
    return ordo__error(err, status, "ledger '%s': %s: %s%s%s", ledger->path, what,
                       sqlite3_errmsg(ledger->db), system, hint);
}
