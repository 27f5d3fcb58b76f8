/* gzip shards (.jsonl.gz): access points every span of output, chunks of
 * the lines starting between two, read from their point alone; the same
 * documents and counts as the same records in .jsonl; every kind of bad
 * file named by byte, and a changed file or a hostile index never misread. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "corpus.h"
#include "fixtures.h"
#include "testing.h"

/* ---- Writing the files ---- */

/* `count` JSON lines: documents of min_len to max_len letters, every 7th
 * line blank and every 11th an empty text; *len gets the bytes. */
static char *make_records(int count, int min_len, int max_len, size_t *len)
{
    size_t cap = (size_t)count * ((size_t)max_len + 64), at = 0;
    char *out = malloc(cap);
    ASSERT(out != NULL);
    uint32_t x = 12345;
    for (int i = 0; i < count; i++) {
        if (i % 7 == 3) {
            out[at++] = '\n';
            continue;
        }
        at += (size_t)sprintf(out + at, "{\"id\": %d, \"meta\": {\"n\": %d}, \"text\": \"", i, i);
        x = x * 1103515245u + 12345u;
        int n = i % 11 == 5 ? 0 : min_len + (int)((x >> 8) % (uint32_t)(max_len - min_len + 1));
        for (int j = 0; j < n; j++) {
            x = x * 1103515245u + 12345u;
            out[at++] = (char)((x >> 24) % 5 == 0 ? ' ' : 'a' + (x >> 16) % 20);
        }
        at += (size_t)sprintf(out + at, "\"}\n");
    }
    *len = at;
    return out;
}

/* Appends one gzip member of `data` to `f` (zlib, level `level`). */
static void put_member(FILE *f, const char *data, size_t len, int level)
{
    z_stream z = {0};
    ASSERT(deflateInit2(&z, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    size_t cap = deflateBound(&z, (uLong)len);
    unsigned char *out = malloc(cap);
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    ASSERT(deflate(&z, Z_FINISH) == Z_STREAM_END);
    ASSERT(fwrite(out, 1, cap - z.avail_out, f) == cap - z.avail_out);
    deflateEnd(&z);
    free(out);
}

/* Writes `data` gzipped to `path`: a new member every `member` input bytes
 * (0: one member). */
static void write_gz(const char *path, const char *data, size_t len, size_t member, int level)
{
    FILE *f = fopen(path, "wb");
    ASSERT(f != NULL);
    size_t step = member ? member : len;
    size_t at = 0;
    do {
        size_t n = len - at < step ? len - at : step;
        put_member(f, data + at, n, level);
        at += n;
    } while (at < len);
    ASSERT(fclose(f) == 0);
}

/* ---- Reading them back ---- */

/* What a read yields: documents, their bytes, and a hash of them with
 * their record numbers in the shard. */
typedef struct {
    uint64_t docs, bytes, hash, base;
} yield;

static int take(void *context, const char *text, size_t len, uint64_t record)
{
    yield *y = context;
    y->docs++;
    y->bytes += len;
    uint64_t h = y->hash ^ (record + y->base) * 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)text[i]) * 0x100000001B3ull;
    y->hash = h;
    return 0;
}

static const ordo__read_spec text_spec = {"text", NULL, 0, 0};

static yield scan_file(const char *path, enum ordo__format format, ordo__counts *counts)
{
    yield y = {0};
    ordo_error err;
    ASSERT_OK(ordo__file_scan(path, format, &text_spec, take, &y, counts, &err), &err);
    return y;
}

/* The shard at `path`, hashed and indexed with `limit` (0: 4 MiB). */
static ordo__shard index_gz(const char *path, uint64_t limit)
{
    ordo__shard shard = {.path = (char *)path, .format = ORDO_FORMAT_JSONL_GZ};
    ordo_error err;
    ASSERT_OK(ordo__sha256_file(path, shard.sha256, &shard.size, &err), &err);
    ordo__index_spec spec = {
        .read = text_spec, .chunk_limit = limit ? limit : ORDO__CHUNK_MIN, .lanes = 64};
    ASSERT_OK(ordo__shard_index(path, &shard, &spec, &err), &err);
    return shard;
}

static ordo_status try_index(const char *path, ordo__shard *shard, uint64_t limit, ordo_error *err)
{
    *shard = (ordo__shard){.path = (char *)path, .format = ORDO_FORMAT_JSONL_GZ};
    ordo_status status = ordo__sha256_file(path, shard->sha256, &shard->size, err);
    ordo__index_spec spec = {.read = text_spec, .chunk_limit = limit, .lanes = 64};
    return status == ORDO_OK ? ordo__shard_index(path, shard, &spec, err) : status;
}

/* Every chunk read on its own, in order. */
static yield read_chunks(const char *path, const ordo__shard *shard)
{
    yield y = {0};
    ordo_error err;
    for (uint32_t c = 0; c < shard->chunk_count; c++) {
        y.base = shard->chunks[c].first_record;
        ASSERT_OK(ordo__chunk_read(path, shard, c, &text_spec, take, &y, NULL, &err), &err);
    }
    return y;
}

