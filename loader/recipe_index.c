/* The recipe's plan: chunk tables and token estimates, computed once and
 * kept in the ledger (design §3: a resumed run never re-measures them). */
#include <stdlib.h>
#include <string.h>

#include "estimate.h"
#include "shard_index.h"

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

static int chunk_key(const ordo__shard *shard, const ordo_recipe *r)
{
    return shard->format == ORDO_FORMAT_JSONL ? r->chunk_records : 0;
}

/* Loads a stored index of this shard content; *found says whether any
 * (an index stored without chunk digests counts as none: the shard is
 * indexed again and its digests filled in). */
static ordo_status load_shard(ordo_ledger *ledger, const ordo_recipe *r, const ordo__source *src,
                              ordo__shard *shard, int *found, ordo_error *err)
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
    sqlite3_bind_text(stmt, 3, src->text_field, -1, SQLITE_STATIC);
    sqlite3_bind_int(stmt, 4, chunk_key(shard, r));
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
            shard->chunks[i] = (ordo__chunk){get_u64(e), get_u64(e + 8), get_u64(e + 16),
                                             (uint32_t)get_u64(e + 24), {0}};
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

static ordo_status store_shard(ordo_ledger *ledger, const ordo_recipe *r,
                               const ordo__source *src, const ordo__shard *shard, ordo_error *err)
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
        memcpy(digests + ORDO_DIGEST_SIZE * (size_t)i, shard->chunks[i].digest,
               ORDO_DIGEST_SIZE);
    }
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "INSERT INTO shards (path, sha256, text_field, chunk_records, size_bytes, records, "
        "skipped, chunks, chunk_table, chunk_digests) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
        "?9, ?10) ON CONFLICT (path, sha256, text_field, chunk_records) DO UPDATE SET "
        "records = excluded.records, skipped = excluded.skipped, chunks = excluded.chunks, "
        "chunk_table = excluded.chunk_table, chunk_digests = excluded.chunk_digests "
        "WHERE chunk_digests IS NULL",
        &stmt, err);
    if (status == ORDO_OK) {
        sqlite3_bind_text(stmt, 1, shard->path, -1, SQLITE_STATIC);
        sqlite3_bind_blob(stmt, 2, shard->sha256, ORDO_DIGEST_SIZE, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 3, src->text_field, -1, SQLITE_STATIC);
        sqlite3_bind_int(stmt, 4, chunk_key(shard, r));
        sqlite3_bind_int64(stmt, 5, (int64_t)shard->size);
        sqlite3_bind_int64(stmt, 6, (int64_t)shard->records);
        sqlite3_bind_int64(stmt, 7, (int64_t)shard->skipped);
        sqlite3_bind_int64(stmt, 8, shard->chunk_count);
        sqlite3_bind_blob64(stmt, 9, table, (sqlite3_uint64)shard->chunk_count * 32,
                            SQLITE_STATIC);
        sqlite3_bind_blob64(stmt, 10, digests,
                            (sqlite3_uint64)shard->chunk_count * ORDO_DIGEST_SIZE, SQLITE_STATIC);
        if (sqlite3_step(stmt) != SQLITE_DONE)
            status = ordo__db_error(ledger, err, "storing a shard index");
    }
    sqlite3_finalize(stmt);
    free(table);
    free(digests);
    return status;
}

static ordo_status link_shard(ordo_ledger *ledger, const ordo_recipe *r, const ordo__source *src,
                              const ordo__shard *shard, uint32_t position, ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "INSERT OR IGNORE INTO recipe_shards (recipe_id, source, position, shard_id) "
        "SELECT ?1, ?2, ?3, id FROM shards WHERE path = ?4 AND sha256 = ?5 AND "
        "text_field = ?6 AND chunk_records = ?7",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_text(stmt, 1, r->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, src->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 3, position);
    sqlite3_bind_text(stmt, 4, shard->path, -1, SQLITE_STATIC);
    sqlite3_bind_blob(stmt, 5, shard->sha256, ORDO_DIGEST_SIZE, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 6, src->text_field, -1, SQLITE_STATIC);
    sqlite3_bind_int(stmt, 7, chunk_key(shard, r));
    if (sqlite3_step(stmt) != SQLITE_DONE)
        status = ordo__db_error(ledger, err, "linking a shard to its recipe");
    sqlite3_finalize(stmt);
    return status;
}

