/* A job stopped by a changed chunk leaves a chunk_mismatch event in its
 * run, naming shard, chunk and both digests (read back from the error the
 * reader gave, whose wording shards/shards.h fixes). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shards/shards.h"
#include "sql.h"

/* The changed chunk an error names, as a JSON object; NULL when the error
 * is not a changed chunk. The caller owns the result. */
static json_t *mismatch_detail(const ordo_error *why)
{
    if (!why || why->status != ORDO_CONFLICT)
        return NULL;
    const char *start = strstr(why->message, "shard '");
    const char *end = NULL;
    for (const char *p = start; p && (p = strstr(p, ORDO__CHUNK_CHANGED)); p++)
        end = p;
    if (!start || !end)
        return NULL;
    unsigned chunk = 0;
    unsigned long long bytes = 0, offset = 0;
    char was[ORDO_DIGEST_HEX_SIZE] = "", now[ORDO_DIGEST_HEX_SIZE] = "";
    const char *rest = end + strlen(ORDO__CHUNK_CHANGED);
    if (sscanf(rest, "%u (%llu bytes at byte %llu) had SHA-256 %64[0-9a-f], now %64[0-9a-f]",
               &chunk, &bytes, &offset, was, now) != 5)
        return json_pack("{s:s}", "message", why->message);
    start += strlen("shard '");
    return json_pack("{s:s%, s:I, s:I, s:I, s:s, s:s, s:s}", "shard", start, (size_t)(end - start),
                     "chunk", (json_int_t)chunk, "offset", (json_int_t)offset, "bytes",
                     (json_int_t)bytes, "indexed_sha256", was, "read_sha256", now, "message",
                     why->message);
}

/* Records what stopped a job when the ledger keeps it; see ordo.h. */
ordo_status ordo_event_record_stop(ordo_ledger *ledger, int64_t run_id, int64_t step,
                                   const ordo_error *why, int *recorded, ordo_error *err)
{
    if (recorded)
        *recorded = 0;
    json_t *detail = mismatch_detail(why);
    if (!detail)
        return ordo__ok(err);
    char *text = json_dumps(detail, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(detail);
    if (!text)
        return ordo__error(err, ORDO_NOMEM, "out of memory recording a chunk mismatch");
    ordo_status status = ordo_event_record(ledger, run_id, step > 0 ? step : 0,
                                           ORDO_EVENT_CHUNK_MISMATCH, text, err);
    free(text);
    if (status == ORDO_OK && recorded)
        *recorded = 1;
    return status;
}