static void free_shard(ordo__shard *shard)
{
    free(shard->chunks);
    free(shard->aux);
    shard->chunks = NULL;
    shard->aux = NULL;
}

static ordo__gz_point *point_of(const ordo__shard *shard, uint32_t c)
{
    static ordo__gz_point point;
    ordo_error err;
    const ordo__chunk *chunk = &shard->chunks[c];
    ASSERT_OK(ordo__gz_point_decode("s", c, shard->aux + chunk->aux_offset, chunk->aux_length,
                                    &point, &err),
              &err);
    return &point;
}

/* The .gz gives what the .jsonl of the same records gives: documents (in
 * order, with their record numbers) and counts, by a whole-file scan and
 * by reading the chunks of its index one by one. */
static void same_as_jsonl(const char *gz, const char *records, size_t len, const ordo__shard *shard)
{
    const char *jsonl = corpus_kept(test_path("same.jsonl"));
    test_write_file(jsonl, records, len);
    ordo__counts plain_counts, gz_counts;
    yield plain = scan_file(jsonl, ORDO_FORMAT_JSONL, &plain_counts);
    yield whole = scan_file(gz, ORDO_FORMAT_JSONL_GZ, &gz_counts);
    yield chunks = read_chunks(gz, shard);
    ASSERT(plain.docs > 0);
    ASSERT_EQ_INT(whole.docs, plain.docs);
    ASSERT_EQ_INT(whole.bytes, plain.bytes);
    ASSERT_EQ_INT(whole.hash, plain.hash);
    ASSERT_EQ_INT(chunks.docs, plain.docs);
    ASSERT_EQ_INT(chunks.hash, plain.hash);
    ASSERT_EQ_INT(gz_counts.read, plain_counts.read);
    ASSERT_EQ_INT(gz_counts.empty, plain_counts.empty);
    ASSERT_EQ_INT(gz_counts.passed, plain_counts.passed);
    ASSERT_EQ_INT(shard->counts.read, plain_counts.read);
    ASSERT_EQ_INT(shard->records, plain_counts.passed);
    ASSERT_EQ_INT(shard->skipped, plain_counts.empty);
    uint64_t raw = 0, records_in_chunks = 0;
    for (uint32_t c = 0; c < shard->chunk_count; c++) {
        raw += shard->chunks[c].raw_length;
        records_in_chunks += shard->chunks[c].records;
    }
    ASSERT_EQ_INT(records_in_chunks, plain_counts.passed);
    ASSERT(raw <= len);
}

/* ---- Files that read ---- */

/* One member of about 3.3 MiB of records: several access points at block
 * boundaries, with windows, cutting lines; each chunk reads from its own. */
TEST(gzip_single_member_reads_like_jsonl)
{
    size_t len = 0;
    char *records = make_records(13000, 50, 520, &len);
    ASSERT(len > 3 * ORDO__GZ_SPAN);
    const char *gz = corpus_kept(test_path("one.jsonl.gz"));
    write_gz(gz, records, len, 0, 6);
    ordo__shard shard = index_gz(gz, 0);
    ASSERT_EQ_INT(shard.chunk_count, 4);
    int windows = 0, cut = 0;
    for (uint32_t c = 0; c < shard.chunk_count; c++) {
        ordo__gz_point *p = point_of(&shard, c);
        ASSERT_EQ_INT(p->member, c == 0);
        windows += p->window_len == ORDO__GZ_WINDOW;
        cut += p->skip > 0;
        ASSERT(p->out >= (uint64_t)c * ORDO__GZ_SPAN);
        ASSERT(shard.chunks[c].raw_length < ORDO__GZ_SPAN + 300000);
        if (c > 0) /* chunks overlap by at most the blocks their last line ends in */
            ASSERT(shard.chunks[c].offset <
                   shard.chunks[c - 1].offset + shard.chunks[c - 1].length);
    }
    ASSERT_EQ_INT(windows, 3);
    ASSERT_EQ_INT(cut, 3);
    same_as_jsonl(gz, records, len, &shard);
    free_shard(&shard);
    free(records);
}

/* The gzip command's own files (a name in the header, level 9) read the
 * same. */
TEST(gzip_command_files_read_like_jsonl)
{
    size_t len = 0;
    char *records = make_records(6000, 50, 600, &len);
    const char *jsonl = corpus_kept(test_path("cmd.jsonl"));
    test_write_file(jsonl, records, len);
    char command[3000];
    snprintf(command, sizeof command, "gzip -9 -k '%s'", jsonl);
    ASSERT_EQ_INT(system(command), 0);
    const char *gz = corpus_kept(test_path("cmd.jsonl.gz"));
    ordo__shard shard = index_gz(gz, 0);
    ASSERT(shard.chunk_count >= 2);
    same_as_jsonl(gz, records, len, &shard);
    free_shard(&shard);
    free(records);
}