/* The chunk limit of a recipe; see recipe_model.h. */
uint64_t ordo__chunk_limit(const ordo_recipe *r)
{
    uint64_t limit = ORDO__CHUNK_BUDGET / (uint64_t)(r->lanes > 0 ? r->lanes : 1);
    return limit < ORDO__CHUNK_MIN ? ORDO__CHUNK_MIN
                                   : limit > ORDO__CHUNK_MAX ? ORDO__CHUNK_MAX : limit;
}

/* An index made for a recipe with fewer lanes may hold chunks too large for
 * this one: checked before any lane reads them. */
static ordo_status chunks_fit(const ordo_recipe *r, const ordo__shard *shard, ordo_error *err)
{
    uint64_t limit = ordo__chunk_limit(r);
    for (uint32_t c = 0; c < shard->chunk_count; c++)
        if (shard->chunks[c].raw_length > limit)
            return ordo__error(err, ORDO_INVALID,
                               "shard '%s': chunk %u at byte %llu holds %llu bytes; with %d "
                               "lanes a chunk may hold at most %llu (256 MiB / lanes, at least "
                               "4 MiB: every lane holds its chunks in memory)", shard->path, c,
                               (unsigned long long)shard->chunks[c].offset,
                               (unsigned long long)shard->chunks[c].raw_length, r->lanes,
                               (unsigned long long)limit);
    return ORDO_OK;
}

static ordo_status index_shards(ordo_recipe *r, ordo_ledger *ledger, ordo_progress_fn progress,
                                void *context, ordo_error *err)
{
    uint64_t total = 0, done = 0;
    r->indexed_shards = 0;
    for (uint32_t s = 0; s < r->source_count; s++)
        for (uint32_t i = 0; i < r->sources[s].shard_count; i++)
            total += r->sources[s].shards[i].size;
    for (uint32_t s = 0; s < r->source_count; s++) {
        ordo__source *src = &r->sources[s];
        for (uint32_t i = 0; i < src->shard_count; i++) {
            ordo__shard *shard = &src->shards[i];
            int found = 0;
            ordo_status status = ledger ? load_shard(ledger, r, src, shard, &found, err) : ORDO_OK;
            /* An index is made from the file's bytes under its digest. */
            if (status == ORDO_OK && !found)
                status = ordo__shard_check_whole(r, shard, err);
            if (status == ORDO_OK && !found) {
                char *path = ordo__shard_path(r, shard);
                status = path ? ordo__shard_index(path, shard, src->text_field,
                                                  r->chunk_records, ordo__chunk_limit(r),
                                                  r->lanes, err)
                              : ordo__error(err, ORDO_NOMEM, "out of memory");
                free(path);
                r->indexed_shards++;
                if (status == ORDO_OK && ledger)
                    status = store_shard(ledger, r, src, shard, err);
            }
            if (status == ORDO_OK)
                status = chunks_fit(r, shard, err);
            if (status == ORDO_OK && ledger)
                status = link_shard(ledger, r, src, shard, i, err);
            if (status == ORDO_OK && ledger)
                status = ordo__shard_remember(ledger, r, shard, err);
            if (status != ORDO_OK)
                return status;
            done += shard->size;
            if (progress)
                progress(done, total, context);
        }
    }
    return ORDO_OK;
}

/* Flat chunk lists and integer shares; see recipe_model.h. */
ordo_status ordo__recipe_finish_plan(ordo_recipe *r, ordo_error *err)
{
    double total_weight = 0;
    for (uint32_t s = 0; s < r->source_count; s++)
        total_weight += r->sources[s].weight;
    for (uint32_t s = 0; s < r->source_count; s++) {
        ordo__source *src = &r->sources[s];
        uint64_t count = 0;
        for (uint32_t i = 0; i < src->shard_count; i++)
            count += src->shards[i].chunk_count;
        if (count > UINT32_MAX)
            return ordo__error(err, ORDO_INVALID, "source '%s' has more than 2^32 chunks",
                               src->name);
        free(src->chunks);
        src->chunks = malloc((count ? count : 1) * sizeof *src->chunks);
        if (!src->chunks)
            return ordo__error(err, ORDO_NOMEM, "out of memory planning a recipe");
        src->chunk_count = 0;
        for (uint32_t i = 0; i < src->shard_count; i++)
            for (uint32_t c = 0; c < src->shards[i].chunk_count; c++)
                src->chunks[src->chunk_count++] = (ordo__chunk_ref){i, c};
        double share = src->weight / total_weight * (double)ORDO__SHARE_ONE;
        src->share = share < 1 ? 1 : (uint64_t)(share + 0.5);
    }
    return ORDO_OK;
}

