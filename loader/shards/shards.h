/* shards: the shard formats (internal, not installed): the chunk table of
 * a shard, reading a chunk and splitting it into records, indexing a shard
 * file. Depends on core. */
#ifndef ORDO_SHARDS_H
#define ORDO_SHARDS_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/core.h"

/* The shard formats, from the file name's ending (ordo__format_of):
 * .jsonl, .jsonl.zst, .txt, .jsonl.gz / .json.gz (one JSON object a
 * line, gzip with access points), .parquet. */
enum ordo__format {
    ORDO_FORMAT_JSONL,
    ORDO_FORMAT_JSONL_ZST,
    ORDO_FORMAT_TXT,
    ORDO_FORMAT_JSONL_GZ,
    ORDO_FORMAT_PARQUET
};

/* The format a path's name ends in; -1 when none is known. */
int ordo__format_of(const char *path, enum ordo__format *format);

/* The formats' endings, for messages: ".jsonl, .jsonl.zst, ...". */
extern const char ordo__format_list[];

/* ---- Field values and filters (filter.c, field.c) ---- */

/* One field's value in a record, as a filter sees it. Strings point into
 * the record (valid during the callback that produced them). */
typedef enum {
    ORDO__VALUE_MISSING, /* no such field */
    ORDO__VALUE_NULL,
    ORDO__VALUE_BOOL,   /* b */
    ORDO__VALUE_INT,    /* i: JSON integers, INT32, INT64 */
    ORDO__VALUE_DOUBLE, /* d: JSON reals, FLOAT, DOUBLE */
    ORDO__VALUE_STRING, /* s, len: UTF-8 */
    ORDO__VALUE_OTHER   /* a JSON object or array: never comparable */
} ordo__field_kind;

typedef struct ordo__field_value {
    ordo__field_kind kind;
    int b;
    int64_t i;
    double d;
    const char *s;
    size_t len;
} ordo__field_value;

/* A compiled filter (docs/recipe.md, "Filters"): immutable once compiled,
 * shared by every thread reading the source. */
typedef struct ordo__filter ordo__filter;

/* Compiles a source's "filter" object; errors name `source` (NULL: a
 * filter given alone, named "filter") and the filter's JSON path
 * ("filter.all[1].ge"). *out is the caller's, freed
 * with ordo__filter_free. */
ordo_status ordo__filter_compile(const json_t *spec, const char *source, ordo__filter **out,
                                 ordo_error *err);

void ordo__filter_free(ordo__filter *filter);

/* The filter's canonical JSON (a new reference, keys sorted when dumped):
 * what the recipe id covers and the ledger keys a chunk table by. */
json_t *ordo__filter_canonical(const ordo__filter *filter);

/* The record fields the filter reads (dotted paths, "$bytes" excluded),
 * each once, in first-use order: field numbers for ordo__field_fn. */
uint32_t ordo__filter_field_count(const ordo__filter *filter);
const char *ordo__filter_field(const ordo__filter *filter, uint32_t index);

/* Gives field number `field` (of ordo__filter_field) of the current
 * record; non-OK stops the scan with that error. */
typedef ordo_status (*ordo__field_fn)(void *context, uint32_t field, ordo__field_value *out,
                                      ordo_error *err);

/* Whether a record of `text_bytes` text bytes passes (*pass 1) or not. A
 * field whose type cannot be compared as the filter asks (a string field
 * against a number) is ORDO_INVALID naming the field and both types; the
 * caller prefixes file and record. */
ordo_status ordo__filter_eval(const ordo__filter *filter, size_t text_bytes, ordo__field_fn get,
                              void *context, int *pass, ordo_error *err);

/* The JSON value at a dotted path ("meta.quality.score": each dot goes
 * one object deeper); NULL when any step is missing or not an object.
 * Borrowed from `record`. */
const json_t *ordo__json_path(const json_t *record, const char *path);

/* Whether `path` is a field name or a dotted path of them (no empty
 * part): what text fields and filter fields may be. */
int ordo__dotted_path(const char *path);

/* A JSON value as a filter sees it (NULL: ORDO__VALUE_MISSING). */
void ordo__json_value(const json_t *json, ordo__field_value *out);

/* ---- Reading records ---- */