/* Many small members (bgzip-like, a member every 10 000 bytes, cutting
 * lines): every access point is a member start, with no window. */
TEST(gzip_many_small_members_split_at_member_starts)
{
    size_t len = 0;
    char *records = make_records(9000, 50, 500, &len);
    const char *gz = corpus_kept(test_path("members.jsonl.gz"));
    write_gz(gz, records, len, 10000, 6);
    ordo__shard shard = index_gz(gz, 0);
    ASSERT_EQ_INT(shard.chunk_count, 3);
    for (uint32_t c = 0; c < shard.chunk_count; c++) {
        ordo__gz_point *p = point_of(&shard, c);
        ASSERT_EQ_INT(p->member, 1);
        ASSERT_EQ_INT(p->window_len, 0);
        ASSERT_EQ_INT(shard.chunks[c].aux_length, ORDO__GZ_POINT_HEADER);
    }
    same_as_jsonl(gz, records, len, &shard);
    free_shard(&shard);
    free(records);
}

/* Lines longer than a span: a chunk's lines run over several access
 * points, whose spans start no line and make no chunk. */
TEST(gzip_chunks_span_several_access_points)
{
    ordo__gz_span = 8192;
    size_t len = 0;
    char *records = make_records(160, 100, 40000, &len);
    const char *gz = corpus_kept(test_path("long.jsonl.gz"));
    write_gz(gz, records, len, 0, 1);
    ordo__shard shard = index_gz(gz, 0);
    uint64_t spanned = 0;
    for (uint32_t c = 0; c + 1 < shard.chunk_count; c++) {
        uint64_t next = point_of(&shard, c + 1)->out, here = point_of(&shard, c)->out;
        if (next - here > 2 * ordo__gz_span)
            spanned++;
    }
    ASSERT(spanned > 10);
    same_as_jsonl(gz, records, len, &shard);
    free_shard(&shard);
    /* and over many members too */
    write_gz(gz, records, len, 3000, 6);
    shard = index_gz(gz, 0);
    same_as_jsonl(gz, records, len, &shard);
    free_shard(&shard);
    free(records);
}

/* Empty members between others read as nothing; a gzip of nothing is a
 * shard of no records; a last line without its newline counts. */
TEST(gzip_empty_members_and_empty_files)
{
    const char *gz = corpus_kept(test_path("e.jsonl.gz"));
    FILE *f = fopen(gz, "wb");
    put_member(f, "", 0, 6);
    put_member(f, "{\"text\": \"one\"}\n{\"te", 20, 6);
    put_member(f, "", 0, 6);
    const char *rest = "xt\": \"two\"}\n\n{\"text\": \"three\"}";
    put_member(f, rest, strlen(rest), 6);
    put_member(f, "", 0, 6);
    fclose(f);
    ordo__shard shard = index_gz(gz, 0);
    ASSERT_EQ_INT(shard.chunk_count, 1);
    ASSERT_EQ_INT(shard.counts.read, 4);
    ASSERT_EQ_INT(shard.records, 3);
    ASSERT_EQ_INT(shard.skipped, 1);
    yield y = read_chunks(gz, &shard);
    ASSERT_EQ_INT(y.docs, 3);
    ASSERT_EQ_INT(y.bytes, 11);
    free_shard(&shard);
    f = fopen(gz, "wb");
    put_member(f, "", 0, 9);
    fclose(f);
    shard = index_gz(gz, 0);
    ASSERT_EQ_INT(shard.chunk_count, 0);
    ASSERT_EQ_INT(shard.counts.read, 0);
    free_shard(&shard);
}

/* ---- Files that do not ---- */

/* Indexes `path`, expecting an error holding each of `needles`; the shard
 * is left as it was (nothing half-indexed). */
static void expect_refused(const char *path, uint64_t limit, ordo_status expected,
                           const char *const *needles)
{
    ordo__shard shard;
    ordo_error err;
    ASSERT_STATUS(try_index(path, &shard, limit, &err), expected, &err);
    for (int i = 0; needles[i]; i++)
        ASSERT_CONTAINS(err.message, needles[i]);
    ASSERT(shard.chunks == NULL && shard.aux == NULL && shard.chunk_count == 0);
}

#define N(...) ((const char *const[]){__VA_ARGS__, NULL})

static char *gz_bytes(size_t *size, size_t member)
{
    size_t len = 0;
    char *records = make_records(2000, 50, 300, &len);
    const char *gz = test_path("tmp.jsonl.gz");
    write_gz(gz, records, len, member, 6);
    free(records);
    char *bytes = test_read_file(gz, size);
    ASSERT(bytes != NULL);
    return bytes;
}

