/* A recipe's plan as the ledger keeps it: shard chunk tables (the shards
 * and recipe_shards tables) and token estimates (token_estimates), so a
 * resumed run never re-measures them (docs/ledger.md). */
#include <stdlib.h>
#include <string.h>

#include "sql.h"

#define EXTRA 20 /* bytes of chunk_extra a chunk */

static ordo_status damaged(const ordo__shard *shard, ordo_error *err)
{
    return ordo__error(err, ORDO_NOTLEDGER, "ledger: chunk table of '%s' is damaged", shard->path);
}

/* One row's blobs into the shard's chunks; the aux blob is checked to
 * hold every chunk's locator. */
static ordo_status load_row(sqlite3_stmt *stmt, ordo__shard *shard, ordo_error *err)
{
    uint32_t count = (uint32_t)sqlite3_column_int64(stmt, 3);
    const unsigned char *table = sqlite3_column_blob(stmt, 4);
    const unsigned char *digests = sqlite3_column_blob(stmt, 5);
    const unsigned char *extra = sqlite3_column_blob(stmt, 6);
    const unsigned char *aux = sqlite3_column_blob(stmt, 7);
    uint64_t aux_size = (uint64_t)sqlite3_column_bytes(stmt, 7);
    if ((size_t)sqlite3_column_bytes(stmt, 4) != (size_t)count * 32 ||
        (size_t)sqlite3_column_bytes(stmt, 5) != (size_t)count * ORDO_DIGEST_SIZE ||
        (size_t)sqlite3_column_bytes(stmt, 6) != (size_t)count * EXTRA)
        return damaged(shard, err);
    ordo__chunk *chunks = calloc(count ? count : 1, sizeof *chunks);
    unsigned char *aux_copy = malloc(aux_size ? aux_size : 1);
    if (!chunks || !aux_copy) {
        free(chunks);
        free(aux_copy);
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    }
    if (aux_size)
        memcpy(aux_copy, aux, aux_size);
    for (uint32_t i = 0; i < count; i++) {
        const unsigned char *e = table + 32 * (size_t)i, *x = extra + EXTRA * (size_t)i;
        chunks[i] = (ordo__chunk){.offset = ordo__get_le(e, 8),
                                  .length = ordo__get_le(e + 8, 8),
                                  .raw_length = ordo__get_le(e + 16, 8),
                                  .records = (uint32_t)ordo__get_le(e + 24, 8),
                                  .first_record = ordo__get_le(x, 8),
                                  .aux_offset = ordo__get_le(x + 8, 8),
                                  .aux_length = (uint32_t)ordo__get_le(x + 16, 4)};
        memcpy(chunks[i].digest, digests + ORDO_DIGEST_SIZE * (size_t)i, ORDO_DIGEST_SIZE);
        if (chunks[i].aux_offset > aux_size ||
            chunks[i].aux_length > aux_size - chunks[i].aux_offset) {
            free(chunks);
            free(aux_copy);
            return damaged(shard, err);
        }
    }
    free(shard->chunks);
    free(shard->aux);
    shard->chunks = chunks;
    shard->chunk_count = count;
    shard->aux = aux_copy;
    shard->aux_size = aux_size;
    shard->records = (uint64_t)sqlite3_column_int64(stmt, 0);
    shard->skipped = (uint64_t)sqlite3_column_int64(stmt, 1);
    uint64_t filtered = (uint64_t)sqlite3_column_int64(stmt, 2);
    shard->counts = (ordo__counts){.read = shard->records + shard->skipped + filtered,
                                   .passed = shard->records,
                                   .filtered = filtered,
                                   .empty = shard->skipped};
    return ORDO_OK;
}

