/* The parsed recipe and its plan (chunk tables, token estimates); internal. */
#ifndef ORDO_RECIPE_MODEL_H
#define ORDO_RECIPE_MODEL_H

#include <stdint.h>

#include "internal.h"

enum ordo__format { ORDO_FORMAT_JSONL, ORDO_FORMAT_JSONL_ZST, ORDO_FORMAT_TXT };

enum ordo__tokenizer_kind { ORDO_TOKENIZER_BYTES, ORDO_TOKENIZER_TIKTOKEN };

struct ordo__bpe;

/* One independently readable piece of a shard. */
typedef struct ordo__chunk {
    uint64_t offset;     /* bytes into the file */
    uint64_t length;     /* bytes in the file (compressed for .zst) */
    uint64_t raw_length; /* bytes of records once decompressed */
    uint32_t records;    /* records (documents) it holds, skips included */
    unsigned char digest[ORDO_DIGEST_SIZE]; /* SHA-256 of its `length` bytes in the file */
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
    uint64_t records;
    uint64_t skipped; /* empty documents, counted and left out */
} ordo__shard;

/* A source's chunk, by shard and chunk index. */
typedef struct ordo__chunk_ref {
    uint32_t shard;
    uint32_t chunk;
} ordo__chunk_ref;

typedef struct ordo__source {
    char *name;
    double weight;
    char *text_field;
    ordo__shard *shards;
    uint32_t shard_count;
    /* plan: */
    ordo__chunk_ref *chunks; /* every chunk of every shard, in recipe order */
    uint32_t chunk_count;
    uint64_t sample_records, sample_bytes, sample_tokens; /* token estimation */
    uint64_t share; /* weight / total weight in units of 2^-30 */
} ordo__source;

struct ordo_recipe {
    char *data_root; /* absolute folder the relative paths are resolved in */
    char *name;
    uint64_t seed;
    int seq_len, global_batch, lanes, flush_every, shuffle_window;
    int chunk_records;    /* lines per chunk of a plain .jsonl shard */
    int estimate_records; /* records sampled per source for token estimation */
    enum ordo__tokenizer_kind tokenizer;
    struct ordo__bpe *bpe;    /* the tiktoken tokenizer, owned */
    char *tokenizer_path;     /* its rank file as written (relative to data_root) */
    unsigned char tokenizer_sha256[ORDO_DIGEST_SIZE];
    ordo__source *sources;
    uint32_t source_count;
    char *canonical;
    char id[ORDO_DIGEST_HEX_SIZE];
    int planned; /* chunk tables and estimates are present */
    int indexed_shards; /* shards the last ordo_recipe_index read (not from a ledger) */
    int hashed_shards;     /* shard files hashed whole since it was opened */
    uint64_t hashed_bytes; /* and their bytes */
    ordo_ledger *known;    /* while parsing: the ledger that may know shard digests */
};

#define ORDO__SHARE_ONE ((uint64_t)1 << 30)
/* The most bytes one chunk (a zstd frame's content, a run of .jsonl lines,
 * a .txt file) may hold: a chunk is read into memory whole, and every lane
 * holds up to `prefetch` chunks with their texts and tokens, so the limit
 * is ORDO__CHUNK_BUDGET / lanes, at least ORDO__CHUNK_MIN and at most
 * ORDO__CHUNK_MAX (docs/recipe.md). */
#define ORDO__CHUNK_MAX ((uint64_t)256 << 20)
#define ORDO__CHUNK_BUDGET ((uint64_t)256 << 20)
#define ORDO__CHUNK_MIN ((uint64_t)4 << 20)

/* The most bytes one chunk of the recipe may hold (see ORDO__CHUNK_MAX). */
uint64_t ordo__chunk_limit(const ordo_recipe *recipe);

/* Resolves a shard's SHA-256 at open (see shard_known.c). With `recorded`
 * the recipe holds its digest and size: a file of another size is refused,
 * one the ledger (r->known) saw with the same size, time and digest is
 * taken as it is (its chunks are checked as they are read), any other is
 * hashed and refused when it differs. Without, the digest comes from the
 * ledger when the file's size and time match what it recorded, else from
 * hashing the file. */
ordo_status ordo__shard_resolve(ordo_recipe *r, ordo__shard *shard, int recorded,
                                ordo_error *err);

/* Hashes a shard whose digest was not computed from its bytes and refuses
 * it, naming both digests, when they differ (an index is about to be made
 * from the file's bytes under that digest). */
ordo_status ordo__shard_check_whole(ordo_recipe *r, ordo__shard *shard, ordo_error *err);

/* Records what a hashed shard's file was (size, time, digest) in the
 * ledger, so the next open takes its digest from there. */
ordo_status ordo__shard_remember(ordo_ledger *ledger, const ordo_recipe *r,
                                 const ordo__shard *shard, ordo_error *err);

/* Full path of a shard (data root joined with its path); caller frees. */
char *ordo__shard_path(const ordo_recipe *recipe, const ordo__shard *shard);

/* Opens `path` read-only into *fd (the caller closes it) if it is a
 * regular file, refusing FIFOs, devices and links to them without blocking;
 * `what` names the file in the error ("shard", "file"). */
ordo_status ordo__open_regular(const char *path, const char *what, int *fd, ordo_error *err);

/* Reads a whole file of at most `max` bytes; *data (NUL-terminated) is
 * owned by the caller. */
ordo_status ordo__read_file(const char *path, size_t max, char **data, size_t *size,
                            ordo_error *err);

/* Reads a regular file or a pipe whole (at most `max` bytes, a longer one
 * is refused naming the limit); *pipe says which it was. Anything else (a
 * device, a folder) is refused at once naming it. *data as ordo__read_file. */
ordo_status ordo__read_file_or_pipe(const char *path, size_t max, char **data, size_t *size,
                                    int *pipe, ordo_error *err);

/* Reads what `fd` holds (at most `max` bytes) into *data (NUL-terminated,
 * the caller's) and closes `fd`; `path` names it in errors. */
ordo_status ordo__read_fd(int fd, const char *path, size_t max, char **data, size_t *size,
                          ordo_error *err);

/* SHA-256 and size of a file; ORDO_IO naming it when unreadable. */
ordo_status ordo__sha256_file(const char *path, unsigned char out[ORDO_DIGEST_SIZE],
                              uint64_t *size, ordo_error *err);

/* Builds every source's flat chunk list and integer shares (plan done). */
ordo_status ordo__recipe_finish_plan(ordo_recipe *recipe, ordo_error *err);

#endif