TEST(gzip_corrupt_truncated_and_bad_checks_are_named_by_byte)
{
    size_t size = 0;
    char *bytes = gz_bytes(&size, 0);
    const char *bad = corpus_kept(test_path("bad.jsonl.gz"));
    /* corrupt deflate data in the middle */
    char *copy = malloc(size);
    memcpy(copy, bytes, size);
    for (size_t i = size / 2; i < size / 2 + 64; i++)
        copy[i] = (char)0xff;
    test_write_file(bad, copy, size);
    expect_refused(bad, ORDO__CHUNK_MIN, ORDO_INVALID,
                   N("bad.jsonl.gz", "gzip member at byte 0 is corrupt at byte "));
    /* truncated */
    test_write_file(bad, bytes, size - 100);
    char needle[160];
    snprintf(needle, sizeof needle, "gzip member at byte 0 is truncated: the file ends at byte %zu",
             size - 100);
    expect_refused(bad, ORDO__CHUNK_MIN, ORDO_INVALID, N("bad.jsonl.gz", needle));
    /* a bad CRC32, then a bad ISIZE */
    memcpy(copy, bytes, size);
    copy[size - 8] ^= 1;
    test_write_file(bad, copy, size);
    snprintf(needle, sizeof needle,
             "gzip member at byte 0 is corrupt at byte %zu (incorrect data check)", size - 4);
    expect_refused(bad, ORDO__CHUNK_MIN, ORDO_INVALID, N(needle));
    memcpy(copy, bytes, size);
    copy[size - 1] ^= 1;
    test_write_file(bad, copy, size);
    expect_refused(bad, ORDO__CHUNK_MIN, ORDO_INVALID, N("incorrect length check"));
    /* trailing garbage */
    char *longer = malloc(size + 5);
    memcpy(longer, bytes, size);
    memcpy(longer + size, "junk\n", 5);
    test_write_file(bad, longer, size + 5);
    snprintf(needle, sizeof needle, "trailing garbage at byte %zu, after the last gzip member",
             size);
    expect_refused(bad, ORDO__CHUNK_MIN, ORDO_INVALID, N("bad.jsonl.gz", needle));
    /* a file that is only a gzip header; an empty file; not gzip at all */
    test_write_file(bad, bytes, 10);
    expect_refused(bad, ORDO__CHUNK_MIN, ORDO_INVALID, N("is truncated: the file ends at byte 10"));
    test_write_file(bad, "", 0);
    expect_refused(bad, ORDO__CHUNK_MIN, ORDO_INVALID, N("is empty: not a gzip file"));
    test_write_file(bad, "{\"text\": \"plain\"}\n", 18);
    expect_refused(bad, ORDO__CHUNK_MIN, ORDO_INVALID,
                   N("not a gzip file (no gzip header at byte 0)"));
    free(longer);
    free(copy);
    free(bytes);
}

/* A member after the first that is corrupt is named by its own offset. */
TEST(gzip_corrupt_member_is_named_by_its_offset)
{
    FILE *f = fopen(test_path("m.jsonl.gz"), "wb");
    put_member(f, "{\"text\": \"one\"}\n", 16, 6);
    long second = ftell(f);
    put_member(f, "{\"text\": \"two\"}\n", 16, 6);
    fclose(f);
    size_t size = 0;
    char *bytes = test_read_file(test_path("m.jsonl.gz"), &size);
    bytes[second + 3] = 0x40; /* FLG: reserved bit */
    test_write_file(test_path("m.jsonl.gz"), bytes, size);
    char needle[64];
    snprintf(needle, sizeof needle, "gzip member at byte %ld is corrupt", second);
    expect_refused(test_path("m.jsonl.gz"), ORDO__CHUNK_MIN, ORDO_INVALID, N(needle));
    free(bytes);
}

/* A line longer than the chunk limit is refused naming line and offset,
 * after holding no more than the limit; so is a bomb: 64 MiB of one line
 * from a file of 64 KiB. */
TEST(gzip_long_lines_and_bombs_are_bounded_errors)
{
    size_t len = 0;
    char *records = make_records(400, 100, 300, &len);
    char *big = malloc(len + 300000);
    memcpy(big, records, len);
    size_t at = len;
    at += (size_t)sprintf(big + at, "{\"text\": \"");
    memset(big + at, 'x', 200000);
    at += 200000;
    at += (size_t)sprintf(big + at, "\"}\n");
    const char *gz = corpus_kept(test_path("big.jsonl.gz"));
    write_gz(gz, big, at, 0, 6);
    char needle[160];
    snprintf(needle, sizeof needle, "at line 401 (byte %zu of the decompressed records)", len);
    expect_refused(gz, 131072, ORDO_INVALID,
                   N("big.jsonl.gz", "holds more than 131072 bytes", needle));
    /* alone in its chunk, the line itself is named */
    write_gz(gz, big + len, at - len, 0, 6);
    expect_refused(gz, 131072, ORDO_INVALID,
                   N("line 1, at byte 0 of the decompressed records", "is longer than 131072"));
    free(big);
    free(records);
    size_t bomb_len = (size_t)64 << 20;
    char *bomb = malloc(bomb_len);
    memset(bomb, 'a', bomb_len);
    write_gz(gz, bomb, bomb_len, 0, 9);
    struct stat st;
    ASSERT(stat(gz, &st) == 0 && st.st_size < 100000);
    expect_refused(gz, ORDO__CHUNK_MIN, ORDO_INVALID, N("line 1, at byte 0", "is longer than"));
    free(bomb);
}

