/* Indexing a gzip shard (gzip_index.c, gzip_chunks.c): the state of one
 * pass over the file, shared by the two files and no other. */
#ifndef ORDO_SHARDS_GZIP_INDEX_H
#define ORDO_SHARDS_GZIP_INDEX_H

#include <openssl/evp.h>
#include <zlib.h>

#include "gzip.h"

/* Output bytes inflated at a time. */
#define OUT_BLOCK ((size_t)1 << 18)

/* A chunk on its way: from its access point, through its records, to the
 * first block boundary after its last record, where its bytes end. */
typedef struct {
    int live;
    ordo__gz_point *point;
    uint64_t offset; /* file offset of the point's first byte */
    EVP_MD_CTX *sha; /* of the file's bytes from `offset` */
    uint64_t hashed; /* file offset hashed up to */
    char *buf;       /* its records so far (from its first line) */
    size_t len, cap;
    uint64_t raw, first_record; /* once its records are complete */
    ordo__counts counts;
} gz_pending;

/* At most three chunks are pending at once: the one taking records, the
 * newest point's (waiting for its first line), and one whose records are
 * complete waiting for the block boundary where its bytes end. */
#define GZ_PENDING 3

typedef struct {
    const char *path;
    const ordo__index_spec *spec;
    uint64_t limit;
    int fd, eof;
    EVP_MD_CTX *file_sha;
    unsigned char *in;       /* READ_BLOCK bytes; z.next_in points into it */
    uint64_t in_base, total; /* file offset of in[0]; bytes read */
    unsigned char last;      /* the file byte before in[0] */
    z_stream z;
    unsigned char *out_buf;
    uint64_t member, member_out; /* the current member's file offset and output */
    uint64_t out, since_point;   /* output bytes: all, since the last point */
    int at_line_start;           /* the next output byte starts a line */
    uint64_t line;               /* the number of the next line to start */
    gz_pending slot[GZ_PENDING];
    gz_pending *cur, *next, *closing;
    ordo__chunk *chunks;
    uint32_t count, capacity;
    ordo__gz_bytes aux;
    ordo__counts counts;
} gz_index;

/* The file offset of the next byte inflate takes. */
static inline uint64_t ordo__gz_in_pos(const gz_index *ix)
{
    return ix->in_base + (uint64_t)(ix->z.next_in - ix->in);
}

/* Hashes a pending chunk's file bytes up to `pos` (all in the buffer). */
static inline void ordo__gz_hash_to(gz_index *ix, gz_pending *p, uint64_t pos)
{
    if (p->hashed < pos)
        EVP_DigestUpdate(p->sha, ix->in + (p->hashed - ix->in_base), (size_t)(pos - p->hashed));
    p->hashed = pos;
}

/* Output bytes of inflate, in order, to the chunks they belong to. */
ordo_status ordo__gz_take_output(gz_index *ix, const unsigned char *data, size_t n,
                                 ordo_error *err);

/* Inflate stands at a block boundary (`candidate`: one a point may be
 * made at) or at a member's end. */
ordo_status ordo__gz_boundary(gz_index *ix, int candidate, ordo_error *err);

/* Makes an access point at the start of the member about to be inflated. */
ordo_status ordo__gz_member_point(gz_index *ix, ordo_error *err);

/* The file has ended after its last member: the last chunks close. */
ordo_status ordo__gz_finish(gz_index *ix, ordo_error *err);

#endif
