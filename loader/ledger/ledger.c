/* Opening and closing ledgers; connection settings; statement cache. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "sql.h"
#include "migrate.h"

#define BUSY_TIMEOUT_MS ORDO_LOCK_TIMEOUT_MS
#define PAGE_SIZE 16384 /* measured: keeps a 32-lane step row near its bytes */

static ordo_status check_path(const char *path, unsigned flags, ordo_error *err)
{
    if (!path || !*path)
        return ordo__error(err, ORDO_INVALID, "ledger path is empty");
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT && !(flags & (ORDO_OPEN_READONLY | ORDO_OPEN_NO_CREATE)))
            return ORDO_OK;
        if (errno == ENOENT)
            return ordo__error(err, ORDO_NOTFOUND, "ledger '%s' does not exist", path);
        return ordo__error(err, ORDO_IO, "ledger '%s': %s", path,
                           ordo__errno_text(errno, (char[ORDO__ERRNO_TEXT_SIZE]){0}));
    }
    if (S_ISDIR(st.st_mode))
        return ordo__error(err, ORDO_IO, "ledger '%s' is a directory, not a file", path);
    if (!S_ISREG(st.st_mode))
        return ordo__error(err, ORDO_IO, "ledger '%s' is not a regular file", path);
    return ORDO_OK;
}