/* Compressed bytes padding a few records (a flush after every byte) are
 * bounded too: a chunk may take at most twice the limit in the file. */
TEST(gzip_padded_chunks_are_bounded_errors)
{
    const char *gz = corpus_kept(test_path("pad.jsonl.gz"));
    char line[30000];
    int n = snprintf(line, sizeof line, "{\"text\": \"");
    memset(line + n, 'a', sizeof line - (size_t)n - 3);
    memcpy(line + sizeof line - 3, "\"}\n", 3);
    z_stream z = {0};
    ASSERT(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    size_t cap = 16 * sizeof line;
    unsigned char *out = malloc(cap);
    z.next_out = out;
    z.avail_out = (uInt)cap;
    z.next_in = (unsigned char *)line;
    for (size_t i = 0; i < sizeof line; i++) {
        z.avail_in = 1;
        ASSERT(deflate(&z, Z_SYNC_FLUSH) == Z_OK);
    }
    ASSERT(deflate(&z, Z_FINISH) == Z_STREAM_END);
    test_write_file(gz, out, cap - z.avail_out);
    ASSERT(cap - z.avail_out > 4 * 32768);
    deflateEnd(&z);
    free(out);
    expect_refused(
        gz, 32768 + 1024, ORDO_INVALID,
        N("pad.jsonl.gz", "(gzip access point at byte 0) takes ",
          "compressed bytes for 30000 bytes of records, more than twice the chunk limit"));
    ordo__shard shard = index_gz(gz, 0); /* within 4 MiB */
    ASSERT_EQ_INT(shard.records, 1);
    free_shard(&shard);
}

/* Many records from a small file: chunks stay a span and a block each
 * (zlib's blocks of such data inflate to 4 MiB); at 64 lanes such a block
 * is more than a chunk may hold, refused naming it. */
TEST(gzip_bomb_of_records_gives_bounded_chunks)
{
    const char line[] = "{\"text\": \"a\"}\n";
    size_t n = (size_t)8 << 20, one = sizeof line - 1;
    char *data = malloc(n);
    for (size_t i = 0; i + one <= n; i += one)
        memcpy(data + i, line, one);
    n -= n % one;
    const char *gz = corpus_kept(test_path("many.jsonl.gz"));
    write_gz(gz, data, n, 0, 9);
    struct stat st;
    ASSERT(stat(gz, &st) == 0 && st.st_size < 100000);
    expect_refused(gz, ORDO__CHUNK_MIN, ORDO_INVALID,
                   N("many.jsonl.gz", "(gzip access point at byte 0) holds more than 4194304",
                     "its deflate block inflates to more before it ends"));
    ordo__shard shard = index_gz(gz, (uint64_t)64 << 20);
    ASSERT_EQ_INT(shard.records, n / one);
    ASSERT(shard.chunk_count >= 2);
    for (uint32_t c = 0; c < shard.chunk_count; c++)
        ASSERT(shard.chunks[c].raw_length <= ORDO__GZ_SPAN + 258 * 16384 + 2 * one);
    yield y = read_chunks(gz, &shard);
    ASSERT_EQ_INT(y.docs, n / one);
    free_shard(&shard);
    free(data);
}

/* Indexing checks the bytes it read against the shard's SHA-256. */
TEST(gzip_index_checks_the_shard_digest)
{
    size_t size = 0;
    char *bytes = gz_bytes(&size, 0);
    free(bytes);
    ordo__shard shard = {.path = "x", .format = ORDO_FORMAT_JSONL_GZ};
    ordo_error err;
    const char *gz = test_path("tmp.jsonl.gz");
    ASSERT_OK(ordo__sha256_file(gz, shard.sha256, &shard.size, &err), &err);
    shard.sha256[0] ^= 1;
    ordo__index_spec spec = {.read = text_spec, .chunk_limit = ORDO__CHUNK_MIN, .lanes = 64};
    ASSERT_STATUS(ordo__shard_index(gz, &shard, &spec, &err), ORDO_CONFLICT, &err);
    ASSERT_CONTAINS(err.message, "changed while being indexed");
    ASSERT(shard.chunks == NULL);
}

/* ---- A changed file, a hostile index ---- */

/* A shard changed in place (same size and time) after indexing: the
 * chunk whose bytes changed is ORDO_CONFLICT naming shard, chunk and both
 * digests; the others still read. */
TEST(gzip_changed_shard_is_a_digest_conflict)
{
    size_t len = 0;
    char *records = make_records(13000, 50, 520, &len);
    const char *gz = corpus_kept(test_path("c.jsonl.gz"));
    write_gz(gz, records, len, 0, 6);
    ordo__shard shard = index_gz(gz, 0);
    ASSERT_EQ_INT(shard.chunk_count, 4);
    struct stat before;
    ASSERT(stat(gz, &before) == 0);
    size_t size = 0;
    char *bytes = test_read_file(gz, &size);
    const ordo__chunk *two = &shard.chunks[2];
    /* a byte past the end of chunk 1's bytes, inside chunk 2's */
    size_t at = (size_t)(shard.chunks[1].offset + shard.chunks[1].length + 10);
    ASSERT(at < two->offset + two->length && at > two->offset);
    bytes[at] ^= 0x55;
    FILE *f = fopen(gz, "r+b");
    ASSERT(fseek(f, (long)at, SEEK_SET) == 0 && fputc(bytes[at], f) != EOF);
    fclose(f);
    struct timespec times[2] = {before.st_atim, before.st_mtim};
    ASSERT(utimensat(AT_FDCWD, gz, times, 0) == 0);
    ordo_error err;
    yield y = {0};
    ASSERT_OK(ordo__chunk_read(gz, &shard, 1, &text_spec, take, &y, NULL, &err), &err);
    ASSERT_STATUS(ordo__chunk_read(gz, &shard, 2, &text_spec, take, &y, NULL, &err), ORDO_CONFLICT,
                  &err);
    char was[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(two->digest, was);
    char needle[200];
    snprintf(needle, sizeof needle,
             "changed since it was indexed: chunk 2 (%llu bytes at byte %llu) had SHA-256 %s, now ",
             (unsigned long long)two->length, (unsigned long long)two->offset, was);
    ASSERT_CONTAINS(err.message, "c.jsonl.gz");
    ASSERT_CONTAINS(err.message, needle);
    free(bytes);
    free_shard(&shard);
    free(records);
}

/* Rewrites chunk `c`'s access point in a copy of the shard's aux. */
static void set_point(ordo__shard *shard, uint32_t c, const ordo__gz_point *point)
{
    ordo__gz_bytes aux = {0};
    uint32_t length = 0;
    ordo_error err;
    ASSERT_OK(ordo__gz_point_encode(point, &aux, &length, &err), &err);
    free(shard->aux);
    shard->aux = aux.data;
    shard->aux_size = aux.size;
    for (uint32_t i = 0; i < shard->chunk_count; i++)
        shard->chunks[i].aux_length = 0;
    shard->chunks[c].aux_offset = 0;
    shard->chunks[c].aux_length = length;
}

static void expect_read_refused(const char *path, const ordo__shard *shard, uint32_t c,
                                const char *needle)
{
    ordo_error err;
    yield y = {0};
    ASSERT_STATUS(ordo__chunk_read(path, shard, c, &text_spec, take, &y, NULL, &err), ORDO_INVALID,
                  &err);
    ASSERT_CONTAINS(err.message, "shard '");
    ASSERT_CONTAINS(err.message, needle);
    ASSERT_EQ_INT(y.docs, 0);
}

/* Aux bytes that do not describe the file (a corrupt or hostile ledger)
 * are refused by name, never read as records: a point beyond the file, a
 * bad kind, bits or window size, a window that does not decode, a skip
 * that is not the rest of a line, a wrong window, a locator outside the
 * aux. */
TEST(gzip_hostile_access_points_are_refused)
{
    size_t len = 0;
    char *records = make_records(13000, 50, 520, &len);
    const char *gz = corpus_kept(test_path("h.jsonl.gz"));
    write_gz(gz, records, len, 0, 6);
    ordo__shard shard = index_gz(gz, 0);
    ordo__gz_point good = *point_of(&shard, 1), p = good;
    ASSERT(good.skip > 1 && good.window_len == ORDO__GZ_WINDOW);
    unsigned char *aux = shard.aux;
    uint64_t aux_size = shard.aux_size;
    ordo__chunk chunk1 = shard.chunks[1];
    /* beyond the end of the file */
    shard.chunks[1].offset = shard.size + 100;
    expect_read_refused(gz, &shard, 1, "lies beyond the end of the file");
    shard.chunks[1] = chunk1;
    shard.chunks[1].length = shard.size;
    expect_read_refused(gz, &shard, 1, "lies beyond the end of the file");
    shard.chunks[1] = chunk1;
    /* a locator outside the aux */
    shard.chunks[1].aux_offset = aux_size - 10;
    expect_read_refused(gz, &shard, 1, "outside the shard's access points");
    shard.chunks[1] = chunk1;
    /* malformed bytes */
    unsigned char saved[ORDO__GZ_POINT_HEADER];
    memcpy(saved, aux + chunk1.aux_offset, sizeof saved);
    aux[chunk1.aux_offset] = 7;
    expect_read_refused(gz, &shard, 1, "unknown kind");
    memcpy(aux + chunk1.aux_offset, saved, sizeof saved);
    aux[chunk1.aux_offset + 1] = 9;
    expect_read_refused(gz, &shard, 1, "bit count out of range");
    memcpy(aux + chunk1.aux_offset, saved, sizeof saved);
    aux[chunk1.aux_offset + 28] = 1; /* window_len 65536 + ... */
    expect_read_refused(gz, &shard, 1, "window size out of range");
    memcpy(aux + chunk1.aux_offset, saved, sizeof saved);
    aux[chunk1.aux_offset + ORDO__GZ_POINT_HEADER] ^= 0xff;
    expect_read_refused(gz, &shard, 1, "compressed window does not decode");
    aux[chunk1.aux_offset + ORDO__GZ_POINT_HEADER] ^= 0xff;
    shard.chunks[1].aux_length -= 1;
    expect_read_refused(gz, &shard, 1, "compressed window size differs");
    shard.chunks[1] = chunk1;
    /* well formed, but not this file's */
    shard.aux = NULL;
    p.skip = good.skip - 1;
    set_point(&shard, 1, &p);
    expect_read_refused(gz, &shard, 1, "does not skip exactly the rest of a line");
    p = good;
    p.skip = good.skip + 1;
    set_point(&shard, 1, &p);
    expect_read_refused(gz, &shard, 1, "does not skip exactly the rest of a line");
    p = good;
    for (uint32_t i = 0; i < p.window_len; i++)
        p.window[i] = 'q';
    set_point(&shard, 1, &p);
    expect_read_refused(gz, &shard, 1, "the index does not match the file");
    p = good;
    p.crc ^= 1;
    set_point(&shard, 1, &p);
    expect_read_refused(gz, &shard, 1, "CRC32 differs");
    p = good;
    p.bits = (good.bits + 3) % 8;
    set_point(&shard, 1, &p);
    ordo_error err;
    yield y = {0};
    ASSERT(ordo__chunk_read(gz, &shard, 1, &text_spec, take, &y, NULL, &err) != ORDO_OK);
    ASSERT_EQ_INT(y.docs, 0);
    p = good;
    p.member = 1;
    p.bits = 0;
    p.window_len = 0;
    set_point(&shard, 1, &p);
    expect_read_refused(gz, &shard, 1, "corrupt");
    /* raw_length beyond what the point yields */
    set_point(&shard, 1, &good);
    shard.chunks[1].raw_length = shard.chunks[1].raw_length * 4;
    expect_read_refused(gz, &shard, 1, "ends before its records do");
    shard.chunks[1].raw_length = (uint64_t)1 << 40;
    expect_read_refused(gz, &shard, 1, "has sizes out of range");
    free(aux);
    free_shard(&shard);
    free(records);
}

/* ---- End to end: a recipe over .jsonl.gz shards ---- */

/* `files` shards of the same records, as .jsonl and as .jsonl.gz (one of
 * them in members of 5000 bytes), the text at the dotted "body.text". */
static void write_pair(int files)
{
    mkdir(test_path("plain"), 0755);
    mkdir(test_path("gz"), 0755);
    for (int f = 0; f < files; f++) {
        size_t len = 0;
        char *records = make_records(1500 + 300 * f, 10, 300, &len);
        char *nested = malloc(2 * len + 64);
        size_t at = 0;
        for (size_t i = 0; i < len; i++) { /* "text": "..." becomes "body": {"text": "..."} */
            if (strncmp(records + i, "\"text\": \"", 9) == 0) {
                at += (size_t)sprintf(nested + at, "\"body\": {\"text\": \"");
                i += 8;
            } else if (records[i] == '}' && i + 1 < len && records[i + 1] == '\n' &&
                       records[i - 1] == '"') {
                at += (size_t)sprintf(nested + at, "}}");
            } else {
                nested[at++] = records[i];
            }
        }
        char name[64];
        snprintf(name, sizeof name, "plain/part-%d.jsonl", f);
        test_write_file(test_path(name), nested, at);
        snprintf(name, sizeof name, "gz/part-%d.jsonl.gz", f);
        write_gz(test_path(name), nested, at, f == 1 ? 5000 : 0, 6);
        free(nested);
        free(records);
    }
}

static ordo_recipe *recipe_over(const char *glob, ordo_ledger *ledger)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"name\": \"gz\", \"seed\": 7, \"seq_len\": 32, \"global_batch\": 16, \"lanes\": 4, "
             "\"flush_every\": 2, \"shuffle\": true, \"tokenizer\": {\"kind\": \"bytes\"}, "
             "\"sources\": [{\"name\": \"a\", \"paths\": [\"%s\"], \"text_field\": "
             "\"body.text\", \"weight\": 1}]}",
             glob);
    ordo_recipe *r = NULL;
    ordo_error err;
    char root[1024];
    snprintf(root, sizeof root, "%s", test_path("."));
    ASSERT_OK(ordo_recipe_parse(json, strlen(json), root, 0, &r, &err), &err);
    ASSERT_OK(ordo_recipe_index(r, ledger, NULL, NULL, &err), &err);
    return r;
}

