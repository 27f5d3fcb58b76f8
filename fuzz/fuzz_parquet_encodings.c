/* Fuzzes the Parquet value decoders: the first byte picks the encoding
 * (and INT32 or INT64, the value width), the next two the value count,
 * the rest is the encoded page. Every decoder must stay inside the input
 * and its output, and a byte-array list inside its limit. */
#include <stdlib.h>
#include <string.h>

#include "testing.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 3)
        return 0;
    ordo_error err;
    unsigned pick = data[0];
    size_t count = (size_t)data[1] | (size_t)data[2] << 8;
    if (pick & 0x80)
        count <<= 4; /* up to ~2^20 values: long runs in few bytes */
    const unsigned char *in = data + 3;
    size_t len = size - 3, used = 0;
    switch (pick % 4) {
    case 0: {
        int64_t *out = malloc((count + 1) * sizeof *out);
        if (out &&
            ordo__pq_delta_binary(in, len, count, (pick >> 2) & 1, out, &used, &err) == ORDO_OK &&
            used > len)
            abort();
        free(out);
        break;
    }
    case 1:
    case 2: {
        ordo__pq_bytes out = {.limit = (size_t)1 << 22};
        ordo_status status = pick % 4 == 1 ? ordo__pq_delta_length(in, len, count, &out, &err)
                                           : ordo__pq_delta_byte_array(in, len, count, &out, &err);
        if (status == ORDO_OK && (out.count != count || out.offset[out.count] != out.size))
            abort();
        if (out.size > out.limit)
            abort();
        ordo__pq_bytes_free(&out);
        break;
    }
    default: {
        int width = (pick >> 2) & 1 ? 8 : 4;
        unsigned char *out = malloc(count * (size_t)width + 1);
        if (out)
            ordo__pq_byte_stream_split(in, len, count, width, out, &err);
        free(out);
        break;
    }
    }
    return 0;
}
