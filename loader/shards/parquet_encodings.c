/* Parquet value encodings: not yet decoded (each is refused). */
#include <stdlib.h>
#include <string.h>

#include "parquet.h"

static ordo_status refused(const char *what, ordo_error *err)
{
    return ordo__error(err, ORDO_INVALID, "encoding %s is not supported yet", what);
}

ordo_status ordo__pq_delta_binary(const unsigned char *in, size_t len, size_t count, int int32,
                                  int64_t *out, size_t *used, ordo_error *err)
{
    (void)in, (void)len, (void)count, (void)int32, (void)out, (void)used;
    return refused("DELTA_BINARY_PACKED", err);
}

ordo_status ordo__pq_delta_length(const unsigned char *in, size_t len, size_t count,
                                  ordo__pq_bytes *out, ordo_error *err)
{
    (void)in, (void)len, (void)count, (void)out;
    return refused("DELTA_LENGTH_BYTE_ARRAY", err);
}

ordo_status ordo__pq_delta_byte_array(const unsigned char *in, size_t len, size_t count,
                                      ordo__pq_bytes *out, ordo_error *err)
{
    (void)in, (void)len, (void)count, (void)out;
    return refused("DELTA_BYTE_ARRAY", err);
}

ordo_status ordo__pq_byte_stream_split(const unsigned char *in, size_t len, size_t count, int width,
                                       unsigned char *out, ordo_error *err)
{
    (void)in, (void)len, (void)count, (void)width, (void)out;
    return refused("BYTE_STREAM_SPLIT", err);
}