static ordo_status load_estimate(ordo_ledger *ledger, const ordo_recipe *r, ordo__source *src,
                                 int *found, ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "SELECT sample_records, sample_bytes, sample_tokens FROM token_estimates "
        "WHERE recipe_id = ?1 AND source = ?2",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_text(stmt, 1, r->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, src->name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(stmt);
    *found = rc == SQLITE_ROW;
    if (*found) {
        src->sample_records = (uint64_t)sqlite3_column_int64(stmt, 0);
        src->sample_bytes = (uint64_t)sqlite3_column_int64(stmt, 1);
        src->sample_tokens = (uint64_t)sqlite3_column_int64(stmt, 2);
    } else if (rc != SQLITE_DONE) {
        status = ordo__db_error(ledger, err, "reading a token estimate");
    }
    sqlite3_finalize(stmt);
    return status;
}

static ordo_status store_estimate(ordo_ledger *ledger, const ordo_recipe *r,
                                  const ordo__source *src, ordo_error *err)
{
    sqlite3_stmt *stmt = NULL;
    ordo_status status = ordo__prepare(
        ledger,
        "INSERT OR IGNORE INTO token_estimates (recipe_id, source, tokens_per_byte, "
        "sample_records, sample_bytes, sample_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        &stmt, err);
    if (status != ORDO_OK)
        return status;
    sqlite3_bind_text(stmt, 1, r->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, src->name, -1, SQLITE_STATIC);
    sqlite3_bind_double(stmt, 3, (double)src->sample_tokens / (double)src->sample_bytes);
    sqlite3_bind_int64(stmt, 4, (int64_t)src->sample_records);
    sqlite3_bind_int64(stmt, 5, (int64_t)src->sample_bytes);
    sqlite3_bind_int64(stmt, 6, (int64_t)src->sample_tokens);
    if (sqlite3_step(stmt) != SQLITE_DONE)
        status = ordo__db_error(ledger, err, "storing a token estimate");
    sqlite3_finalize(stmt);
    return status;
}

static ordo_status estimate_all(ordo_recipe *r, ordo_ledger *ledger, ordo_error *err)
{
    for (uint32_t s = 0; s < r->source_count; s++) {
        ordo__source *src = &r->sources[s];
        int found = 0;
        ordo_status status = ledger ? load_estimate(ledger, r, src, &found, err) : ORDO_OK;
        if (status == ORDO_OK && !found) {
            status = ordo__estimate_source(r, s, err);
            if (status == ORDO_OK && ledger)
                status = store_estimate(ledger, r, src, err);
        }
        if (status != ORDO_OK)
            return status;
    }
    return ORDO_OK;
}

static ordo_status index_locked(ordo_recipe *r, ordo_ledger *ledger, ordo_progress_fn progress,
                                void *context, ordo_error *err)
{
    ordo_status status = ORDO_OK;
    if (ledger) {
        char id[ORDO_DIGEST_HEX_SIZE];
        status = ordo_recipe_put(ledger, r->canonical, strlen(r->canonical), id, err);
    }
    if (status == ORDO_OK)
        status = index_shards(r, ledger, progress, context, err);
    if (status == ORDO_OK)
        status = ordo__recipe_finish_plan(r, err);
    if (status == ORDO_OK)
        status = estimate_all(r, ledger, err);
    return status;
}

/* Makes (or reloads) the recipe's plan; see ordo.h. */
ordo_status ordo_recipe_index(ordo_recipe *r, ordo_ledger *ledger, ordo_progress_fn progress,
                              void *context, ordo_error *err)
{
    if (r->planned)
        return ordo__ok(err);
    ordo_status status = index_locked(r, ledger, progress, context, err);
    if (status == ORDO_OK)
        r->planned = 1;
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* Shards the last ordo_recipe_index read; see ordo.h. */
int ordo_recipe_indexed_shards(const ordo_recipe *recipe)
{
    return recipe->indexed_shards;
}

/* Shard files hashed whole since the recipe was opened; see ordo.h. */
void ordo_recipe_hashed(const ordo_recipe *recipe, int *shards, uint64_t *bytes)
{
    if (shards)
        *shards = recipe->hashed_shards;
    if (bytes)
        *bytes = recipe->hashed_bytes;
}