static ordo_status exec(ordo_ledger *ledger, const char *sql, ordo_error *err)
{
    if (sqlite3_exec(ledger->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return ordo__db_error(ledger, err, sql);
    return ORDO_OK;
}

/* Reads an integer pragma; NOTADB shows up here for a non-SQLite file. */
static ordo_status pragma_int(ordo_ledger *ledger, const char *sql, int *value, ordo_error *err)
{
    int64_t read = 0;
    ordo_status status = ordo__sql_row(ledger, sql, NULL, ordo__read_int64, &read, sql, err);
    if (status == ORDO_NOTFOUND)
        return ordo__db_error(ledger, err, sql);
    if (status == ORDO_OK)
        *value = (int)read;
    return status;
}

/* Switches a ledger to WAL. The switch needs a moment with no other
 * connection in the file, which the busy handler does not wait for (it
 * would deadlock), so a busy answer is retried with a short backoff. */
static ordo_status use_wal(ordo_ledger *ledger, ordo_error *err)
{
    for (int waited_ms = 0;; waited_ms += 5) {
        sqlite3_stmt *stmt = NULL;
        ordo_status status = ordo__prepare(ledger, "PRAGMA journal_mode = WAL", &stmt, err);
        if (status != ORDO_OK)
            return status;
        int rc = sqlite3_step(stmt);
        const char *mode = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(stmt, 0) : NULL;
        if (mode && strcmp(mode, "wal") == 0)
            status = ORDO_OK;
        else if (mode)
            status = ordo__error(err, ORDO_IO, "ledger '%s': cannot use WAL mode (got '%s')",
                                 ledger->path, mode);
        else
            status = ordo__db_error(ledger, err, "PRAGMA journal_mode = WAL");
        sqlite3_finalize(stmt);
        if (status != ORDO_BUSY || waited_ms >= BUSY_TIMEOUT_MS)
            return status;
        sqlite3_sleep(5);
    }
}

static ordo_status configure(ordo_ledger *ledger, ordo_error *err)
{
    ordo_status status = exec(ledger, "PRAGMA foreign_keys = ON", err);
    if (status != ORDO_OK || (ledger->flags & ORDO_OPEN_READONLY))
        return status;
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA page_size = %d", PAGE_SIZE); /* new files only */
    if ((status = exec(ledger, sql, err)) != ORDO_OK)
        return status;
    if ((status = use_wal(ledger, err)) != ORDO_OK)
        return status;
    /* WAL + NORMAL: a committed transaction survives a process crash; on
     * power loss the last transactions may roll back, never half-apply. */
    return exec(ledger, "PRAGMA synchronous = NORMAL", err);
}

static ordo_status check_identity(ordo_ledger *ledger, int version, ordo_error *err)
{
    int app_id = 0, tables = 0;
    ordo_status status = pragma_int(ledger, "PRAGMA application_id", &app_id, err);
    if (status == ORDO_OK)
        status = pragma_int(ledger, "SELECT count(*) FROM sqlite_schema", &tables, err);
    if (status != ORDO_OK)
        return status;
    if (app_id != 0 && app_id != ORDO__APPLICATION_ID)
        return ordo__error(err, ORDO_NOTLEDGER,
                           "ledger '%s' is an SQLite database of another application "
                           "(application_id %d)",
                           ledger->path, app_id);
    if ((version > 0 && app_id != ORDO__APPLICATION_ID) || (version == 0 && tables > 0))
        return ordo__error(err, ORDO_NOTLEDGER,
                           "ledger '%s' is an SQLite database but not an ordo ledger "
                           "(schema version %d, %d schema objects)",
                           ledger->path, version, tables);
    int latest = ordo_schema_version_latest();
    if (version > latest)
        return ordo__error(err, ORDO_VERSION,
                           "ledger '%s' has schema version %d, newer than this ordo's %d: "
                           "use a newer ordo",
                           ledger->path, version, latest);
    return ORDO_OK;
}

static ordo_status open_checked(ordo_ledger *ledger, ordo_error *err)
{
    int version = 0;
    ledger->lock_timeout_ms = BUSY_TIMEOUT_MS;
    sqlite3_busy_timeout(ledger->db, BUSY_TIMEOUT_MS);
    /* One read transaction, so version and contents are seen together even
     * while another process is creating the same ledger. */
    ordo_status status = exec(ledger, "BEGIN", err);
    if (status == ORDO_OK)
        status = pragma_int(ledger, "PRAGMA user_version", &version, err);
    if (status == ORDO_NOTLEDGER && sqlite3_errcode(ledger->db) == SQLITE_NOTADB)
        status =
            ordo__error(err, ORDO_NOTLEDGER, "ledger '%s' is not an SQLite database", ledger->path);
    if (status == ORDO_OK)
        status = check_identity(ledger, version, err);
    ordo__rollback(ledger);
    if (status == ORDO_OK)
        status = configure(ledger, err);
    if (status != ORDO_OK)
        return status;
    int latest = ordo_schema_version_latest();
    if (version < latest && (ledger->flags & ORDO_OPEN_READONLY))
        return ordo__error(err, ORDO_VERSION,
                           "ledger '%s' has schema version %d, this ordo needs %d: "
                           "run 'ordo migrate'",
                           ledger->path, version, latest);
    if (version < latest && !(ledger->flags & ORDO_OPEN_NO_MIGRATE))
        return ordo_ledger_migrate(ledger, NULL, NULL, err);
    return ORDO_OK;
}

/* file: URI of a path, percent-encoding what URIs reserve. */
static char *immutable_uri(const char *path)
{
    size_t n = strlen(path);
    char *uri = malloc(3 * n + 32);
    if (!uri)
        return NULL;
    char *p = uri + sprintf(uri, "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++)
        p += strchr("?#%", *c) || *c < 0x20 ? sprintf(p, "%%%02X", *c) : sprintf(p, "%c", *c);
    strcpy(p, "?immutable=1");
    return uri;
}

/* A reader in a folder it cannot write cannot make WAL's shared-memory
 * file; nobody can be writing there then, so it reads the file as is. */
static int open_immutable(ordo_ledger *ledger)
{
    char *uri = immutable_uri(ledger->path);
    if (!uri)
        return SQLITE_NOMEM;
    sqlite3_close(ledger->db);
    ledger->db = NULL;
    int rc = sqlite3_open_v2(
        uri, &ledger->db,
        SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, NULL);
    free(uri);
    return rc;
}

static int folder_writable(const char *path)
{
    char *copy = ordo__strdup(path);
    if (!copy)
        return 1;
    char *slash = strrchr(copy, '/');
    const char *folder = slash ? (slash == copy ? "/" : (*slash = '\0', copy)) : ".";
    int writable = access(folder, W_OK) == 0;
    free(copy);
    return writable;
}

/* Opens a ledger; see ordo.h. */
ordo_status ordo_ledger_open(const char *path, unsigned flags, ordo_ledger **out, ordo_error *err)
{
    *out = NULL;
    ordo_status status = check_path(path, flags, err);
    if (status != ORDO_OK)
        return status;
    ordo_ledger *ledger = calloc(1, sizeof *ledger);
    if (!ledger || !(ledger->path = ordo__strdup(path))) {
        free(ledger);
        return ordo__error(err, ORDO_NOMEM, "out of memory opening ledger '%s'", path);
    }
    ledger->flags = flags;
    ledger->digest_ctx = EVP_MD_CTX_new(); /* NULL is tolerated: slower path */
    int open_flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE |
                     ((flags & ORDO_OPEN_READONLY) ? SQLITE_OPEN_READONLY
                                                   : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (sqlite3_open_v2(path, &ledger->db, open_flags, NULL) != SQLITE_OK) {
        status = ledger->db ? ordo__db_error(ledger, err, "cannot open")
                            : ordo__error(err, ORDO_NOMEM, "out of memory opening '%s'", path);
        ordo_ledger_close(ledger);
        return status;
    }
    if ((flags & ORDO_OPEN_READONLY) && !folder_writable(path) &&
        open_immutable(ledger) != SQLITE_OK) {
        status = ordo__db_error(ledger, err, "cannot open");
        ordo_ledger_close(ledger);
        return status;
    }
    if (!(flags & ORDO_OPEN_READONLY) && sqlite3_db_readonly(ledger->db, "main") == 1) {
        ordo_ledger_close(ledger);
        return ordo__error(err, ORDO_IO,
                           "ledger '%s' cannot be written (read-only file or "
                           "folder)",
                           path);
    }
    status = open_checked(ledger, err);
    if (status != ORDO_OK) {
        ordo_ledger_close(ledger);
        return status;
    }
    *out = ledger;
    return ordo__ok(err);
}

/* Closes a ledger and frees it. */
void ordo_ledger_close(ordo_ledger *ledger)
{
    if (!ledger)
        return;
    for (int i = 0; i < ORDO_STMT_COUNT; i++)
        sqlite3_finalize(ledger->stmts[i]);
    sqlite3_close(ledger->db);
    EVP_MD_CTX_free(ledger->digest_ctx);
    free(ledger->last_block);
    free(ledger->path);
    free(ledger);
}

/* Sets how long writes wait for another writer's lock; see ordo.h. */
void ordo_ledger_set_lock_timeout(ordo_ledger *ledger, int milliseconds)
{
    ledger->lock_timeout_ms = milliseconds > 0 ? milliseconds : 0;
    sqlite3_busy_timeout(ledger->db, ledger->lock_timeout_ms);
}

/* PRAGMA user_version of the open ledger; -1 if it cannot be read. */
int ordo_ledger_schema_version(ordo_ledger *ledger)
{
    int version = -1;
    if (pragma_int(ledger, "PRAGMA user_version", &version, NULL) != ORDO_OK)
        return -1;
    return version;
}

/* Cached statement `id`, prepared from `sql` on first use. */
sqlite3_stmt *ordo__stmt(ordo_ledger *ledger, enum ordo__stmt_id id, const char *sql,
                         ordo_error *err)
{
    if (!ledger->stmts[id] && ordo__prepare(ledger, sql, &ledger->stmts[id], err) != ORDO_OK)
        return NULL;
    return ledger->stmts[id];
}

/* Prepares a one-off statement. */
ordo_status ordo__prepare(ordo_ledger *ledger, const char *sql, sqlite3_stmt **stmt,
                          ordo_error *err)
{
    if (sqlite3_prepare_v2(ledger->db, sql, -1, stmt, NULL) != SQLITE_OK) {
        *stmt = NULL;
        return ordo__db_error(ledger, err, "prepare");
    }
    return ORDO_OK;
}

/* BEGIN IMMEDIATE: takes the write lock now, so a busy ledger waits here. */
ordo_status ordo__begin(ordo_ledger *ledger, ordo_error *err)
{
    ordo_status status = ordo__writable(ledger, err);
    return status != ORDO_OK ? status : exec(ledger, "BEGIN IMMEDIATE", err);
}

/* COMMIT; on failure the transaction is rolled back. */
ordo_status ordo__commit(ordo_ledger *ledger, ordo_error *err)
{
    ordo_status status = exec(ledger, "COMMIT", err);
    if (status != ORDO_OK)
        ordo__rollback(ledger);
    return status;
}

/* ROLLBACK if a transaction is open. */
void ordo__rollback(ordo_ledger *ledger)
{
    if (!sqlite3_get_autocommit(ledger->db))
        sqlite3_exec(ledger->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Refuses writes on a ledger opened read-only. */
ordo_status ordo__writable(ordo_ledger *ledger, ordo_error *err)
{
    if (ledger->flags & ORDO_OPEN_READONLY)
        return ordo__error(err, ORDO_INVALID, "ledger '%s' is open read-only", ledger->path);
    return ORDO_OK;
}

/* Opens a read transaction when none is open; see sql.h. */
int ordo__read_begin(ordo_ledger *ledger)
{
    if (!sqlite3_get_autocommit(ledger->db))
        return 0;
    return sqlite3_exec(ledger->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
}

/* Ends what ordo__read_begin opened. */
void ordo__read_end(ordo_ledger *ledger, int started)
{
    if (started && sqlite3_exec(ledger->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        sqlite3_exec(ledger->db, "ROLLBACK", NULL, NULL, NULL);
}
