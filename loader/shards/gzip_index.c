/* Indexing a gzip shard (.jsonl.gz, .json.gz): one pass over the file,
 * hashing it and inflating every member with its CRC32 and ISIZE checked;
 * the output goes to the chunks (gzip_chunks.c; docs/gzip.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gzip_index.h"

#define READ_BLOCK ((size_t)1 << 20)

/* Makes at least `need` unconsumed bytes available, or all that is left;
 * consumed bytes are hashed into the pending chunks first. */
static ordo_status fill(gz_index *ix, size_t need, ordo_error *err)
{
    while (!ix->eof && ix->z.avail_in < need) {
        uint64_t pos = ordo__gz_in_pos(ix);
        for (int i = 0; i < GZ_PENDING; i++)
            if (ix->slot[i].live)
                ordo__gz_hash_to(ix, &ix->slot[i], pos);
        if (ix->z.next_in > ix->in)
            ix->last = ix->z.next_in[-1];
        memmove(ix->in, ix->z.next_in, ix->z.avail_in);
        ix->in_base = pos;
        ix->z.next_in = ix->in;
        ssize_t n = read(ix->fd, ix->in + ix->z.avail_in, READ_BLOCK - ix->z.avail_in);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return ordo__error(err, ORDO_IO, "cannot read shard '%s' at byte %llu (errno %d)",
                               ix->path, (unsigned long long)ix->total, errno);
        if (n == 0)
            ix->eof = 1;
        EVP_DigestUpdate(ix->file_sha, ix->in + ix->z.avail_in, (size_t)n);
        ix->z.avail_in += (uInt)n;
        ix->total += (uint64_t)n;
        if (ix->spec->progress)
            ix->spec->progress(ix->spec->progress_context, ix->total);
    }
    return ORDO_OK;
}

static ordo_status inflate_error(gz_index *ix, int ret, ordo_error *err)
{
    if (ret == Z_MEM_ERROR)
        return ordo__error(err, ORDO_NOMEM, "out of memory inflating '%s'", ix->path);
    return ordo__error(
        err, ORDO_INVALID, "shard '%s': gzip member at byte %llu is corrupt at byte %llu (%s)",
        ix->path, (unsigned long long)ix->member, (unsigned long long)ordo__gz_in_pos(ix),
        ix->z.msg ? ix->z.msg : "invalid data");
}

/* Inflates one member to its end (its CRC32 and ISIZE checked by zlib). */
static ordo_status inflate_member(gz_index *ix, ordo_error *err)
{
    for (;;) {
        ordo_status status = ix->z.avail_in ? ORDO_OK : fill(ix, 1, err);
        if (status != ORDO_OK)
            return status;
        if (ix->z.avail_in == 0)
            return ordo__error(err, ORDO_INVALID,
                               "shard '%s': gzip member at byte %llu is truncated: the file "
                               "ends at byte %llu",
                               ix->path, (unsigned long long)ix->member,
                               (unsigned long long)ix->total);
        ix->z.next_out = ix->out_buf;
        ix->z.avail_out = OUT_BLOCK;
        int ret = inflate(&ix->z, Z_BLOCK);
        if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR)
            return inflate_error(ix, ret, err);
        size_t produced = OUT_BLOCK - ix->z.avail_out;
        status = ordo__gz_take_output(ix, ix->out_buf, produced, err);
        ix->member_out += produced;
        ix->since_point += produced;
        if (status == ORDO_OK && ret == Z_STREAM_END)
            return ordo__gz_boundary(ix, 0, err);
        if (status == ORDO_OK && (ix->z.data_type & 128) && !(ix->z.data_type & 64))
            status = ordo__gz_boundary(ix, 1, err);
        if (status != ORDO_OK)
            return status;
    }
}