/* Loads a stored chunk table; see ledger.h. */
ordo_status ordo__chunk_table_load(ordo_ledger *ledger, ordo__shard *shard,
                                   const ordo__shard_key *key, int *found, ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "SELECT records, skipped, filtered, chunks, chunk_table, chunk_digests, chunk_extra, "
        "chunk_aux FROM shards WHERE path = ?1 AND sha256 = ?2 AND text_field = ?3 AND "
        "filter = ?4 AND chunk_records = ?5",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_text(stmt, 1, shard->path, -1, SQLITE_STATIC);
    sqlite3_bind_blob(stmt, 2, shard->sha256, ORDO_DIGEST_SIZE, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 3, key->text_field, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 4, key->filter, -1, SQLITE_STATIC);
    sqlite3_bind_int(stmt, 5, key->chunk_records);
    *found = 0;
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 5) != SQLITE_NULL &&
        sqlite3_column_type(stmt, 6) != SQLITE_NULL) {
        status = load_row(stmt, shard, err);
        *found = status == ORDO_OK;
    } else if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        status = ordo__db_error(ledger, err, "reading a shard index");
    }
    sqlite3_finalize(stmt);
    return status;
}

/* Loads the chunk table linked to a recipe's shard; see ledger.h. */
ordo_status ordo__recipe_shard_load(ordo_ledger *ledger, const char *recipe_id, const char *source,
                                    uint32_t position, ordo__shard *shard, int *found,
                                    ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "SELECT s.records, s.skipped, s.filtered, s.chunks, s.chunk_table, s.chunk_digests, "
        "s.chunk_extra, s.chunk_aux FROM recipe_shards AS r JOIN shards AS s ON s.id = "
        "r.shard_id WHERE r.recipe_id = ?1 AND r.source = ?2 AND r.position = ?3 AND s.path = "
        "?4 AND s.sha256 = ?5",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_text(stmt, 1, recipe_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, source, -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 3, position);
    sqlite3_bind_text(stmt, 4, shard->path, -1, SQLITE_STATIC);
    sqlite3_bind_blob(stmt, 5, shard->sha256, ORDO_DIGEST_SIZE, SQLITE_STATIC);
    *found = 0;
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 5) != SQLITE_NULL &&
        sqlite3_column_type(stmt, 6) != SQLITE_NULL) {
        status = load_row(stmt, shard, err);
        *found = status == ORDO_OK;
    } else if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        status = ordo__db_error(ledger, err, "reading a recipe's shard index");
    }
    sqlite3_finalize(stmt);
    return status;
}

/* Stores a shard's chunk table; see ledger.h. */
ordo_status ordo__chunk_table_store(ordo_ledger *ledger, const ordo__shard *shard,
                                    const ordo__shard_key *key, ordo_error *err)
{
    size_t n = shard->chunk_count;
    unsigned char *table = malloc(n * 32 + 1);
    unsigned char *digests = malloc(n * ORDO_DIGEST_SIZE + 1);
    unsigned char *extra = malloc(n * EXTRA + 1);
    if (!table || !digests || !extra) {
        free(table);
        free(digests);
        free(extra);
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < shard->chunk_count; i++) {
        const ordo__chunk *c = &shard->chunks[i];
        unsigned char *e = table + 32 * (size_t)i, *x = extra + EXTRA * (size_t)i;
        ordo__put_le(e, c->offset, 8);
        ordo__put_le(e + 8, c->length, 8);
        ordo__put_le(e + 16, c->raw_length, 8);
        ordo__put_le(e + 24, c->records, 8);
        ordo__put_le(x, c->first_record, 8);
        ordo__put_le(x + 8, c->aux_offset, 8);
        ordo__put_le(x + 16, c->aux_length, 4);
        memcpy(digests + ORDO_DIGEST_SIZE * (size_t)i, c->digest, ORDO_DIGEST_SIZE);
    }
    ordo_status status = ordo__sql_exec(
        ledger,
        "INSERT INTO shards (path, sha256, text_field, filter, chunk_records, size_bytes, "
        "records, skipped, filtered, chunks, chunk_table, chunk_digests, chunk_extra, chunk_aux) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) ON CONFLICT (path, "
        "sha256, text_field, filter, chunk_records) DO UPDATE SET records = excluded.records, "
        "skipped = excluded.skipped, filtered = excluded.filtered, chunks = excluded.chunks, "
        "chunk_table = excluded.chunk_table, chunk_digests = excluded.chunk_digests, "
        "chunk_extra = excluded.chunk_extra, chunk_aux = excluded.chunk_aux "
        "WHERE chunk_digests IS NULL OR chunk_extra IS NULL",
        ORDO__BIND(
            ORDO__TEXT(shard->path), ORDO__BLOB(shard->sha256, ORDO_DIGEST_SIZE),
            ORDO__TEXT(key->text_field), ORDO__TEXT(key->filter), ORDO__INT(key->chunk_records),
            ORDO__INT(shard->size), ORDO__INT(shard->records), ORDO__INT(shard->skipped),
            ORDO__INT(shard->counts.filtered), ORDO__INT(shard->chunk_count),
            ORDO__BLOB(table, (uint64_t)n * 32),
            ORDO__BLOB(digests, (uint64_t)n * ORDO_DIGEST_SIZE),
            ORDO__BLOB(extra, (uint64_t)n * EXTRA),
            ORDO__BLOB(shard->aux ? shard->aux : (const unsigned char *)"", shard->aux_size)),
        "storing a shard index", err);
    free(table);
    free(digests);
    free(extra);
    return status;
}

