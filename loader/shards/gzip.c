/* gzip shards: not yet read. */
#include "shards.h"

ordo_status ordo__gz_index(const char *path, ordo__shard *shard, const ordo__index_spec *spec,
                           ordo_error *err)
{
    (void)shard, (void)spec;
    return ordo__error(err, ORDO_INVALID, "shard '%s': gzip shards are not supported yet", path);
}

ordo_status ordo__gz_chunk_read(const char *path, const ordo__shard *shard, uint32_t index,
                                const ordo__read_spec *spec, ordo__doc_fn fn, void *context,
                                ordo__counts *counts, ordo_error *err)
{
    (void)shard, (void)index, (void)spec, (void)fn, (void)context, (void)counts;
    return ordo__error(err, ORDO_INVALID, "shard '%s': gzip shards are not supported yet", path);
}