/* What is read from a source's records: the text at `text_field` (a
 * dotted path) of each record, kept when non-empty and passing `filter`
 * (NULL: every non-empty record). */
typedef struct ordo__read_spec {
    const char *text_field;
    const ordo__filter *filter;
    /* JSON lines only (.jsonl, .jsonl.zst chunks; 0 elsewhere): the first
     * skip_records records of the chunk are not parsed, and are taken to
     * hold skip_docs documents (a resumed packer's position: the chunk's
     * bytes were checked against its digest, and indexing parsed them) */
    uint64_t skip_records, skip_docs;
} ordo__read_spec;

/* Records as counted by a scan or an index: every physical record (a
 * line, blank lines included; a row; a .txt file) is read; it is empty
 * (no text, or a null, empty or blank-line one), or filtered out, or
 * passed (kept). read = empty + filtered + passed. */
typedef struct ordo__counts {
    uint64_t read, passed, filtered, empty;
} ordo__counts;

/* One independently readable piece of a shard. */
typedef struct ordo__chunk {
    uint64_t offset;       /* bytes into the file */
    uint64_t length;       /* bytes in the file its digest covers (compressed) */
    uint64_t raw_length;   /* bytes of records once decompressed (Parquet: of its text) */
    uint32_t records;      /* documents it yields: records passed, empty ones left out */
    uint64_t first_record; /* physical index in the shard of its first record (from 0) */
    uint64_t aux_offset;   /* the format's locator of the chunk: shard->aux bytes */
    uint32_t aux_length;   /* [aux_offset, +aux_length); 0 for .jsonl, .zst, .txt */
    unsigned char digest[ORDO_DIGEST_SIZE]; /* SHA-256 of the bytes it reads from the file */
} ordo__chunk;

typedef struct ordo__shard {
    char *path; /* as in the recipe: relative to the data root unless absolute */
    unsigned char sha256[ORDO_DIGEST_SIZE];
    uint64_t size;
    enum ordo__format format;
    int hashed;       /* sha256 was computed from the file's bytes by this process */
    int64_t mtime_ns; /* modification time seen at open (0: not looked at) */
    /* plan: */
    ordo__chunk *chunks;
    uint32_t chunk_count;
    uint64_t records; /* documents kept (= counts.passed) */
    uint64_t skipped; /* empty documents, counted and left out (= counts.empty) */
    ordo__counts counts;
    unsigned char *aux; /* the chunks' locators (gzip access points, Parquet column
                         * ranges), aux_size bytes, owned by the shard */
    uint64_t aux_size;
} ordo__shard;

/* The most bytes one chunk (a zstd frame's content, a run of .jsonl lines,
 * a .txt file) may hold: a chunk is read into memory whole, and every lane
 * holds up to `prefetch` chunks with their texts and tokens, so the limit
 * is ORDO__CHUNK_BUDGET / lanes, at least ORDO__CHUNK_MIN and at most
 * ORDO__CHUNK_MAX (docs/recipe.md). */
#define ORDO__CHUNK_MAX ((uint64_t)256 << 20)
#define ORDO__CHUNK_BUDGET ((uint64_t)256 << 20)
#define ORDO__CHUNK_MIN ((uint64_t)4 << 20)

/* Called for each document kept (non-empty text, passing the filter);
 * `record` is its physical index in the chunk (from 0: blank, empty and
 * filtered-out records count). Non-zero stops. */
typedef int (*ordo__doc_fn)(void *context, const char *text, size_t len, uint64_t record);

/* Where the bytes came from, for error messages. */
typedef struct ordo__origin {
    const char *path; /* shard file */
    uint64_t frame;   /* file offset of the compressed piece (zstd frame, gzip access
                       * point's byte); UINT64_MAX for plain bytes */
    uint64_t base;    /* file (or decompressed content) offset of the buffer's first byte */
    uint64_t line;    /* line number (from 1) in the shard's records of the buffer's
                       * first line; 0 when unknown (then lines count in the buffer) */
    const char *kind; /* what `frame` is ("gzip access point"); NULL: "zstd frame" */
} ordo__origin;

/* Decides one physical record: empty (text NULL, or no bytes), filtered
 * out, or passed; counts it in *counts and sets *keep for a passed one.
 * `get` gives the filter's fields (unused without a filter). A filter's
 * error is returned as is: the caller prefixes file and record. */