#define E2E_STEPS 40

/* Lane digests of every step at world size `world` (all its ranks). */
static void digests_at(const ordo_recipe *r, int world, unsigned char *out)
{
    for (int rank = 0; rank < world; rank++) {
        ordo_loader_options o = {
            .rank = rank, .world_size = world, .read_workers = 2, .tokenize_workers = 2};
        ordo_loader *l = NULL;
        ordo_error err;
        ordo_batch b;
        ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
        for (int s = 0; s < E2E_STEPS; s++) {
            ASSERT_OK(ordo_loader_next(l, &b, &err), &err);
            for (int i = 0; i < b.lane_count; i++)
                memcpy(out + ((size_t)s * 4 + (size_t)b.lanes[i]) * 32, b.lane_digests + i * 32,
                       32);
        }
        ordo_loader_close(l);
    }
}

/* Every document of a recipe's source, in shard and chunk order. */
static yield documents_of(const ordo_recipe *r, ordo__counts *counts)
{
    const ordo__source *src = &r->sources[0];
    ordo__read_spec spec = {src->text_field, NULL, 0, 0};
    yield y = {0};
    *counts = (ordo__counts){0};
    ordo_error err;
    for (uint32_t i = 0; i < src->shard_count; i++) {
        const ordo__shard *shard = &src->shards[i];
        char *path = ordo__shard_path(r, shard);
        for (uint32_t c = 0; c < shard->chunk_count; c++) {
            y.base = shard->chunks[c].first_record + ((uint64_t)i << 32);
            ASSERT_OK(ordo__chunk_read(path, shard, c, &spec, take, &y, NULL, &err), &err);
        }
        free(path);
        counts->read += shard->counts.read;
        counts->passed += shard->counts.passed;
        counts->empty += shard->counts.empty;
    }
    return y;
}

