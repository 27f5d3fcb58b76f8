/* A recipe's plan as the ledger keeps it: shard chunk tables (the shards
 * and recipe_shards tables) and token estimates (token_estimates), so a
 * resumed run never re-measures them (docs/ledger.md). */
#include <stdlib.h>
#include <string.h>

#include "sql.h"

static void put_u64(unsigned char *out, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        out[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *in)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | in[i];
    return v;
}

/* Loads a stored chunk table; see ledger.h. */
ordo_status ordo__chunk_table_load(ordo_ledger *ledger, ordo__shard *shard, const char *text_field,
                                   int chunk_records, int *found, ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "SELECT records, skipped, chunks, chunk_table, chunk_digests FROM shards WHERE "
        "path = ?1 AND "
        "sha256 = ?2 AND text_field = ?3 AND chunk_records = ?4",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_text(stmt, 1, shard->path, -1, SQLITE_STATIC);
    sqlite3_bind_blob(stmt, 2, shard->sha256, ORDO_DIGEST_SIZE, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 3, text_field, -1, SQLITE_STATIC);
    sqlite3_bind_int(stmt, 4, chunk_records);
    *found = 0;
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 4) != SQLITE_NULL) {
        uint32_t count = (uint32_t)sqlite3_column_int64(stmt, 2);
        const unsigned char *table = sqlite3_column_blob(stmt, 3);
        const unsigned char *digests = sqlite3_column_blob(stmt, 4);
        if ((size_t)sqlite3_column_bytes(stmt, 3) != (size_t)count * 32 ||
            (size_t)sqlite3_column_bytes(stmt, 4) != (size_t)count * ORDO_DIGEST_SIZE)
            status = ordo__error(err, ORDO_NOTLEDGER, "ledger: chunk table of '%s' is damaged",
                                 shard->path);
        shard->chunks = status == ORDO_OK ? calloc(count ? count : 1, sizeof *shard->chunks) : NULL;
        if (status == ORDO_OK && !shard->chunks)
            status = ordo__error(err, ORDO_NOMEM, "out of memory");
        for (uint32_t i = 0; status == ORDO_OK && i < count; i++) {
            const unsigned char *e = table + 32 * (size_t)i;
            shard->chunks[i] = (ordo__chunk){
                get_u64(e), get_u64(e + 8), get_u64(e + 16), (uint32_t)get_u64(e + 24), {0}};
            memcpy(shard->chunks[i].digest, digests + ORDO_DIGEST_SIZE * (size_t)i,
                   ORDO_DIGEST_SIZE);
        }
        shard->chunk_count = count;
        shard->records = (uint64_t)sqlite3_column_int64(stmt, 0);
        shard->skipped = (uint64_t)sqlite3_column_int64(stmt, 1);
        *found = status == ORDO_OK;
    } else if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        status = ordo__db_error(ledger, err, "reading a shard index");
    }
    sqlite3_finalize(stmt);
    return status;
}

/* Stores a shard's chunk table; see ledger.h. */
ordo_status ordo__chunk_table_store(ordo_ledger *ledger, const ordo__shard *shard,
                                    const char *text_field, int chunk_records, ordo_error *err)
{
    unsigned char *table = malloc((size_t)shard->chunk_count * 32 + 1);
    unsigned char *digests = malloc((size_t)shard->chunk_count * ORDO_DIGEST_SIZE + 1);
    if (!table || !digests) {
        free(table);
        free(digests);
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < shard->chunk_count; i++) {
        unsigned char *e = table + 32 * (size_t)i;
        put_u64(e, shard->chunks[i].offset);
        put_u64(e + 8, shard->chunks[i].length);
        put_u64(e + 16, shard->chunks[i].raw_length);
        put_u64(e + 24, shard->chunks[i].records);
        memcpy(digests + ORDO_DIGEST_SIZE * (size_t)i, shard->chunks[i].digest, ORDO_DIGEST_SIZE);
    }
    ordo_status status = ordo__sql_exec(
        ledger,
        "INSERT INTO shards (path, sha256, text_field, chunk_records, size_bytes, records, "
        "skipped, chunks, chunk_table, chunk_digests) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
        "?9, ?10) ON CONFLICT (path, sha256, text_field, chunk_records) DO UPDATE SET "
        "records = excluded.records, skipped = excluded.skipped, chunks = excluded.chunks, "
        "chunk_table = excluded.chunk_table, chunk_digests = excluded.chunk_digests "
        "WHERE chunk_digests IS NULL",
        ORDO__BIND(ORDO__TEXT(shard->path), ORDO__BLOB(shard->sha256, ORDO_DIGEST_SIZE),
                   ORDO__TEXT(text_field), ORDO__INT(chunk_records), ORDO__INT(shard->size),
                   ORDO__INT(shard->records), ORDO__INT(shard->skipped),
                   ORDO__INT(shard->chunk_count),
                   ORDO__BLOB(table, (uint64_t)shard->chunk_count * 32),
                   ORDO__BLOB(digests, (uint64_t)shard->chunk_count * ORDO_DIGEST_SIZE)),
        "storing a shard index", err);
    free(table);
    free(digests);
    return status;
}

/* Links a stored chunk table to a recipe's source; see ledger.h. */
ordo_status ordo__chunk_table_link(ordo_ledger *ledger, const char *recipe_id, const char *source,
                                   uint32_t position, const ordo__shard *shard,
                                   const char *text_field, int chunk_records, ordo_error *err)
{
    return ordo__sql_exec(
        ledger,
        "INSERT OR IGNORE INTO recipe_shards (recipe_id, source, position, shard_id) "
        "SELECT ?1, ?2, ?3, id FROM shards WHERE path = ?4 AND sha256 = ?5 AND "
        "text_field = ?6 AND chunk_records = ?7",
        ORDO__BIND(ORDO__TEXT(recipe_id), ORDO__TEXT(source), ORDO__INT(position),
                   ORDO__TEXT(shard->path), ORDO__BLOB(shard->sha256, ORDO_DIGEST_SIZE),
                   ORDO__TEXT(text_field), ORDO__INT(chunk_records)),
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