ordo_status ordo__record_decide(const ordo__read_spec *spec, const char *text, size_t len,
                                ordo__field_fn get, void *context, int *keep, ordo__counts *counts,
                                ordo_error *err);

/* The text field `field` (a name, not a dotted path) of one JSON line,
 * read without building the record (loader/shards/json_text.c): 1 when it
 * is certain of what Jansson would read (*text the decoded text, held in
 * *buffer, grown to fit, which the caller frees; NULL for a JSON null), 0
 * when it declines (malformed, or anything it does not read as Jansson
 * does for sure: the line is then parsed with Jansson, whose error names
 * what is wrong). Off when ordo__json_text_fast_enabled is 0 (tests). */
int ordo__json_text_fast(const char *line, size_t len, const char *field, char **buffer,
                         size_t *capacity, const char **text, size_t *text_len);
extern int ordo__json_text_fast_enabled;

/* Splits `data` into records of `format` (JSON lines for .jsonl, .zst and
 * .gz; the whole buffer for .txt), extracting spec->text_field from each
 * JSON line, applies spec->filter, and calls `fn` for every document
 * kept; every record is counted in *counts (added to, not reset). A
 * malformed record, or a filter's type error, is an error naming the file,
 * the line number and the byte offset. */
ordo_status ordo__scan_records(enum ordo__format format, const char *data, size_t len,
                               const ordo__read_spec *spec, const ordo__origin *origin,
                               ordo__doc_fn fn, void *context, ordo__counts *counts,
                               ordo_error *err);

/* Reads chunk number `index` of a .jsonl, .jsonl.zst or .txt shard (pread
 * + zstd) into *data (caller frees); *len receives its raw length. The
 * bytes read are checked against the chunk's digest first: a chunk that
 * changed since it was indexed is ORDO_CONFLICT naming the shard, the
 * chunk and both digests. */
ordo_status ordo__chunk_load(const char *path, enum ordo__format format, const ordo__chunk *chunk,
                             uint32_t index, char **data, size_t *len, ordo_error *err);

/* Reads chunk number `index` of `shard` (any format, file at `path`):
 * checks its digest, decodes its records and calls `fn` for each kept
 * document in order, `record` counted from the chunk's first; *counts
 * (may be NULL) gets the chunk's counts. A count of kept documents other
 * than chunk->records is ORDO_CONFLICT (the file changed). */
ordo_status ordo__chunk_read(const char *path, const ordo__shard *shard, uint32_t index,
                             const ordo__read_spec *spec, ordo__doc_fn fn, void *context,
                             ordo__counts *counts, ordo_error *err);

/* ---- Chunk cache ---- */

/* Loaded chunks of .jsonl, .jsonl.zst and .txt shards (read, checked
 * against their digest, inflated) kept for the reads of one loader, up to
 * a budget of bytes, shared by its workers under a lock: a loader that
 * reads units of one chunk for many lanes (a batch replay) loads, checks
 * and inflates the chunk once (.jsonl.gz and .parquet chunks are read by
 * their own readers, uncached). Chunks are kept until the cache is freed;
 * keys are shard pointers, so the cache must not outlive the recipe. */
typedef struct ordo__chunk_cache ordo__chunk_cache;

/* A new empty cache of at most `budget` bytes (NULL: out of memory); the
 * caller frees it with ordo__chunk_cache_free once no read uses it. */
ordo__chunk_cache *ordo__chunk_cache_new(uint64_t budget);
void ordo__chunk_cache_free(ordo__chunk_cache *cache);

/* Chunk `index` of `shard` as ordo__chunk_load gives it, from the cache
 * when it holds it, else loaded and kept while the budget lasts (a NULL
 * cache keeps nothing): *owned 0 means *data is the cache's (valid until
 * it is freed), 1 the caller's to free. Once the budget is spent, which
 * chunks are kept depends on the order workers load them; the bytes a read
 * gets never do. */
ordo_status ordo__chunk_cache_load(ordo__chunk_cache *cache, const char *path,
                                   const ordo__shard *shard, uint32_t index, char **data,
                                   size_t *len, int *owned, ordo_error *err);

/* Chunks loaded (not found held) by ordo__chunk_cache_load in this
 * process; for tests. */
extern _Atomic uint64_t ordo__chunk_cache_loads;