/* A recipe over .jsonl.gz shards gives the same batches at world sizes 1,
 * 2 and 4; and the same documents and counts as over the same records in
 * .jsonl (its chunks differ, so its batches may). */
TEST(gzip_recipe_batches_do_not_depend_on_the_world_size)
{
    ordo__gz_span = 16384;
    write_pair(3);
    ordo_ledger *ledger = fixture_open("l.db");
    ordo_recipe *gz = recipe_over("gz/*.jsonl.gz", ledger),
                *plain = recipe_over("plain/*.jsonl", NULL);
    ASSERT_EQ_INT(gz->indexed_shards, 3);
    ASSERT(gz->sources[0].shards[0].chunk_count > 4);
    static unsigned char w1[E2E_STEPS * 4 * 32], w2[E2E_STEPS * 4 * 32], w4[E2E_STEPS * 4 * 32];
    digests_at(gz, 1, w1);
    digests_at(gz, 2, w2);
    digests_at(gz, 4, w4);
    ASSERT(memcmp(w1, w2, sizeof w1) == 0);
    ASSERT(memcmp(w1, w4, sizeof w1) == 0);
    /* the same from the chunk tables and access points the ledger kept */
    ordo_recipe *stored = recipe_over("gz/*.jsonl.gz", ledger);
    ASSERT_EQ_INT(stored->indexed_shards, 0);
    ASSERT_EQ_INT(stored->sources[0].shards[0].aux_size, gz->sources[0].shards[0].aux_size);
    memset(w4, 0, sizeof w4);
    digests_at(stored, 4, w4);
    ASSERT(memcmp(w1, w4, sizeof w1) == 0);
    ordo_recipe_free(stored);
    ordo_ledger_close(ledger);
    ordo__counts gz_counts, plain_counts;
    yield from_gz = documents_of(gz, &gz_counts), from_plain = documents_of(plain, &plain_counts);
    ASSERT(from_plain.docs > 4000);
    ASSERT_EQ_INT(from_gz.docs, from_plain.docs);
    ASSERT_EQ_INT(from_gz.bytes, from_plain.bytes);
    ASSERT_EQ_INT(from_gz.hash, from_plain.hash);
    ASSERT_EQ_INT(gz_counts.read, plain_counts.read);
    ASSERT_EQ_INT(gz_counts.passed, plain_counts.passed);
    ASSERT_EQ_INT(gz_counts.empty, plain_counts.empty);
    ordo_source_plan gz_plan, plain_plan;
    ordo_error err;
    ASSERT_OK(ordo_recipe_passes(gz, E2E_STEPS, &gz_plan, &err), &err);
    ASSERT_OK(ordo_recipe_passes(plain, E2E_STEPS, &plain_plan, &err), &err);
    ASSERT_EQ_INT(gz_plan.documents, plain_plan.documents);
    ordo_recipe_free(gz);
    ordo_recipe_free(plain);
}