/* Links a stored chunk table to a recipe's source; see ledger.h. */
ordo_status ordo__chunk_table_link(ordo_ledger *ledger, const char *recipe_id, const char *source,
                                   uint32_t position, const ordo__shard *shard,
                                   const ordo__shard_key *key, ordo_error *err)
{
    return ordo__sql_exec(
        ledger,
        "INSERT OR IGNORE INTO recipe_shards (recipe_id, source, position, shard_id) "
        "SELECT ?1, ?2, ?3, id FROM shards WHERE path = ?4 AND sha256 = ?5 AND "
        "text_field = ?6 AND filter = ?7 AND chunk_records = ?8",
        ORDO__BIND(ORDO__TEXT(recipe_id), ORDO__TEXT(source), ORDO__INT(position),
                   ORDO__TEXT(shard->path), ORDO__BLOB(shard->sha256, ORDO_DIGEST_SIZE),
                   ORDO__TEXT(key->text_field), ORDO__TEXT(key->filter),
                   ORDO__INT(key->chunk_records)),
        "linking a shard to its recipe", err);
}

static ordo_status read_estimate(sqlite3_stmt *row, void *context, ordo_error *err)
{
    (void)err;
    ordo__estimate *sample = context;
    sample->records = (uint64_t)sqlite3_column_int64(row, 0);
    sample->bytes = (uint64_t)sqlite3_column_int64(row, 1);
    sample->tokens = (uint64_t)sqlite3_column_int64(row, 2);
    return ORDO_OK;
}

/* Loads a source's stored token estimate; see ledger.h. */
ordo_status ordo__estimate_load(ordo_ledger *ledger, const char *recipe_id, const char *source,
                                ordo__estimate *sample, int *found, ordo_error *err)
{
    ordo_status status =
        ordo__sql_row(ledger,
                      "SELECT sample_records, sample_bytes, sample_tokens FROM token_estimates "
                      "WHERE recipe_id = ?1 AND source = ?2",
                      ORDO__BIND(ORDO__TEXT(recipe_id), ORDO__TEXT(source)), read_estimate, sample,
                      "reading a token estimate", err);
    *found = status == ORDO_OK;
    return status == ORDO_NOTFOUND ? ORDO_OK : status;
}

/* Stores a source's token estimate; see ledger.h. */
ordo_status ordo__estimate_store(ordo_ledger *ledger, const char *recipe_id, const char *source,
                                 const ordo__estimate *sample, ordo_error *err)
{
    return ordo__sql_exec(
        ledger,
        "INSERT OR IGNORE INTO token_estimates (recipe_id, source, tokens_per_byte, "
        "sample_records, sample_bytes, sample_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        ORDO__BIND(ORDO__TEXT(recipe_id), ORDO__TEXT(source),
                   ORDO__REAL((double)sample->tokens / (double)sample->bytes),
                   ORDO__INT(sample->records), ORDO__INT(sample->bytes), ORDO__INT(sample->tokens)),
        "storing a token estimate", err);
}
