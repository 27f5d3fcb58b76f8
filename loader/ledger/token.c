/* API tokens: random secrets of which only the SHA-256 is stored. */
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"

#define TOKEN_PREFIX "ordo_"

/* Creates a token; see ordo.h. */
ordo_status ordo_token_create(ordo_ledger *ledger, const char *name, ordo_token_role role_value,
                              char token[ORDO_TOKEN_SIZE], ordo_error *err)
{
    token[0] = '\0';
    const char *role = ordo_token_role_name(role_value); /* the stored text */
    if (!role)
        return ordo__error(err, ORDO_INVALID,
                           "token role %d must be ORDO_ROLE_READER or "
                           "ORDO_ROLE_WRITER",
                           (int)role_value);
    size_t name_len = name ? strlen(name) : 0;
    if (name_len < 1 || name_len > ORDO_NAME_MAX)
        return ordo__error(err, ORDO_INVALID, "token name must be 1 to %d bytes (got %zu)",
                           ORDO_NAME_MAX, name_len);
    unsigned char secret[32], hash[ORDO_DIGEST_SIZE];
    if (RAND_bytes(secret, sizeof secret) != 1)
        return ordo__error(err, ORDO_IO, "no randomness for a token");
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(secret, hex);
    char made[ORDO_TOKEN_SIZE];
    snprintf(made, sizeof made, "%s%s", TOKEN_PREFIX, hex);
    OPENSSL_cleanse(secret, sizeof secret);
    ordo_sha256(made, strlen(made), hash);
    ordo_status status = ordo__sql_exec(
        ledger, "INSERT INTO api_tokens (name, role, token_hash) VALUES (?1, ?2, ?3)",
        ORDO__BIND(ORDO__TEXT(name), ORDO__TEXT(role), ORDO__BLOB(hash, sizeof hash)),
        "storing a token", err);
    if (status == ORDO_OK)
        memcpy(token, made, sizeof made);
    OPENSSL_cleanse(made, sizeof made);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

typedef struct {
    const unsigned char *hash;
    ordo_token_role *role;
} token_match;

/* The role of the row whose hash matches (compared in constant time). */
static ordo_status read_match(sqlite3_stmt *row, void *context, ordo_error *err)
{
    (void)err;
    token_match *m = context;
    if (sqlite3_column_bytes(row, 1) != ORDO_DIGEST_SIZE ||
        CRYPTO_memcmp(sqlite3_column_blob(row, 1), m->hash, ORDO_DIGEST_SIZE) != 0)
        return ORDO_NOTFOUND;
    /* the schema keeps the column to the two names; any other reads */
    if (ordo_token_role_parse((const char *)sqlite3_column_text(row, 0), m->role, NULL) != ORDO_OK)
        *m->role = ORDO_ROLE_READER;
    return ORDO_OK;
}

/* Looks a presented token up by its hash; see ordo.h. */
ordo_status ordo_token_check(ordo_ledger *ledger, const char *token, ordo_token_role *role,
                             ordo_error *err)
{
    *role = ORDO_ROLE_READER;
    size_t len = token ? strlen(token) : 0;
    if (len != ORDO_TOKEN_SIZE - 1 || strncmp(token, TOKEN_PREFIX, strlen(TOKEN_PREFIX)) != 0)
        return ordo__error(err, ORDO_NOTFOUND, "not an ordo token");
    unsigned char hash[ORDO_DIGEST_SIZE];
    ordo_sha256(token, len, hash);
    token_match match = {hash, role};
    ordo_status status = ordo__sql_row(
        ledger,
        "SELECT role, token_hash FROM api_tokens WHERE token_hash = ?1 AND "
        "revoked_at IS NULL",
        ORDO__BIND(ORDO__BLOB(hash, sizeof hash)), read_match, &match, "checking a token", err);
    if (status == ORDO_NOTFOUND)
        return ordo__error(err, ORDO_NOTFOUND, "unknown or revoked token");
    return status == ORDO_OK ? ordo__ok(err) : status;
}

static void copy_column(sqlite3_stmt *stmt, int column, char *out, size_t size)
{
    const char *text = (const char *)sqlite3_column_text(stmt, column);
    snprintf(out, size, "%s", text ? text : "");
}

static ordo_status read_token(sqlite3_stmt *stmt, void *item, ordo_error *err)
{
    (void)err;
    ordo_token_info *t = item;
    memset(t, 0, sizeof *t);
    t->id = sqlite3_column_int64(stmt, 0);
    copy_column(stmt, 1, t->name, sizeof t->name);
    if (ordo_token_role_parse((const char *)sqlite3_column_text(stmt, 2), &t->role, NULL) !=
        ORDO_OK)
        t->role = ORDO_ROLE_READER;
    copy_column(stmt, 3, t->created_at, sizeof t->created_at);
    copy_column(stmt, 4, t->revoked_at, sizeof t->revoked_at);
    const unsigned char *hash = sqlite3_column_blob(stmt, 5);
    if (hash && sqlite3_column_bytes(stmt, 5) == ORDO_DIGEST_SIZE)
        for (int i = 0; i < 6; i++)
            snprintf(t->fingerprint + 2 * i, 3, "%02x", hash[i]);
    return ORDO_OK;
}

/* Lists the stored tokens; see ordo.h. */
static ordo_status list_items(ordo_ledger *ledger, ordo_token_info **tokens, size_t *count,
                              ordo_error *err)
{
    *tokens = NULL;
    *count = 0;
    ordo__rows rows = {
        .item_size = sizeof **tokens, .read = read_token, .nomem = "out of memory listing tokens"};
    ordo_status status =
        ordo__sql_list(ledger,
                       "SELECT id, name, role, created_at, revoked_at, token_hash FROM api_tokens "
                       "ORDER BY id",
                       NULL, &rows, "listing tokens", err);
    if (status != ORDO_OK) {
        free(rows.items);
        return status;
    }
    *tokens = rows.items;
    *count = rows.count;
    return ordo__ok(err);
}

/* Revokes a token by id; see ordo.h. */
ordo_status ordo_token_revoke(ordo_ledger *ledger, int64_t id, ordo_error *err)
{
    ordo_status status = ordo__sql_exec(ledger,
                                        "UPDATE api_tokens SET revoked_at = coalesce(revoked_at, "
                                        "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) WHERE id = ?1",
                                        ORDO__BIND(ORDO__INT(id)), "revoking a token", err);
    if (status == ORDO_OK && sqlite3_changes(ledger->db) == 0)
        status = ordo__error(err, ORDO_NOTFOUND, "token %lld is not in the ledger", (long long)id);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* Every token: see ordo.h. *list is the caller's (ordo_token_list_free). */
ordo_status ordo_tokens_list(ordo_ledger *ledger, ordo_token_list **list, ordo_error *err)
{
    *list = calloc(1, sizeof **list);
    if (!*list)
        return ordo__error(err, ORDO_NOMEM, "out of memory listing token");
    ordo_status status = list_items(ledger, &(*list)->items, &(*list)->count, err);
    if (status != ORDO_OK) {
        free(*list);
        *list = NULL;
    }
    return status;
}

/* Frees a list and what its items own (NULL is fine). */
void ordo_token_list_free(ordo_token_list *list)
{
    if (!list)
        return;
    free(list->items);
    free(list);
}
