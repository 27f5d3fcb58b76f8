/* Status names, error messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const status_names[] = {
#define NAME(name, short_name, text) short_name,
    ORDO_STATUS_MAP(NAME)
#undef NAME
};

static const char *const status_texts[] = {
#define TEXT(name, short_name, text) text,
    ORDO_STATUS_MAP(TEXT)
#undef TEXT
};

#define STATUS_COUNT (sizeof status_names / sizeof status_names[0])

/* Short machine name of a status; "unknown" outside the table. */
const char *ordo_status_name(ordo_status status)
{
    return (unsigned)status < STATUS_COUNT ? status_names[status] : "unknown";
}

/* One-line description of a status; "unknown status" outside the table. */
const char *ordo_status_text(ordo_status status)
{
    return (unsigned)status < STATUS_COUNT ? status_texts[status] : "unknown status";
}

/* Releases a buffer libordo allocated for the caller. */
void ordo_free(void *ptr)
{
    free(ptr);
}

/* Fills `err` (when not NULL) with status and formatted message. */
ordo_status ordo__error(ordo_error *err, ordo_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = status;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* Clears `err`. */
ordo_status ordo__ok(ordo_error *err)
{
    if (err) {
        err->status = ORDO_OK;
        err->message[0] = '\0';
    }
    return ORDO_OK;
}

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
        snprintf(busy, sizeof busy, " (another writer held the ledger's lock for more than "
                                    "%.1f s, the wait allowed)", ledger->lock_timeout_ms / 1e3);
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
    case SQLITE_PERM:
        status = ORDO_IO;
        break;
    case SQLITE_CONSTRAINT:
        status = ORDO_INVALID;
        break;
    default:
        break;
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

/* Copies a string into a fixed buffer, truncating. */
void ordo__copy(char *dst, size_t size, const char *src)
{
    if (size == 0)
        return;
    if (!src)
        src = "";
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* strdup that passes NULL through. */
char *ordo__strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *copy = malloc(n);
    if (copy)
        memcpy(copy, s, n);
    return copy;
}

/* Describes an errno value into the caller's buffer; see internal.h. */
const char *ordo__errno_text(int errnum, char buf[ORDO__ERRNO_TEXT_SIZE])
{
    if (strerror_r(errnum, buf, ORDO__ERRNO_TEXT_SIZE) != 0)
        snprintf(buf, ORDO__ERRNO_TEXT_SIZE, "error %d", errnum);
    return buf;
}