/* Every member in turn, then nothing but the end of the file. */
static ordo_status inflate_file(gz_index *ix, ordo_error *err)
{
    ordo_status status = fill(ix, 2, err);
    if (status == ORDO_OK && ix->z.avail_in == 0)
        return ordo__error(err, ORDO_INVALID, "shard '%s' is empty: not a gzip file", ix->path);
    while (status == ORDO_OK && ix->z.avail_in > 0) {
        uint64_t pos = ordo__gz_in_pos(ix);
        if (ix->z.avail_in < 2 || ix->z.next_in[0] != 0x1f || ix->z.next_in[1] != 0x8b)
            return ordo__error(err, ORDO_INVALID,
                               pos == 0 ? "shard '%s': not a gzip file (no gzip header at byte "
                                          "%llu)"
                                        : "shard '%s': trailing garbage at byte %llu, after the "
                                          "last gzip member",
                               ix->path, (unsigned long long)pos);
        ix->member = pos;
        ix->member_out = 0;
        if (inflateReset(&ix->z) != Z_OK)
            return ordo__error(err, ORDO_NOMEM, "cannot inflate '%s'", ix->path);
        if (!ix->cur || ix->since_point >= ordo__gz_span)
            status = ordo__gz_member_point(ix, err);
        if (status == ORDO_OK)
            status = inflate_member(ix, err);
        if (status == ORDO_OK)
            status = fill(ix, 2, err);
    }
    return status == ORDO_OK ? ordo__gz_finish(ix, err) : status;
}

/* The bytes indexed must be the bytes hashed when the recipe was read. */
static ordo_status same_bytes(gz_index *ix, const ordo__shard *shard, ordo_error *err)
{
    unsigned char digest[ORDO_DIGEST_SIZE];
    unsigned int n = 0;
    if (!EVP_DigestFinal_ex(ix->file_sha, digest, &n))
        return ordo__error(err, ORDO_NOMEM, "cannot hash '%s'", ix->path);
    int differs = memcmp(digest, shard->sha256, sizeof digest) != 0;
    if (ix->total != shard->size || differs)
        return ordo__error(err, ORDO_CONFLICT,
                           "shard '%s' changed while being indexed (%llu bytes, was %llu; "
                           "SHA-256 %s)",
                           ix->path, (unsigned long long)ix->total, (unsigned long long)shard->size,
                           differs ? "differs" : "same");
    return ORDO_OK;
}

static ordo_status setup(gz_index *ix, ordo_error *err)
{
    ix->in = malloc(READ_BLOCK);
    ix->out_buf = malloc(OUT_BLOCK);
    ix->file_sha = EVP_MD_CTX_new();
    if (!ix->in || !ix->out_buf || !ix->file_sha ||
        !EVP_DigestInit_ex2(ix->file_sha, EVP_sha256(), NULL))
        return ordo__error(err, ORDO_NOMEM, "out of memory indexing '%s'", ix->path);
    if (inflateInit2(&ix->z, 31) != Z_OK)
        return ordo__error(err, ORDO_NOMEM, "cannot inflate '%s'", ix->path);
    ix->z.next_in = ix->in;
    return ORDO_OK;
}

static void teardown(gz_index *ix)
{
    inflateEnd(&ix->z);
    for (int i = 0; i < GZ_PENDING; i++) {
        EVP_MD_CTX_free(ix->slot[i].sha);
        free(ix->slot[i].point);
        free(ix->slot[i].buf);
    }
    EVP_MD_CTX_free(ix->file_sha);
    free(ix->in);
    free(ix->out_buf);
    if (ix->fd >= 0)
        close(ix->fd);
}

/* Indexes a gzip shard; see shards.h. The chunk table and the access
 * points (shard->aux) replace the shard's only when all went well. */
ordo_status ordo__gz_index(const char *path, ordo__shard *shard, const ordo__index_spec *spec,
                           ordo_error *err)
{
    gz_index ix = {.path = path,
                   .spec = spec,
                   .limit = spec->chunk_limit,
                   .fd = -1,
                   .line = 1,
                   .at_line_start = 1};
    ordo_status status = ordo__open_regular(path, "shard", &ix.fd, err);
    if (status == ORDO_OK)
        status = setup(&ix, err);
    if (status == ORDO_OK)
        status = inflate_file(&ix, err);
    if (status == ORDO_OK)
        status = same_bytes(&ix, shard, err);
    teardown(&ix);
    if (status != ORDO_OK) {
        free(ix.chunks);
        free(ix.aux.data);
        return status;
    }
    free(shard->chunks);
    free(shard->aux);
    shard->chunks = ix.chunks;
    shard->chunk_count = ix.count;
    shard->counts = ix.counts;
    shard->records = ix.counts.passed;
    shard->skipped = ix.counts.empty;
    shard->aux = ix.aux.data;
    shard->aux_size = ix.aux.size;
    return ORDO_OK;
}