/* ordo__chunk_read with the chunk's bytes from `cache` (NULL: none) for the
 * formats it keeps; the same documents and errors either way. */
ordo_status ordo__chunk_read_cached(ordo__chunk_cache *cache, const char *path,
                                    const ordo__shard *shard, uint32_t index,
                                    const ordo__read_spec *spec, ordo__doc_fn fn, void *context,
                                    ordo__counts *counts, ordo_error *err);

/* The check every reader makes of a chunk's bytes (`length` of them)
 * against its digest: ORDO_CONFLICT naming shard, chunk and digests. */
ordo_status ordo__chunk_check(const char *path, const ordo__chunk *chunk, uint32_t index,
                              const unsigned char *bytes, ordo_error *err);

/* What a changed chunk's error says after "shard '<path>": the text the
 * chunk_mismatch event is read back from (chunk_event.c). */
#define ORDO__CHUNK_CHANGED "' changed since it was indexed: chunk "
#define ORDO__CHUNK_CHANGED_REST "%u (%llu bytes at byte %llu) had SHA-256 %s, now %s"

/* 1 (the default): chunk reads check chunk digests. bench_loader alone
 * turns it off, between loaders, to measure what the check costs. */
extern int ordo__verify_chunk_digests;

/* How a shard is indexed: what is read (text field, filter), lines per
 * chunk (.jsonl only), the most bytes a chunk may hold (ordo__chunk_limit
 * of a recipe of `lanes` lanes), and an optional progress callback given
 * the shard's bytes read so far (may be NULL). */
typedef struct ordo__index_spec {
    ordo__read_spec read;
    int per_chunk;
    uint64_t chunk_limit;
    int lanes;
    void (*progress)(void *context, uint64_t bytes_done);
    void *progress_context;
} ordo__index_spec;

/* Reads the shard file at `path` (whose size must still be shard->size
 * and whose bytes must hash to shard->sha256) and fills shard->chunks,
 * chunk_count, counts, records, skipped, aux and aux_size, validating
 * every record; chunks without any kept document are left out. A chunk of
 * more than spec->chunk_limit bytes is an error naming file and offset,
 * found without holding more than about that many bytes. On error the
 * shard is left as it was. */
ordo_status ordo__shard_index(const char *path, ordo__shard *shard, const ordo__index_spec *spec,
                              ordo_error *err);

/* ---- The formats' own entry points (called through the two above) ---- */

/* .jsonl.gz / .json.gz (gzip_index.c, gzip_read.c): chunks are spans of
 * lines between access points (a deflate block boundary with the 32 KiB
 * window before it, as zlib's examples/zran.c keeps them, every few MiB of
 * output, and every gzip member's start); the access points are the
 * chunks' aux. A chunk is read by inflating from its access point, never
 * from byte 0. */
ordo_status ordo__gz_index(const char *path, ordo__shard *shard, const ordo__index_spec *spec,
                           ordo_error *err);
ordo_status ordo__gz_chunk_read(const char *path, const ordo__shard *shard, uint32_t index,
                                const ordo__read_spec *spec, ordo__doc_fn fn, void *context,
                                ordo__counts *counts, ordo_error *err);

/* .parquet (parquet_*.c): chunks are row groups, or ranges of a row
 * group's text-column pages when it is larger than a chunk may be; the
 * aux of a chunk locates the byte ranges of the text column and of the
 * filter's columns it needs, with what decoding them takes, so a read
 * needs no footer. */
ordo_status ordo__parquet_index(const char *path, ordo__shard *shard, const ordo__index_spec *spec,
                                ordo_error *err);
ordo_status ordo__parquet_chunk_read(const char *path, const ordo__shard *shard, uint32_t index,
                                     const ordo__read_spec *spec, ordo__doc_fn fn, void *context,
                                     ordo__counts *counts, ordo_error *err);

/* Reads a whole shard file of any format, record by record, without a
 * chunk table (for 'ordo tokens --count' and 'ordo shard' inputs): calls
 * `fn` for every kept document, `record` its physical index in the file;
 * *counts gets the counts. */
ordo_status ordo__file_scan(const char *path, enum ordo__format format, const ordo__read_spec *spec,
                            ordo__doc_fn fn, void *context, ordo__counts *counts, ordo_error *err);

#endif
