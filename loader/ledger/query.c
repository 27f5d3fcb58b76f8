/* One-off statements in one call: prepare, bind, step, finalize; and the
 * write transaction around a unit of work. */
#include <stdlib.h>
#include <string.h>

#include "sql.h"

static void bind_values(sqlite3_stmt *stmt, const ordo__value *values)
{
    for (int i = 0; values && values[i].type != ORDO__V_END; i++) {
        const ordo__value *v = &values[i];
        switch (v->type) {
        case ORDO__V_INT: sqlite3_bind_int64(stmt, i + 1, v->i); break;
        case ORDO__V_REAL: sqlite3_bind_double(stmt, i + 1, v->real); break;
        case ORDO__V_TEXT: sqlite3_bind_text(stmt, i + 1, v->p, -1, SQLITE_STATIC); break;
        case ORDO__V_BLOB: sqlite3_bind_blob64(stmt, i + 1, v->p, v->size, SQLITE_STATIC); break;
        default: sqlite3_bind_null(stmt, i + 1); break;
        }
    }
}

/* Prepares and binds; see sql.h. */
ordo_status ordo__prepare_bound(ordo_ledger *ledger, const char *sql, const ordo__value *values,
                                sqlite3_stmt **stmt, ordo_error *err)
{
    ordo_status status = ordo__prepare(ledger, sql, stmt, err);
    if (status == ORDO_OK)
        bind_values(*stmt, values);
    return status;
}

/* Every row of a one-off statement; see sql.h. */
ordo_status ordo__sql_each(ordo_ledger *ledger, const char *sql, const ordo__value *values,
                           ordo__row_fn each, void *context, const char *what, ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare_bound(ledger, sql, values, &stmt, err);
    if (status != ORDO_OK)
        return status;
    int rc = SQLITE_DONE;
    while (status == ORDO_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW)
        status = each ? each(stmt, context, err) : ORDO_OK;
    if (status == ORDO_OK && rc != SQLITE_DONE)
        status = ordo__db_error(ledger, err, what);
    sqlite3_finalize(stmt);
    return status;
}

/* The first row of a one-off statement; see sql.h. */
ordo_status ordo__sql_row(ordo_ledger *ledger, const char *sql, const ordo__value *values,
                          ordo__row_fn read, void *context, const char *what, ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare_bound(ledger, sql, values, &stmt, err);
    if (status != ORDO_OK)
        return status;
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW)
        status = read ? read(stmt, context, err) : ORDO_OK;
    else if (rc == SQLITE_DONE)
        status = ORDO_NOTFOUND;
    else
        status = ordo__db_error(ledger, err, what);
    sqlite3_finalize(stmt);
    return status;
}

/* Column 0 as an integer; see sql.h. */
ordo_status ordo__read_int64(sqlite3_stmt *row, void *context, ordo_error *err)
{
    (void)err;
    *(int64_t *)context = sqlite3_column_int64(row, 0);
    return ORDO_OK;
}

/* Columns 0 and 1 as integers; see sql.h. */
ordo_status ordo__read_int64_pair(sqlite3_stmt *row, void *context, ordo_error *err)
{
    (void)err;
    ((int64_t *)context)[0] = sqlite3_column_int64(row, 0);
    ((int64_t *)context)[1] = sqlite3_column_int64(row, 1);
    return ORDO_OK;
}

/* Column 0 as a digest; see sql.h. */
ordo_status ordo__read_digest(sqlite3_stmt *row, void *context, ordo_error *err)
{
    (void)err;
    if (sqlite3_column_bytes(row, 0) != ORDO_DIGEST_SIZE)
        return ORDO_NOTFOUND;
    memcpy(context, sqlite3_column_blob(row, 0), ORDO_DIGEST_SIZE);
    return ORDO_OK;
}

/* Column 0 as a string of one's own; see sql.h. */
ordo_status ordo__read_text(sqlite3_stmt *row, void *context, ordo_error *err)
{
    (void)err;
    *(char **)context = ordo__strdup((const char *)sqlite3_column_text(row, 0));
    return ORDO_OK;
}

static ordo_status list_row(sqlite3_stmt *row, void *context, ordo_error *err)
{
    ordo__rows *rows = context;
    if (rows->count == rows->capacity) {
        size_t capacity = rows->capacity ? 2 * rows->capacity : 16;
        void *grown = realloc(rows->items, capacity * rows->item_size);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "%s", rows->nomem);
        rows->items = grown;
        rows->capacity = capacity;
    }
    void *item = (char *)rows->items + rows->count++ * rows->item_size;
    return rows->read(row, item, err);
}

/* Every row into a growing array; see sql.h. */
ordo_status ordo__sql_list(ordo_ledger *ledger, const char *sql, const ordo__value *values,
                           ordo__rows *rows, const char *what, ordo_error *err)
{
    return ordo__sql_each(ledger, sql, values, list_row, rows, what, err);
}

/* A unit of work in a write transaction; see sql.h. */
ordo_status ordo__transaction(ordo_ledger *ledger, ordo__work_fn work, void *context,
                              ordo_error *err)
{
    ordo_status status = ordo__begin(ledger, err);
    if (status != ORDO_OK)
        return status;
    status = work(ledger, context, err);
    if (status != ORDO_OK) {
        ordo__rollback(ledger);
        return status;
    }
    return ordo__commit(ledger, err);
}
