/* Parquet page codecs: UNCOMPRESSED, SNAPPY (libsnappy), GZIP (zlib) and
 * ZSTD, each decompressing into a buffer of exactly the size the page
 * header gives (checked against the chunk limit before it was allocated):
 * a page that decompresses to more or less is an error, never a larger
 * allocation. */
#include <snappy-c.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "parquet.h"

static ordo_status wrong_size(const char *what, const char *codec, const char *detail,
                              size_t expect, ordo_error *err)
{
    return ordo__error(err, ORDO_INVALID, "%s: %s data %s (its header says %zu bytes)", what, codec,
                       detail, expect);
}

static ordo_status gunzip(const unsigned char *in, size_t len, unsigned char *out, size_t expect,
                          const char *what, ordo_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK)
        return ordo__error(err, ORDO_NOMEM, "%s: cannot start zlib", what);
    unsigned char spare;
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)len;
    z.next_out = expect ? out : &spare;
    z.avail_out = (uInt)expect;
    int r = inflate(&z, Z_FINISH);
    size_t got = z.total_out;
    const char *msg = z.msg;
    int more = r == Z_BUF_ERROR && z.avail_out == 0 && z.avail_in > 0;
    inflateEnd(&z);
    if (r == Z_STREAM_END && got == expect)
        return ORDO_OK;
    if (r == Z_STREAM_END)
        return wrong_size(what, "GZIP", "decompresses to fewer bytes", expect, err);
    if (more || (r == Z_OK && z.avail_out == 0))
        return wrong_size(what, "GZIP", "decompresses to more bytes", expect, err);
    return ordo__error(err, ORDO_INVALID, "%s: GZIP data is corrupt or truncated (%s)", what,
                       msg ? msg : zError(r));
}

static ordo_status unsnappy(const unsigned char *in, size_t len, unsigned char *out, size_t expect,
                            const char *what, ordo_error *err)
{
    size_t n = 0;
    if (snappy_uncompressed_length((const char *)in, len, &n) != SNAPPY_OK)
        return ordo__error(err, ORDO_INVALID, "%s: SNAPPY data is corrupt", what);
    if (n != expect)
        return wrong_size(what, "SNAPPY",
                          n > expect ? "says it holds more bytes" : "says it holds fewer bytes",
                          expect, err);
    size_t got = expect;
    char spare;
    if (snappy_uncompress((const char *)in, len, expect ? (char *)out : &spare, &got) !=
            SNAPPY_OK ||
        got != expect)
        return ordo__error(err, ORDO_INVALID, "%s: SNAPPY data is corrupt", what);
    return ORDO_OK;
}

static ordo_status unzstd(const unsigned char *in, size_t len, unsigned char *out, size_t expect,
                          const char *what, ordo_error *err)
{
    unsigned long long size = ZSTD_getFrameContentSize(in, len);
    if (size == ZSTD_CONTENTSIZE_ERROR)
        return ordo__error(err, ORDO_INVALID, "%s: ZSTD data is not a zstd frame", what);
    if (size != ZSTD_CONTENTSIZE_UNKNOWN && size != expect)
        return wrong_size(what, "ZSTD", "records another content size", expect, err);
    size_t got = ZSTD_decompress(out, expect, in, len);
    if (ZSTD_isError(got) && ZSTD_getErrorCode(got) == ZSTD_error_dstSize_tooSmall)
        return wrong_size(what, "ZSTD", "decompresses to more bytes", expect, err);
    if (ZSTD_isError(got))
        return ordo__error(err, ORDO_INVALID, "%s: ZSTD data is corrupt (%s)", what,
                           ZSTD_getErrorName(got));
    if (got != expect)
        return wrong_size(what, "ZSTD", "decompresses to fewer bytes", expect, err);
    return ORDO_OK;
}

/* Decompresses a page body; see parquet.h. */
ordo_status ordo__pq_decompress(int codec, const unsigned char *in, size_t len, unsigned char *out,
                                size_t expect, const char *what, ordo_error *err)
{
    switch (codec) {
    case ORDO__PQ_UNCOMPRESSED:
        if (len != expect)
            return wrong_size(what, "UNCOMPRESSED", "has another size", expect, err);
        if (len)
            memcpy(out, in, len);
        return ORDO_OK;
    case ORDO__PQ_SNAPPY: return unsnappy(in, len, out, expect, what, err);
    case ORDO__PQ_GZIP: return gunzip(in, len, out, expect, what, err);
    case ORDO__PQ_ZSTD: return unzstd(in, len, out, expect, what, err);
    default:
        return ordo__error(err, ORDO_INVALID, "%s: codec %s is not read", what,
                           ordo__pq_codec_name(codec));
    }
}
