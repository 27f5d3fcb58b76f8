/* Reading one chunk of a Parquet shard from its aux alone (no footer):
 * the plan decoded, its bytes checked against the chunk's digest, its
 * rows decided. */
#include <unistd.h>

#include "parquet.h"

/* Reads a Parquet chunk; see shards.h. */
ordo_status ordo__parquet_chunk_read(const char *path, const ordo__shard *shard, uint32_t index,
                                     const ordo__read_spec *spec, ordo__doc_fn fn, void *context,
                                     ordo__counts *counts, ordo_error *err)
{
    const ordo__chunk *chunk = &shard->chunks[index];
    if (chunk->aux_offset > shard->aux_size ||
        chunk->aux_length > shard->aux_size - chunk->aux_offset || !shard->aux)
        return ordo__error(err, ORDO_CONFLICT,
                           "shard '%s': chunk %u's Parquet locator (%u bytes at %llu) is beyond "
                           "the shard's %llu; index the shard again",
                           path, index, chunk->aux_length, (unsigned long long)chunk->aux_offset,
                           (unsigned long long)shard->aux_size);
    ordo__pq_plan plan;
    ordo_status status = ordo__pq_aux_decode(path, index, shard->aux + chunk->aux_offset,
                                             chunk->aux_length, &plan, err);
    int fd = -1;
    if (status == ORDO_OK)
        status = ordo__open_regular(path, "shard", &fd, err);
    ordo__counts here = {0};
    if (status == ORDO_OK)
        status = ordo__pq_plan_run(path, fd, &plan, chunk, index, chunk->first_record, spec, fn,
                                   context, &here, NULL, NULL, err);
    if (fd >= 0)
        close(fd);
    ordo__pq_plan_free(&plan);
    if (counts)
        *counts = here;
    return status;
}
