/*
 * ordo.h — the one public header of libordo.
 *
 * libordo is an elastically deterministic data loader that records what it
 * feeds (recipes, lane plans, checkpoints, a SHA-256 digest of every global
 * batch) into a SQLite ledger. This header is all the CLI, the server and
 * outside programs may use.
 *
 * Conventions
 *  - Every fallible function returns an ordo_status; ORDO_OK is 0. When `err`
 *    is not NULL it receives the status and a message naming the thing and
 *    the number that was wrong.
 *  - Releasing (the one rule): whatever the library hands out is released
 *    by one function named after its type, which takes that pointer alone
 *    and accepts NULL. A handle made by ordo_X_open (ordo_ledger,
 *    ordo_loader, ordo_tokenizer: they hold a connection, threads or
 *    files) is released by ordo_X_close; every other object or result of
 *    type ordo_X by ordo_X_free: an object the library allocated
 *    (ordo_recipe, ordo_manifest, every list ordo_X_list, which holds its
 *    own count) is freed whole, a result struct the caller passed in to be
 *    filled (ordo_checkpoint, ordo_compare_result, ...) has what it owns
 *    freed and the struct stays the caller's. Plain buffers (text, digests,
 *    token ids, checkpoint states) are released by ordo_free. Pointers in
 *    input structs are borrowed for the duration of the call only.
 *  - An ordo_ledger is one SQLite connection: use it from one thread at a
 *    time; open one per thread. There is no global state.
 *  - Digests are 32 raw bytes inside the API and 64 lowercase hex characters
 *    at its edges (CLI, JSON).
 */
#ifndef ORDO_H
#define ORDO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every function declared in this header is exported from libordo.so;
 * the library is built with -fvisibility=hidden, so its internals are not
 * (a test checks the shared library's symbols). */
#if defined(__GNUC__)
#define ORDO_API __attribute__((visibility("default")))
#pragma GCC visibility push(default)
#else
#define ORDO_API
#endif

/* The library's version, the one place it is written: the Makefile reads
 * these three lines (the installed libordo.so.X.Y.Z and ordo.pc take them),
 * and ordo_version() / ordo_version_string() return them at run time. */
#define ORDO_VERSION_MAJOR 0
#define ORDO_VERSION_MINOR 1
#define ORDO_VERSION_PATCH 0
#define ORDO_VERSION_STR_(x) #x
#define ORDO_VERSION_STR(x) ORDO_VERSION_STR_(x)
#define ORDO_VERSION_STRING                                                                        \
    ORDO_VERSION_STR(ORDO_VERSION_MAJOR)                                                           \
    "." ORDO_VERSION_STR(ORDO_VERSION_MINOR) "." ORDO_VERSION_STR(ORDO_VERSION_PATCH)
#define ORDO_VERSION_NUMBER                                                                        \
    (ORDO_VERSION_MAJOR * 10000 + ORDO_VERSION_MINOR * 100 + ORDO_VERSION_PATCH)

#define ORDO_DIGEST_SIZE 32
#define ORDO_DIGEST_HEX_SIZE 65 /* 64 characters and a NUL */
#define ORDO_ERROR_MESSAGE_SIZE 512
#define ORDO_NAME_MAX 255                    /* longest run name or group tag, in bytes */
#define ORDO_STEP_MAX INT64_C(1000000000000) /* largest step number accepted */
#define ORDO_SOURCES_MAX 4096                /* most per-source token counts in one step */

/* Status codes: XX(NAME, short_name, description). */
#define ORDO_STATUS_MAP(XX)                                                                        \
    XX(OK, "ok", "success")                                                                        \
    XX(INVALID, "invalid", "invalid argument or input")                                            \
    XX(NOMEM, "nomem", "out of memory")                                                            \
    XX(IO, "io", "input/output error")                                                             \
    XX(DB, "db", "database error")                                                                 \
    XX(NOTLEDGER, "not_ledger", "file is not an ordo ledger")                                      \
    XX(VERSION, "version", "ledger schema version not supported")                                  \
    XX(NOTFOUND, "not_found", "not found")                                                         \
    XX(CONFLICT, "conflict", "conflicts with what is recorded")                                    \
    XX(BUSY, "busy", "database is locked by another writer")

typedef enum ordo_status {
#define ORDO_STATUS_ENUM(name, short_name, text) ORDO_##name,
    ORDO_STATUS_MAP(ORDO_STATUS_ENUM)
#undef ORDO_STATUS_ENUM
} ordo_status;

/* The outcome of a failed call: its status and a human message. */
typedef struct ordo_error {
    ordo_status status;
    char message[ORDO_ERROR_MESSAGE_SIZE];
} ordo_error;

/* The version of the library running (which may be newer than the header a
 * program was built with): MAJOR*10000 + MINOR*100 + PATCH, 100 for 0.1.0. */
unsigned ordo_version(void);

/* The same as text, "MAJOR.MINOR.PATCH"; static string. */
const char *ordo_version_string(void);

/* sizeof of the public struct named `name` ("ordo_error", "ordo_recipe_info",
 * "ordo_loader_options", "ordo_batch", "ordo_run_info") in the library
 * running, or 0 for another name: a binding that mirrors them (the Python
 * package's ctypes) checks its copies against it before any call. */
size_t ordo_struct_size(const char *name);

/* Short machine name of a status ("not_found"); static string. */
const char *ordo_status_name(ordo_status status);

/* One-line description of a status; static string. */
const char *ordo_status_text(ordo_status status);

/* Releases a buffer libordo allocated for the caller (NULL is fine). */
void ordo_free(void *ptr);

/* ---- digests ---------------------------------------------------------- */

/* SHA-256 of `len` bytes at `data` into `out`. */
void ordo_sha256(const void *data, size_t len, unsigned char out[ORDO_DIGEST_SIZE]);

/* Writes the 64 lowercase hex characters of a digest and a NUL into `hex`. */
void ordo_digest_to_hex(const unsigned char digest[ORDO_DIGEST_SIZE],
                        char hex[ORDO_DIGEST_HEX_SIZE]);

/* Parses exactly 64 hex characters (either case) from the NUL-terminated
 * `hex`; anything else is ORDO_INVALID with the length or offending offset. */
ordo_status ordo_digest_from_hex(const char *hex, unsigned char digest[ORDO_DIGEST_SIZE],
                                 ordo_error *err);

/* Decodes `len` characters of padded base64 (RFC 4648, no blanks), the form
 * checkpoint states take in JSON, into *out (the caller's, ordo_free) of
 * *size bytes; anything else, or nothing, is ORDO_INVALID. */
ordo_status ordo_base64_decode(const char *text, size_t len, unsigned char **out, size_t *size,
                               ordo_error *err);

/* Batch digest of a step: SHA-256 over the `lanes` lane digests (32 bytes
 * each, lane order) concatenated (docs/recipe.md, "How a lane's data is decided"). */
void ordo_batch_digest(const unsigned char *lane_digests, int lanes,
                       unsigned char out[ORDO_DIGEST_SIZE]);

/* ---- tokenizers ------------------------------------------------------- */

/* A BPE tokenizer of either kind: a tiktoken-compatible encoding (gpt2,
 * r50k_base, p50k_base, cl100k_base, o200k_base and llama3, with their
 * published split patterns and ranks from a .tiktoken file), or a Hugging
 * Face tokenizer.json whose model is BPE (docs/tokenizer.md). Read-only
 * once open: one tokenizer may serve many threads. */
typedef struct ordo_tokenizer ordo_tokenizer;

/* The names of every encoding, from the library's one table, as text for
 * messages ("gpt2, r50k_base, ... or llama3"), written to `buffer` (always
 * NUL-terminated when size > 0); returns the full length, like snprintf. */
size_t ordo_tokenizer_encodings(char *buffer, size_t size);

/* Opens `encoding` with the rank file at `ranks_path` (checked line by line
 * and against the encoding's rank count). Free with ordo_tokenizer_close. */
ordo_status ordo_tokenizer_open(const char *encoding, const char *ranks_path,
                                ordo_tokenizer **tokenizer, ordo_error *err);

/* Opens the Hugging Face tokenizer.json at `path`: model BPE with the
 * normalizers, pre-tokenizers and added tokens docs/tokenizer.md lists;
 * anything else is refused naming the component. Free with
 * ordo_tokenizer_close. */
ordo_status ordo_tokenizer_open_json(const char *path, ordo_tokenizer **tokenizer, ordo_error *err);

void ordo_tokenizer_close(ordo_tokenizer *tokenizer);

/* The id of the token whose text is `content`: one of an encoding's
 * special tokens ("<|endoftext|>", ...: docs/tokenizer.md), or a token of a
 * tokenizer.json (its vocab or added tokens, special ones included).
 * ORDO_NOTFOUND naming the token and the tokenizer when there is none. */
ordo_status ordo_tokenizer_token_id(const ordo_tokenizer *tokenizer, const char *content,
                                    uint32_t *id, ordo_error *err);

/* Token ids of ordinary text (special tokens are never produced). Invalid
 * UTF-8 is read as U+FFFD per maximal ill-formed subsequence. *ids is owned
 * by the caller (ordo_free); *count may be 0. */
ordo_status ordo_tokenizer_encode(const ordo_tokenizer *tokenizer, const char *text, size_t len,
                                  uint32_t **ids, size_t *count, ordo_error *err);

/* The bytes of a sequence of ids (special ids are refused). *bytes is
 * owned by the caller (ordo_free). */
ordo_status ordo_tokenizer_decode(const ordo_tokenizer *tokenizer, const uint32_t *ids,
                                  size_t count, char **bytes, size_t *len, ordo_error *err);

/* `len` bytes as valid UTF-8, read as the tokenizers read text: every
 * maximal ill-formed subsequence becomes U+FFFD. *copy (the caller's,
 * ordo_free) and *copy_len; *copy is NULL when the text is valid already. */
ordo_status ordo_utf8_repair(const char *text, size_t len, char **copy, size_t *copy_len,
                             ordo_error *err);

/* End-of-text id (an encoding's <|endoftext|>; UINT32_MAX for a
 * tokenizer.json, which names none that is safe: a recipe names its eos)
 * and the size of the id space (specials included). */
uint32_t ordo_tokenizer_eot(const ordo_tokenizer *tokenizer);
uint32_t ordo_tokenizer_vocab_size(const ordo_tokenizer *tokenizer);

/* ---- ledger ----------------------------------------------------------- */

typedef struct ordo_ledger ordo_ledger;

/* Flags for ordo_ledger_open. */
#define ORDO_OPEN_READONLY 0x1u   /* never create, migrate or write */
#define ORDO_OPEN_NO_CREATE 0x2u  /* the file must exist already */
#define ORDO_OPEN_NO_MIGRATE 0x4u /* leave an older schema for ordo_ledger_migrate */

/* Opens (creating and migrating to the newest schema unless READONLY,
 * NO_CREATE or NO_MIGRATE say otherwise) the ledger at `path`. Every connection gets WAL,
 * a busy timeout and foreign_keys=ON. Refuses a file that is not SQLite,
 * an SQLite file that is not a ledger, and a ledger whose schema is newer
 * than this library (the message names both versions). A READONLY open of a
 * ledger that needs migrating fails with ORDO_VERSION. The caller owns
 * *ledger and closes it with ordo_ledger_close. */
ordo_status ordo_ledger_open(const char *path, unsigned flags, ordo_ledger **ledger,
                             ordo_error *err);

/* Closes the connection and frees the ledger (NULL is fine). */
void ordo_ledger_close(ordo_ledger *ledger);

/* How long a write on this connection waits for another connection's write
 * (a long ingest, another job) before it fails with ORDO_BUSY, whose
 * message then says how long it waited. Default ORDO_LOCK_TIMEOUT_MS;
 * milliseconds < 0 are taken as 0. */
#define ORDO_LOCK_TIMEOUT_MS 10000
void ordo_ledger_set_lock_timeout(ordo_ledger *ledger, int milliseconds);

/* Applies any pending migrations, each in its own transaction; *from and
 * *to (either may be NULL) receive the versions before and after. */
ordo_status ordo_ledger_migrate(ordo_ledger *ledger, int *from, int *to, ordo_error *err);

/* The ledger's schema version (PRAGMA user_version). */
int ordo_ledger_schema_version(ordo_ledger *ledger);

/* The newest schema version this library knows (number of migrations). */
int ordo_schema_version_latest(void);

/* ---- recipes ---------------------------------------------------------- */

/* Canonicalizes a recipe: parses `json` (`len` bytes; duplicate keys are
 * refused), which must be an object, and re-serializes it with sorted keys
 * and no insignificant whitespace. *canonical (may be NULL) is owned by the
 * caller (ordo_free); id receives the hex SHA-256 of the canonical text. */
ordo_status ordo_recipe_canonicalize(const char *json, size_t len, char **canonical,
                                     char id[ORDO_DIGEST_HEX_SIZE], ordo_error *err);

/* Stores a recipe under its id (idempotent) and writes the id. Where it has
 * them, "lanes" and "global_batch" must be positive whole numbers and the
 * batch divisible by the lanes (ORDO_INVALID naming both): a recipe of
 * another loader may hold only some of ordo's fields. */
ordo_status ordo_recipe_put(ordo_ledger *ledger, const char *json, size_t len,
                            char id[ORDO_DIGEST_HEX_SIZE], ordo_error *err);

/* Reads the lane count L of the stored recipe `id` into *lanes: ORDO_NOTFOUND
 * when the ledger does not hold it, ORDO_INVALID "recipe <id> has no
 * 'lanes'" when it has no count from 1 to ORDO_LANES_MAX (*lanes is then 0). */
#define ORDO_LANES_MAX 65536
ordo_status ordo_recipe_lanes(ordo_ledger *ledger, const char *id, int *lanes, ordo_error *err);

/* Reads a recipe's canonical JSON; *canonical is owned by the caller. */
ordo_status ordo_recipe_get(ordo_ledger *ledger, const char *id, char **canonical, ordo_error *err);

/* ---- recipes as the loader reads them ------------------------------------ */

/* A validated recipe with its shards resolved (globs expanded, every file's
 * SHA-256 known) and, once indexed, its plan: chunk tables and tokens per
 * byte per source. Read-only after ordo_recipe_index; may be shared by
 * several loaders. */
typedef struct ordo_recipe ordo_recipe;

/* Flags for ordo_recipe_parse. */
#define ORDO_RECIPE_VERIFY_SHARDS 0x1u /* check recorded shards, refuse changes */

/* Reads a recipe file (JSON), validates it, expands each source's path
 * globs relative to the file's folder (sorted bytewise) and hashes every
 * shard. Unknown keys are refused with the key named. The file may be a
 * pipe (`<(cat recipe.json)`): it is read up to the same 16 MiB limit and
 * its paths resolve in the current folder; a device or folder is refused
 * at once. *recipe is owned by the caller (ordo_recipe_free). */
ordo_status ordo_recipe_load(const char *path, ordo_recipe **recipe, ordo_error *err);

/* Parses recipe JSON: a user recipe (sources with "paths" globs, resolved in
 * data_root) or a resolved one as stored in the ledger (sources with
 * "shards"; with ORDO_RECIPE_VERIFY_SHARDS every shard is hashed again and
 * a changed file is refused, naming it; see ordo_recipe_parse_with). */
ordo_status ordo_recipe_parse(const char *json, size_t len, const char *data_root, unsigned flags,
                              ordo_recipe **recipe, ordo_error *err);

/* ordo_recipe_load and ordo_recipe_parse with a ledger (NULL: none) that
 * remembers the shard files it indexed: a shard file whose size and
 * modification time are those the ledger recorded when it was last hashed
 * takes that SHA-256 instead of being hashed again, so opening an indexed
 * recipe reads no shard whole; its content is checked chunk by chunk as it
 * is read, and a changed chunk stops the reader naming shard, chunk and
 * both digests. With ORDO_RECIPE_VERIFY_SHARDS a recorded shard of another
 * size is refused at once naming it and both sizes; one the ledger does not
 * know at this size and time is hashed and refused when it differs. The
 * ledger is only read during the call. */
ordo_status ordo_recipe_load_with(const char *path, ordo_ledger *ledger, ordo_recipe **recipe,
                                  ordo_error *err);
ordo_status ordo_recipe_parse_with(const char *json, size_t len, const char *data_root,
                                   unsigned flags, ordo_ledger *ledger, ordo_recipe **recipe,
                                   ordo_error *err);

/* Opens `path` read-only into *fd (the caller closes it) only if it is a
 * regular file: never waits on a FIFO, and follows symlinks so a link to
 * /dev/zero is refused too. Refused: ORDO_INVALID "<what> '<path>' is not
 * a regular file"; unopenable: ORDO_IO naming it and why. `what` names the
 * file in messages ("manifest", "input"; NULL: "file"). */
ordo_status ordo_open_regular(const char *path, const char *what, int *fd, ordo_error *err);

/* Frees a recipe (NULL is fine). */
void ordo_recipe_free(ordo_recipe *recipe);

/* The recipe's id (64 hex) and canonical resolved JSON; owned by it. */
const char *ordo_recipe_id(const ordo_recipe *recipe);
const char *ordo_recipe_canonical(const ordo_recipe *recipe);

/* The folder its relative shard paths resolve in: for ordo_recipe_load the
 * recipe file's (absolute; the current folder for a piped recipe), else the
 * data_root given to ordo_recipe_parse ("." for NULL). Owned by the recipe. */
const char *ordo_recipe_data_root(const ordo_recipe *recipe);

/* The numbers that fix the data (docs/recipe.md, "Format"). */
typedef struct ordo_recipe_info {
    const char *name; /* owned by the recipe; "" when unnamed */
    uint64_t seed;
    int seq_len;        /* tokens per sample the model sees */
    int sample_len;     /* tokens per packed sample: seq_len, or seq_len + 1 */
    int labels_shifted; /* 1 with "labels": "shifted" (docs/recipe.md) */
    int global_batch;   /* samples per step, B */
    int lanes;          /* L */
    int flush_every;    /* steps per flush epoch (shuffle block, checkpoint grain) */
    int shuffle;        /* 1: samples permuted within each flush epoch per source */
    int source_count;
    int vocab_size; /* ids 0 .. vocab_size-1, specials included */
    /* A document is packed as [bos] tokens eos (docs/recipe.md,
     * "Tokenizer"): eot_id is the eos; bos_id UINT32_MAX when there is none. */
    uint32_t eot_id, pad_id;
    uint32_t bos_id;
} ordo_recipe_info;

/* Fills `info` from the recipe. */
void ordo_recipe_describe(const ordo_recipe *recipe, ordo_recipe_info *info);

/* Name of source `index` (owned by the recipe), NULL when out of range. */
const char *ordo_recipe_source_name(const ordo_recipe *recipe, int index);

/* What a recipe source holds (plan fields are 0 before indexing). */
/* Records as counted when read (a shard by ordo_shard_read, a source's
 * shards by indexing): every record read (a line, blank ones included; a
 * Parquet row; a .txt file) is empty, filtered out, or passed. */
typedef struct ordo_read_counts {
    uint64_t read, passed, filtered, empty;
} ordo_read_counts;

typedef struct ordo_source_info {
    const char *name; /* owned by the recipe */
    double weight;    /* as written */
    int shards;
    uint64_t bytes; /* shard file bytes */
    uint64_t chunks, records, skipped;
    uint64_t read;          /* records read: records (passed) + skipped (empty) + filtered */
    uint64_t filtered;      /* records the source's filter left out */
    double tokens_per_byte; /* measured on sample_records documents */
    uint64_t sample_records;
} ordo_source_info;

/* The sources' normalised weights at `step` (1 .. ORDO_STEP_MAX) into
 * weights[0 .. source_count): the recipe's weights, or its schedule's
 * entry (ramps interpolated) as the slot plan uses them, exact to 2^-30.
 * ORDO_INVALID for a step out of range. */
ordo_status ordo_recipe_step_weights(const ordo_recipe *recipe, int64_t step, double *weights,
                                     ordo_error *err);

/* Fills `info` for source `index`; ORDO_INVALID when out of range. */
ordo_status ordo_recipe_source(const ordo_recipe *recipe, int index, ordo_source_info *info,
                               ordo_error *err);

/* Called while indexing: bytes done of bytes total. */
typedef void (*ordo_progress_fn)(uint64_t done, uint64_t total, void *context);

/* Makes the recipe's plan: chunk tables of every shard (validating every
 * record: a malformed one is an error naming file and byte offset; empty
 * documents are counted skips) and tokens per byte of every source,
 * measured on a seeded sample. With a ledger, reuses what it holds for the
 * same shard contents and recipe, and stores what it computed, together
 * with the recipe itself. `progress` may be NULL. */
ordo_status ordo_recipe_index(ordo_recipe *recipe, ordo_ledger *ledger, ordo_progress_fn progress,
                              void *context, ordo_error *err);

/* How many shards the last ordo_recipe_index read and indexed itself; the
 * others' chunk tables came from the ledger it was given (0 when the
 * ledger held them all). */
int ordo_recipe_indexed_shards(const ordo_recipe *recipe);

/* How many shard files the recipe hashed whole (every byte) since it was
 * opened, at open and while indexing, and their bytes (either may be
 * NULL). Both stay 0 when every shard's digest and chunk table came from
 * the ledger. */
void ordo_recipe_hashed(const ordo_recipe *recipe, int *shards, uint64_t *bytes);

/* Opens the recipe `id` as the ledger stores it, with the plan the ledger
 * holds for it (chunk tables and token estimates, stored by
 * ordo_recipe_index): no shard is read, hashed or indexed, and the ledger
 * is only read. Relative paths (a tiktoken rank file's) resolve in
 * `data_root` (NULL: the current folder). ORDO_NOTFOUND when the ledger
 * holds no such recipe, or not its whole plan ("... is not indexed: run
 * ordo index"). *recipe is the caller's (ordo_recipe_free). */
ordo_status ordo_recipe_open_stored(ordo_ledger *ledger, const char *id, const char *data_root,
                                    ordo_recipe **recipe, ordo_error *err);

/* ---- a recipe's plan as a document (opening without the ledger) -------- */

/* The plan document (docs/api.md, "GET /api/recipes/{id}/plan"): JSON
 * holding the resolved recipe, its id, and per source the token estimate
 * and every shard's chunk table with the chunk digests recorded at index
 * time. ORDO_PLAN_VERSION is the version this library writes and reads. */
#define ORDO_PLAN_VERSION 1

/* Writes the plan of the recipe `id` from what the ledger holds for it
 * (stored by ordo_recipe_index): no shard or tokenizer file is read. *plan
 * (NUL-terminated JSON, *size bytes; size may be NULL) is the caller's
 * (ordo_free). ORDO_NOTFOUND when the ledger holds no such recipe ("recipe
 * <id> not found") or not its whole plan ("recipe <id> is not indexed in
 * this ledger ...: run ordo index"). */
ordo_status ordo_recipe_plan_export(ordo_ledger *ledger, const char *id, char **plan, size_t *size,
                                    ordo_error *err);

/* Opens a recipe from a plan document of `size` bytes (as
 * ordo_recipe_plan_export wrote it): the recipe is parsed as resolved,
 * taking its shards' SHA-256 as recorded, and its chunk tables and token
 * estimates come from the document, so no shard is read, hashed or indexed
 * (ordo_recipe_hashed stays 0) and the ledger is not needed. The loader
 * then checks each chunk it reads against the plan's chunk digest: a
 * changed chunk stops it naming shard, chunk and both digests. Relative
 * paths (shards, a tokenizer file) resolve in `data_root` (NULL: the
 * current folder). With `id` (NULL: any) the plan must be of that recipe
 * (ORDO_CONFLICT naming both ids). Refused with ORDO_INVALID "plan: ...":
 * malformed JSON (naming line, column and byte), a recipe that is not
 * resolved or whose id is not the plan's, a source or shard that is not
 * the recipe's (a SHA-256 that differs is named with both digests), a
 * chunk outside its shard or a table of the wrong size; ORDO_VERSION for
 * another plan version. *recipe is the caller's (ordo_recipe_free). */
ordo_status ordo_recipe_open_plan(const char *plan, size_t size, const char *id,
                                  const char *data_root, ordo_recipe **recipe, ordo_error *err);

/* ---- how often each source repeats (TokenEstimation as a plan) --------- */

#define ORDO_PASS_STARTS 16           /* pass starts kept per source */
#define ORDO_PASS_STEPS_MAX 100000000 /* longest horizon ordo_recipe_passes plans */

/* One source's passes over its data within a horizon of `steps` steps
 * (docs/api.md, the audit's "passes"). A lane cycles through its own units
 * of the source, so the source's data repeats: pass k+1 starts at the
 * first step where the samples the slot plan gave the source hold more
 * than k × tokens_per_pass tokens. Lanes' unit bytes are balanced, so each
 * lane starts its pass near that step. */
typedef struct ordo_source_plan {
    const char *name; /* owned by the recipe */
    /* Tokens per byte of its documents, bos and eos not counted, measured
     * on the TokenEstimation sample. */
    double tokens_per_byte;
    uint64_t bytes;     /* bytes of its documents (records as stored, decompressed) */
    uint64_t documents; /* documents kept: one eos each, and one bos with a bos */
    /* bytes × tokens_per_byte (rounded) + documents × (1, or 2 with a bos) */
    uint64_t tokens_per_pass;
    double samples_per_pass; /* tokens_per_pass / seq_len */
    int64_t steps;           /* the horizon */
    uint64_t samples;        /* samples the slot plan gives it in steps 1 .. steps */
    double passes;           /* samples / samples_per_pass (9.3: nine passes and a third) */
    int64_t pass_count;      /* passes begun within the horizon (0: it gets no sample) */
    /* pass_start[k-1]: the step pass k starts at, for k <= pass_count (0
     * past it); last_pass_start: the step pass pass_count starts at. */
    int64_t pass_start[ORDO_PASS_STARTS];
    int64_t last_pass_start;
    /* Bytes of the lightest and heaviest lane's units of the source, and
     * the steps those lanes start their second pass at, reckoning a lane
     * gets 1/L of the source's samples (0: past the horizon). */
    uint64_t lane_bytes_min, lane_bytes_max;
    int64_t lane_pass2_first, lane_pass2_last;
    ordo_read_counts records; /* its shards' records as indexed (filter applied) */
} ordo_source_plan;

/* The passes of every source of an indexed recipe over steps 1 .. `steps`
 * (1 .. ORDO_PASS_STEPS_MAX) into plans[0 .. source_count) (the caller's
 * array; names stay owned by the recipe). A pure function of the recipe
 * and its plan, in O(steps × sources). ORDO_INVALID for a horizon out of
 * range or a recipe that is not indexed. */
ordo_status ordo_recipe_passes(const ordo_recipe *recipe, int64_t steps, ordo_source_plan *plans,
                               ordo_error *err);

/* ---- the loader ---------------------------------------------------------- */

/* One data-parallel rank's loader over the lanes it owns. */
typedef struct ordo_loader ordo_loader;

/* How lanes are bound to ranks. ORDO_BINDING_LOGICAL (the default, 0)
 * gives the recipe's L lanes, rank r owning lanes [r*L/W, (r+1)*L/W);
 * ORDO_BINDING_RANK is the standard rank-sharded loader kept for contrast
 * (one lane per rank; resumed at another world size it re-shards the
 * remaining data, so batches change). Their names at the edges (CLI, JSON,
 * the ledger) are "logical" and "rank". */
typedef enum ordo_lane_binding {
    ORDO_BINDING_LOGICAL = 0,
    ORDO_BINDING_RANK = 1
} ordo_lane_binding;

/* "logical" or "rank"; NULL for a value that is neither. Static string. */
const char *ordo_lane_binding_name(ordo_lane_binding binding);

/* Reads "logical" or "rank" into *binding; anything else (NULL too) is
 * ORDO_INVALID "lane binding '<text>' must be 'logical' or 'rank'". */
ordo_status ordo_lane_binding_parse(const char *text, ordo_lane_binding *binding, ordo_error *err);

/* How a loader runs. Nothing here changes the data, except lane_binding. */
typedef struct ordo_loader_options {
    int rank;
    int world_size;
    int read_workers;     /* >= 1 */
    int tokenize_workers; /* >= 1 */
    int prefetch;         /* chunks in flight per lane, 0 for the default */
    ordo_lane_binding lane_binding;
    const void *resume; /* a checkpoint of every lane (ordo_loader_checkpoint
                               of all ranks joined by ordo_checkpoint_merge), or NULL */
    size_t resume_size;
    /* Self-verifying resume (docs/reliability.md, "Checkpoints and resume"):
     * the samples a resume regenerates and drops were delivered before; with a ledger, their lane digests
     * recorded for run `run_id` (the run the resume state was recorded
     * for) must be reproduced, or the open is refused naming the step and
     * the lane. The ledger is borrowed and only read while opening. Without
     * a ledger the resume state is only bounded by what the recipe allows. */
    ordo_ledger *ledger;
    int64_t run_id;
} ordo_loader_options;

/* A rank's batch for one step: rows = lanes owned × B/L samples, lane by
 * lane in lane order. Pointers stay valid until the next call. */
typedef struct ordo_batch {
    int64_t step; /* 1 for the first batch */
    int rows, seq_len;
    /* tokens per row of tokens and doc_start: seq_len, or seq_len + 1 under
     * "labels": "shifted" (input = row[0..seq_len), labels = row[1..]) */
    int sample_len;
    const uint32_t *tokens;   /* [rows][sample_len] */
    const uint8_t *doc_start; /* [rows][sample_len]: 1 where a document starts */
    int lane_count;
    const int *lanes;                  /* global lane numbers, ascending */
    const unsigned char *lane_digests; /* lane_count × 32 bytes (docs/recipe.md) */
    int64_t pad_tokens;                /* padding tokens in this batch */
    int source_count;
    const int64_t *source_tokens; /* tokens per recipe source in this batch */
    const int32_t *sources;       /* [rows]: the source of each sample (every token of it);
                                     -1 for a rank-bound sample holding several */
} ordo_batch;

/* The rank owning `lane` of L at world size W under logical binding, or
 * -1 when W does not divide L or the lane is not one of the L. */
int ordo_lane_rank(int lanes, int world_size, int lane);

/* Opens a loader for an indexed recipe. Refuses, naming the numbers, a
 * world size that does not divide the lanes (logical) or the global batch
 * (rank), a rank outside the world, and a resume state of another recipe
 * shape. The recipe must outlive the loader. */
ordo_status ordo_loader_open(const ordo_recipe *recipe, const ordo_loader_options *options,
                             ordo_loader **loader, ordo_error *err);

/* Produces the next batch (step numbers continue from a resumed state).
 * The batch's arrays belong to the loader and stay valid until the next
 * call. After an error (bad data, a changed shard) the loader is spent:
 * every later next or checkpoint returns the same error, so no batch or
 * checkpoint is ever built from half-filled lanes. */
ordo_status ordo_loader_next(ordo_loader *loader, ordo_batch *batch, ordo_error *err);

/* The state of this rank's lanes after the last batch it returned:
 * *state (caller frees with ordo_free) is a checkpoint of those lanes. */
ordo_status ordo_loader_checkpoint(ordo_loader *loader, unsigned char **state, size_t *size,
                                   ordo_error *err);

/* Stops the workers and frees the loader (NULL is fine). */
void ordo_loader_close(ordo_loader *loader);

/* Joins the checkpoints of all ranks of one step into one state covering
 * every lane (what the ledger stores and a resume takes). *merged is owned
 * by the caller (ordo_free). */
ordo_status ordo_checkpoint_merge(const unsigned char *const *states, const size_t *sizes,
                                  int count, unsigned char **merged, size_t *size, ordo_error *err);

/* Describes a checkpoint: its lanes, the step it follows, and the
 * bytes per lane. */
ordo_status ordo_checkpoint_describe(const void *state, size_t size, int *lanes, int64_t *step,
                                     ordo_error *err);

/* Whether two checkpoints put every lane at the same place: *same 1 when
 * they hold the same recipe, step, lanes and positions, a document record
 * that one of them does not know (0: a checkpoint of format 5, or a
 * position a resume from one has not read yet) matching any; so a state a
 * job of this version records again for a step is not a conflict with the
 * one an older version recorded. *b_knows_more (may be NULL): they are the
 * same and b knows records a does not. ORDO_INVALID (naming the byte) when
 * either is not a checkpoint. */
ordo_status ordo_checkpoint_equivalent(const void *a, size_t a_size, const void *b, size_t b_size,
                                       int *same, int *b_knows_more, ordo_error *err);

/* ---- runs and segments ------------------------------------------------ */

/* What a new run is. Strings are borrowed. */
typedef struct ordo_run_spec {
    const char *name;        /* 1..255 bytes of UTF-8, no control characters, no '/' */
    const char *recipe_id;   /* 64 hex; the recipe must be in the ledger */
    const char *group_tag;   /* ablation group, or NULL */
    const char *baseline;    /* name of the run this one is checked against, or NULL */
    int lanes;               /* the recipe's lane count L, >= 1 */
    const char *digest_kind; /* NULL or "ordo" for ordo digests; else a foreign kind */
    const char *data_root;   /* folder of the recipe's relative shard paths, or NULL */
} ordo_run_spec;

/* A run as read back. All fields are copies owned by the struct. */
typedef struct ordo_run_info {
    int64_t id;
    char name[ORDO_NAME_MAX + 1];
    char recipe_id[ORDO_DIGEST_HEX_SIZE];
    char recipe_name[ORDO_NAME_MAX + 1]; /* "" when the recipe has no name */
    char group_tag[ORDO_NAME_MAX + 1];   /* "" when none */
    char baseline[ORDO_NAME_MAX + 1];    /* "" when none */
    char digest_kind[32];
    char created_at[32];
    char data_root[4096]; /* "" when not recorded */
    int lanes;
    int world_size;      /* world size of the latest segment, 0 when none */
    int64_t segments;    /* number of segments */
    int64_t steps;       /* steps recorded */
    int64_t first_step;  /* 0 when no steps */
    int64_t last_step;   /* 0 when no steps */
    int64_t checkpoints; /* checkpoints recorded */
    int64_t conflicts;   /* conflict events */
    /* lane states recorded (every lane's, with the first step of each flush
     * epoch after the first and of each resume): a step of an epoch that
     * has one is regenerated with at most one epoch of replay */
    int64_t lane_states;
} ordo_run_info;

/* Checks a run name as ordo_run_create does: 1..255 bytes of UTF-8, no
 * control characters, no '/' (ORDO_INVALID "run names may not contain '/'
 * (they are URL path segments)"). */
ordo_status ordo_run_name_check(const char *name, ordo_error *err);

/* Creates a run and writes its id. Creating a run that exists with the same
 * recipe, lanes, group, baseline and digest kind is a no-op that returns its
 * id; with anything different it is ORDO_CONFLICT naming the difference. */
ordo_status ordo_run_create(ordo_ledger *ledger, const ordo_run_spec *spec, int64_t *run_id,
                            ordo_error *err);

/* Reads one run by name: the one call that takes a run's name. Every
 * other call takes its id (ordo_run_info.id); the CLI and the service
 * resolve the names they are given with this, once. */
ordo_status ordo_run_get(ordo_ledger *ledger, const char *name, ordo_run_info *info,
                         ordo_error *err);

/* A list of runs: `count` items. */
typedef struct ordo_run_list {
    size_t count;
    ordo_run_info *items; /* NULL when count is 0 */
} ordo_run_list;

/* Reads every run, ordered by id. *list is the caller's
 * (ordo_run_list_free). */
ordo_status ordo_runs_list(ordo_ledger *ledger, ordo_run_list **list, ordo_error *err);

void ordo_run_list_free(ordo_run_list *list);

/* What a new segment is. lane_ranks[l] is the rank that owns lane l. */
typedef struct ordo_segment_spec {
    int world_size;                 /* W >= 1 */
    int64_t start_step;             /* first step of the segment, >= 1 */
    int lanes;                      /* entries in lane_ranks */
    const int *lane_ranks;          /* [lanes] owning rank of each lane */
    ordo_lane_binding lane_binding; /* ORDO_BINDING_LOGICAL (0) or ORDO_BINDING_RANK */
    const char *workers;            /* worker settings as a JSON object, or NULL */
    const char *host;               /* where it runs, or NULL */
    int64_t resumed_from;           /* checkpoint step this segment resumed from, or 0 */
    int replace_crashed;            /* a resume: segments starting at or after start_step
                                that never took a checkpoint (they crashed) are
                                replaced by this one instead of refusing it */
} ordo_segment_spec;

/* A segment as read back; lane_plan is JSON ([[lanes of rank 0], …]). */
typedef struct ordo_segment_info {
    int64_t id;
    int ordinal; /* 0 for the first segment of its run */
    int world_size;
    int lanes;
    ordo_lane_binding lane_binding;
    int64_t start_step;
    int64_t end_step; /* last step: the closing step, or for the open segment
                         the last step recorded in its range (start-1 if none) */
    int open;         /* 1 for the run's latest segment */
    int64_t resumed_from;
    char *lane_plan; /* owned; freed by ordo_segment_list_free */
    char *workers;   /* owned, NULL when none */
    char *host;      /* owned, NULL when none */
    char created_at[32];
} ordo_segment_info;

/* Checks a segment's lane plan (docs/ledger.md, "Recording guarantees"), given as lane_ranks[l], the
 * rank owning lane l of `lanes`: `binding` is ORDO_BINDING_LOGICAL or
 * ORDO_BINDING_RANK ("lane_binding must be 'logical' or 'rank'"); the world size is 1
 * to 65536; under logical binding L % W == 0 ("lanes (8) must be divisible
 * by world size (3)") and every rank owns L/W lanes, under rank binding
 * L == W and every rank owns one ("lane_plan gives rank 0 3 lanes; every
 * rank owns 4"); every lane's rank is one of the world's. ORDO_INVALID
 * naming the numbers; the texts are those the service answers with. */
ordo_status ordo_lane_plan_check(int lanes, int world_size, ordo_lane_binding binding,
                                 const int *lane_ranks, ordo_error *err);

/* Reads a segment's lane plan for a run of `lanes` lanes (the recipe's L)
 * at `world_size` ranks under `binding`: from `plan`, `len` bytes of JSON
 * [[lanes of rank 0], [lanes of rank 1], ...] with every lane listed once
 * ("lane_plan: rank 1 lists lane 9, which is not one of the 8 lanes or is
 * listed twice", "lane_plan leaves lane 3 without a rank"), or when `plan`
 * is NULL the default: rank r owns lanes [r*L/W, (r+1)*L/W) (logical), lane
 * r (rank-bound). Then checked as by ordo_lane_plan_check. *lane_ranks (the
 * caller's, ordo_free) receives the owning rank of each of *plan_lanes
 * lanes: L, or W under rank binding (the form ordo_segment_spec takes). */
ordo_status ordo_lane_plan_parse(int lanes, int world_size, ordo_lane_binding binding,
                                 const char *plan, size_t len, int **lane_ranks, int *plan_lanes,
                                 ordo_error *err);

/* Adds a segment to a run and writes its id. Validates (docs/ledger.md, "Recording guarantees", and docs/api.md,
 * "POST /api/runs/{run}/segments") that the
 * lanes match the run (logical binding) or equal the world size (rank
 * binding), and the plan as ordo_lane_plan_check does. start_step must be
 * after the previous segment's start; the previous
 * segment is closed at start_step - 1. A resume event is recorded for every
 * segment after the first, and pending lane reports (ordo_lanes_record) of
 * steps from start_step on are dropped: the resume reports them again. */
ordo_status ordo_segment_add(ordo_ledger *ledger, int64_t run_id, const ordo_segment_spec *spec,
                             int64_t *segment_id, ordo_error *err);

/* A run and its first segment, as a job (or the service for it) starts
 * them. Strings are borrowed. */
typedef struct ordo_run_start_spec {
    ordo_run_spec run; /* run.lanes is not read: the stored recipe's "lanes" is taken */
    int world_size;    /* W of the first segment */
    ordo_lane_binding lane_binding; /* logical (0) or rank */
    const char *lane_plan;          /* JSON [[lanes of rank 0], ...] of lane_plan_len bytes, or
                                 NULL for the default (ordo_lane_plan_parse) */
    size_t lane_plan_len;
    const char *workers;  /* the segment's worker settings (JSON object), or NULL */
    const char *host;     /* or NULL */
    int64_t resumed_from; /* 0, or refused: a first segment resumes nothing */
} ordo_run_start_spec;

/* What ordo_run_start did. */
typedef struct ordo_run_started {
    int64_t run_id;
    int64_t segment_id; /* 0 when the run had its segment already */
    int created;        /* 1 when the segment (and the run, if new) was recorded now */
} ordo_run_started;

/* Creates run spec->run with its first segment (steps from 1) at
 * spec->world_size: checks the name (ordo_run_name_check), reads L from the
 * stored recipe (ordo_recipe_lanes: ORDO_NOTFOUND without it) and the plan
 * (ordo_lane_plan_parse) before anything is recorded. A run that exists
 * with the same fields is a no-op (created 0) when it has a segment at
 * this world size, and ORDO_CONFLICT "run 'r' exists at world size 2, not
 * 4 (...)" at another; with different fields, as ordo_run_create. */
ordo_status ordo_run_start(ordo_ledger *ledger, const ordo_run_start_spec *spec,
                           ordo_run_started *started, ordo_error *err);

/* A list of segments: `count` items. */
typedef struct ordo_segment_list {
    size_t count;
    ordo_segment_info *items; /* NULL when count is 0 */
} ordo_segment_list;

/* Reads a run's segments in order. *list is the caller's
 * (ordo_segment_list_free, which frees the strings its items own too). */
ordo_status ordo_segments_list(ordo_ledger *ledger, int64_t run_id, ordo_segment_list **list,
                               ordo_error *err);

void ordo_segment_list_free(ordo_segment_list *list);

/* ---- steps ------------------------------------------------------------ */

/* One step. On input every pointer is borrowed for the call; on output (scan
 * callback) they are valid only until the callback returns. */
typedef struct ordo_step {
    int64_t step; /* 1 .. ORDO_STEP_MAX */
    unsigned char batch_digest[ORDO_DIGEST_SIZE];
    const unsigned char *lane_digests; /* lane_count × 32 bytes, or NULL */
    int lane_count;                    /* 0 when lane_digests is NULL */
    int64_t tokens;                    /* -1 when unknown */
    int64_t pad_tokens;                /* -1 when unknown */
    const int64_t *source_tokens;      /* per-source tokens, or NULL */
    int source_count;
    int has_loss;
    double loss;         /* finite when has_loss */
    const char *metrics; /* JSON object text, or NULL */
    /* Every lane's state at the start of this step's flush epoch, or NULL:
     * a checkpoint of all the run's lanes taken after this step (each
     * rank's ordo_loader_checkpoint joined by ordo_checkpoint_merge), of
     * logical lanes. A job gives it with the first step of each flush epoch
     * (step % flush_every == 1, or every step when flush_every is 1), so
     * ordo_batch_provenance regenerates any step with at most one epoch of
     * replay. Recorded once: a different state for the step is a conflict. */
    const unsigned char *lane_state;
    size_t lane_state_size;
} ordo_step;

/* Sets a step to "nothing known" except its number. */
void ordo_step_init(ordo_step *step, int64_t number);

/* A new step whose batch digest differs from its baseline's. */
typedef struct ordo_divergence {
    int64_t step;
    unsigned char digest[ORDO_DIGEST_SIZE];          /* the run's */
    unsigned char baseline_digest[ORDO_DIGEST_SIZE]; /* the baseline run's */
} ordo_divergence;

#define ORDO_DIVERGENCES_LISTED 100 /* divergences a record result lists */

/* How a batch of step reports was taken. */
typedef struct ordo_record_result {
    size_t inserted;             /* new steps */
    size_t unchanged;            /* same digest as recorded: no-op (empty fields filled) */
    size_t conflicts;            /* different digest: kept as a conflict event */
    int64_t first_conflict_step; /* 0 when none */
    /* New steps that differ from the run's baseline (its digest kind the
     * same), each kept as a divergence event in the same transaction as
     * the steps; the first ORDO_DIVERGENCES_LISTED of them in recording
     * order are listed. */
    size_t diverged;
    size_t listed;
    ordo_divergence divergences[ORDO_DIVERGENCES_LISTED];
} ordo_record_result;

/* Records `count` steps of a run in one transaction: all of them or, on any
 * error, none (ORDO_CONFLICT is not such an error: see below). Each step is validated first (step >= 1, a segment covering
 * it, lane count equal to that segment's lanes, batch digest equal to the
 * digest of the lane digests when both are given, finite loss, metrics a
 * JSON object of scalars: numbers, strings, booleans, null). A step already recorded with the same digests is a no-op
 * (fields recorded as unknown are filled in; known ones keep their first
 * value); with different digests it is kept as a conflict event and never
 * overwrites the first report. A new step of a run with a baseline whose
 * digest for that step differs is a divergence event, written in the same
 * transaction (docs/api.md, "POST /api/runs/{run}/steps"). When any step
 * conflicted, the call returns
 * ORDO_CONFLICT after committing the rest of the batch and the events;
 * `result` tells how many and from which step. */
ordo_status ordo_steps_record(ordo_ledger *ledger, int64_t run_id, const ordo_step *steps,
                              size_t count, ordo_record_result *result, ordo_error *err);

/* One rank's report of one lane's digest for a step. */
typedef struct ordo_lane_report {
    int64_t step;
    int lane;
    int rank; /* the reporting rank: it must own the lane under the lane plan of
                 the segment covering the step */
    unsigned char digest[ORDO_DIGEST_SIZE];
} ordo_lane_report;

/* Records lane digests reported one lane at a time (ranks of a job that
 * does not link libordo) in one transaction, all or none: each is kept
 * until every lane of its step (the covering segment's L) is in; then the
 * batch digest is composed (docs/recipe.md, "How a lane's data is decided")
 * and the step recorded as by
 * ordo_steps_record, and *completed counts such steps. The same report
 * again is a no-op; a different digest for a lane already reported is a
 * conflict event (counted in result) and never overwrites the first. A
 * report whose rank does not own its lane under the covering segment's
 * lane plan is refused (ORDO_INVALID, nothing recorded), so a rank cannot
 * pre-empt another's lanes. Reports of incomplete steps are kept, at most
 * ORDO_LANE_REPORTS_PENDING_MAX per run (a call that would exceed it is ORDO_BUSY,
 * to be tried again); a new segment drops those of the steps it starts at or after.
 * Cost: O(n log n) in the reports, in any order. */
#define ORDO_LANE_REPORTS_PENDING_MAX (1 << 22)
ordo_status ordo_lanes_record(ordo_ledger *ledger, int64_t run_id, const ordo_lane_report *reports,
                              size_t count, ordo_record_result *result, size_t *completed,
                              ordo_error *err);

/* Called for each step of a scan, in step order; return non-zero to stop. */
typedef int (*ordo_step_fn)(const ordo_step *step, void *context);

/* Calls `fn` for each recorded step of a run with from <= step <= to. */
ordo_status ordo_steps_scan(ordo_ledger *ledger, int64_t run_id, int64_t from, int64_t to,
                            ordo_step_fn fn, void *context, ordo_error *err);

/* ---- comparing runs ---------------------------------------------------- */

/* How two runs' steps agree, over the steps both recorded. */
typedef struct ordo_compare_result {
    int64_t steps_compared; /* steps present in both runs */
    int64_t matched, diverged;
    int64_t first_divergent_step; /* 0 when none */
    int64_t only_a, only_b;       /* steps recorded by one run only */
    size_t range_count;
    int64_t (*ranges)[2]; /* divergent step ranges [from, to], owned */
    size_t lane_count;
    int *lanes;     /* lanes that differ in some diverged step, owned */
    int comparable; /* 0 when the digest kinds differ */
    /* Steps of each run reported again with another digest (conflict
     * events): the first report is what was compared, but the run's own
     * history disagrees with itself there. */
    int64_t conflicts_a, conflicts_b;
    int64_t first_conflict_step; /* in either run; 0 when none */
    /* The runs' recipes: their ids, and how they differ (ordo_recipe_diff's
     * JSON array, owned; "[]" for the same recipe). */
    char recipe_a[ORDO_DIGEST_HEX_SIZE], recipe_b[ORDO_DIGEST_HEX_SIZE];
    char *recipe_diff;
} ordo_compare_result;

/* Compares runs `a` and `b` (run ids) step by step by batch digest (and, where both
 * recorded lane digests of the same lane count, lane by lane), and counts
 * each run's conflicting reports. Free the result with
 * ordo_compare_result_free. */
ordo_status ordo_compare_runs(ordo_ledger *ledger, int64_t a, int64_t b,
                              ordo_compare_result *result, ordo_error *err);

/* Frees what a compare result owns (the struct is the caller's). */
void ordo_compare_result_free(ordo_compare_result *result);

/* How two recipes differ, from their canonical JSON texts (ordo_recipe_get;
 * any two JSON objects, NUL-terminated): *diff receives a JSON array of
 * {"key", "a", "b"}, one entry per value that differs, in key order, each
 * side's value as JSON (null: absent on that side). Keys are dotted paths
 * with array indexes in brackets ("schedule[1].weights.web"); sources are
 * matched by name and shards by path ("sources.web.filter.all[1].ge",
 * "sources.web.shards[\"web/0.jsonl\"].sha256"); a key that is not a plain
 * word is a JSON string in brackets; an object or array present on one side
 * only is one entry with the whole value. "[]" when they are equal. The
 * rules are those of views/recipe_diff.c. *diff is owned by the caller
 * (ordo_free); ORDO_INVALID naming the side that is not a JSON object. */
ordo_status ordo_recipe_diff(const char *a, const char *b, char **diff, ordo_error *err);

/* One bucket of consecutive steps of a comparison (for display). */
typedef struct ordo_compare_bucket {
    int64_t from, to;                   /* the steps it covers */
    int64_t matched, diverged, missing; /* missing: recorded by one run only */
} ordo_compare_bucket;

typedef struct ordo_compare_buckets_result {
    ordo_compare_bucket *buckets; /* owned */
    size_t count;
    int64_t width;           /* steps per bucket */
    int lanes;               /* L when both runs have it, else 0 */
    unsigned char *lane_map; /* count × ceil(L/8) bytes: bit l of a bucket's row is
                                     set when lane l differs at one of its divergent steps */
} ordo_compare_buckets_result;

/* Compares runs a and b (run ids) over steps from..to (from <= 0: 1; to <= 0: the
 * last step either recorded) in `buckets` equal buckets: counts per bucket
 * and the lanes that differ. A bucket with any divergent step counts it,
 * so downsampling never hides a divergence. Reads range digests, and
 * steps only in blocks that differ. Free with ordo_compare_buckets_result_free. */
ordo_status ordo_compare_buckets(ordo_ledger *ledger, int64_t a, int64_t b, int64_t from,
                                 int64_t to, int buckets, ordo_compare_buckets_result *result,
                                 ordo_error *err);

/* Frees what a buckets result owns (the struct is the caller's). */
void ordo_compare_buckets_result_free(ordo_compare_buckets_result *result);

/* One bucket of a run's steps, for display. */
typedef struct ordo_series_bucket {
    int64_t from, to;
    int64_t steps;      /* recorded in the bucket */
    int64_t loss_steps; /* of which with a loss */
    double loss_sum, loss_min, loss_max;
    int64_t tokens; /* known tokens */
} ordo_series_bucket;

typedef struct ordo_series_result {
    ordo_series_bucket *buckets; /* owned */
    size_t count;
    int64_t width;
    int sources;
    int64_t *source_tokens;   /* count × sources: tokens per recipe source */
    double *target_shares;    /* count × sources: the mean target share over the
                                 bucket's recorded steps; NAN when it has none */
    double *delivered_shares; /* count × sources: the share of the tokens of the
                                 bucket's steps with per-source counts; NAN when none */
} ordo_series_result;

typedef struct ordo_mixture ordo_mixture;

/* A run's steps from..to (from <= 0: 1; to <= 0: its last step) in
 * `buckets` equal buckets: loss (sum, min, max over the steps that have
 * one), tokens and, with a mixture (ordo_mixture_open of the run's recipe;
 * NULL: none), its sources' tokens, target and delivered shares; each step
 * scanned is also added to the mixture's summary (ordo_mixture_add). Free
 * with ordo_series_result_free. */
ordo_status ordo_run_series(ordo_ledger *ledger, int64_t run_id, int64_t from, int64_t to,
                            int buckets, ordo_mixture *mixture, ordo_series_result *result,
                            ordo_error *err);

/* Frees what a series result owns (the struct is the caller's). */
void ordo_series_result_free(ordo_series_result *result);

/* ---- a run's mixture: target shares against delivered ones -------------- */

/* The target share of each source of a stored recipe at any step (its
 * weights, or its schedule with ramps, as the slot plan uses them:
 * ordo_recipe_step_weights) and a summary of what steps delivered (their
 * per-source token counts), over the steps added (docs/recipe.md). */

/* Reads the mixture of the stored recipe `recipe_id` from its canonical
 * JSON alone (no shard or tokenizer file is read); *mixture is the
 * caller's (ordo_mixture_free). ORDO_NOTFOUND when the ledger does not
 * hold the recipe. A recipe whose mixture cannot be read (one of a loader
 * that is not ordo, without "sources") gives a mixture without targets:
 * ordo_mixture_sources 0, ordo_mixture_why says why. */
ordo_status ordo_mixture_open(ordo_ledger *ledger, const char *recipe_id, ordo_mixture **mixture,
                              ordo_error *err);

/* Frees a mixture (NULL is fine). */
void ordo_mixture_free(ordo_mixture *mixture);

/* Its sources with targets (0: none), their names (owned by the mixture;
 * NULL out of range), why it has no targets ("" when it has) and the
 * recipe's global batch B (0 when it has none). */
int ordo_mixture_sources(const ordo_mixture *mixture);
const char *ordo_mixture_source_name(const ordo_mixture *mixture, int index);
const char *ordo_mixture_why(const ordo_mixture *mixture);
int ordo_mixture_global_batch(const ordo_mixture *mixture);

#define ORDO_MIXTURE_TARGET 0x1    /* target[] was filled */
#define ORDO_MIXTURE_DELIVERED 0x2 /* delivered[] was filled */

/* A step's shares, each array ordo_mixture_sources long: target[i] is
 * source i's weight at the step, delivered[i] its share of the step's
 * per-source tokens, known only when the step has counts for exactly the
 * mixture's sources, not all zero. Returns which were filled. */
int ordo_mixture_step(const ordo_mixture *mixture, const ordo_step *step, double *target,
                      double *delivered);

/* Adds a step to the summary (a step with no target adds nothing). */
void ordo_mixture_add(ordo_mixture *mixture, const ordo_step *step);

/* Adds the run's recorded steps from..to to the summary. */
ordo_status ordo_mixture_scan(ordo_ledger *ledger, ordo_mixture *mixture, int64_t run_id,
                              int64_t from, int64_t to, ordo_error *err);

/* One source over the steps added. Measured steps are those whose
 * delivered shares are known. */
typedef struct ordo_mixture_source {
    const char *name;       /* owned by the mixture */
    int64_t steps;          /* steps added */
    int64_t measured_steps; /* of which measured */
    double target_mean;     /* mean target share over the measured steps (over
                                every step added when none is); NAN: no step */
    double delivered;       /* the source's share of the measured steps' tokens;
                                NAN when none is measured */
    double worst_deviation; /* (delivered - target) × B, in samples, at the
                                measured step where it is largest in size (the
                                first such); NAN when none is measured or B unknown */
    int64_t worst_step;     /* that step; 0 when none */
} ordo_mixture_source;

/* Fills `out` for source `index`; ORDO_INVALID when out of range. */
ordo_status ordo_mixture_summary(const ordo_mixture *mixture, int index, ordo_mixture_source *out,
                                 ordo_error *err);

/* ---- checkpoints ------------------------------------------------------ */

/* A checkpoint as read back. */
typedef struct ordo_checkpoint {
    int64_t step;
    int lanes;
    size_t state_size;
    unsigned char *state; /* owned, NULL in listings; freed by ordo_checkpoint_free */
    char created_at[32];
    int held; /* 1 while its step has lanes pending: not resumed from */
} ordo_checkpoint;

/* Records the checkpoint taken after `step` was consumed: `lanes` lanes'
 * replay state, `state_size` bytes in lane order. Idempotent: the same state
 * again is a no-op; a different state for a recorded step is a conflict
 * event and ORDO_CONFLICT. A step that no report (whole step or any lane)
 * has reached is refused (ORDO_INVALID): the checkpoint would claim data
 * nobody saw delivered. One whose step still has lanes pending is kept but
 * held (ordo_checkpoint_get skips it) until the step's last lane is in. */
ordo_status ordo_checkpoint_record(ordo_ledger *ledger, int64_t run_id, int64_t step, int lanes,
                                   const void *state, size_t state_size, ordo_error *err);

/* Reads the checkpoint at `step`, or with step 0 the latest one whose step
 * is complete, state included; free with ordo_checkpoint_free. A held one
 * asked for by step is ORDO_INVALID naming the step. */
ordo_status ordo_checkpoint_get(ordo_ledger *ledger, int64_t run_id, int64_t step,
                                ordo_checkpoint *checkpoint, ordo_error *err);

/* Frees the state a checkpoint filled by ordo_checkpoint_get owns (the
 * struct is the caller's) and sets it to NULL. */
void ordo_checkpoint_free(ordo_checkpoint *checkpoint);

/* A list of checkpoints: `count` items, their state NULL. */
typedef struct ordo_checkpoint_list {
    size_t count;
    ordo_checkpoint *items; /* NULL when count is 0 */
} ordo_checkpoint_list;

/* Lists a run's checkpoints in step order without their state. *list is
 * the caller's (ordo_checkpoint_list_free). */
ordo_status ordo_checkpoints_list(ordo_ledger *ledger, int64_t run_id, ordo_checkpoint_list **list,
                                  ordo_error *err);

void ordo_checkpoint_list_free(ordo_checkpoint_list *list);

/* ---- events ----------------------------------------------------------- */

/* What an event records. Their names at the edges (CLI, JSON, the ledger)
 * are "conflict", "resume", "divergence", "replay_mismatch", "skip" and
 * "chunk_mismatch". */
typedef enum ordo_event_kind {
    ORDO_EVENT_ANY = -1, /* in ordo_events_list: every kind */
    ORDO_EVENT_CONFLICT = 0,
    ORDO_EVENT_RESUME,
    ORDO_EVENT_DIVERGENCE,
    ORDO_EVENT_REPLAY_MISMATCH,
    ORDO_EVENT_SKIP,
    ORDO_EVENT_CHUNK_MISMATCH
} ordo_event_kind;

/* The kind's name; NULL for ORDO_EVENT_ANY or a value that is no kind.
 * Static string. */
const char *ordo_event_kind_name(ordo_event_kind kind);

/* Reads a kind's name into *kind; anything else (NULL too) is ORDO_INVALID
 * naming it. */
ordo_status ordo_event_kind_parse(const char *text, ordo_event_kind *kind, ordo_error *err);

/* An event as read back. */
typedef struct ordo_event {
    int64_t id;
    int64_t step; /* 0 when the event is not about one step */
    ordo_event_kind kind;
    char *detail; /* JSON object, owned; freed by ordo_event_list_free */
    char created_at[32];
} ordo_event;

/* Records an event of `kind` (any but ORDO_EVENT_CONFLICT: conflicts are
 * recorded by the step and checkpoint calls) with a JSON object `detail`
 * (NULL for {}). */
ordo_status ordo_event_record(ordo_ledger *ledger, int64_t run_id, int64_t step,
                              ordo_event_kind kind, const char *detail, ordo_error *err);

/* Records what stopped a job reading its data (`why`, the error its loader
 * gave) as an event of run `run_id` at `step` (0: none), when it is one the
 * ledger keeps: a chunk whose bytes differ from those indexed becomes a
 * "chunk_mismatch" event whose detail names "shard", "chunk", "offset",
 * "bytes", "indexed_sha256" and "read_sha256". Any other error records
 * nothing. *recorded (may be NULL) says whether an event was recorded. */
ordo_status ordo_event_record_stop(ordo_ledger *ledger, int64_t run_id, int64_t step,
                                   const ordo_error *why, int *recorded, ordo_error *err);

/* A list of events: `count` items. */
typedef struct ordo_event_list {
    size_t count;
    ordo_event *items; /* NULL when count is 0 */
} ordo_event_list;

/* Lists a run's events in id order, only those of `kind` unless it is
 * ORDO_EVENT_ANY. *list is the caller's (ordo_event_list_free, which frees
 * the details). */
ordo_status ordo_events_list(ordo_ledger *ledger, int64_t run_id, ordo_event_kind kind,
                             ordo_event_list **list, ordo_error *err);

void ordo_event_list_free(ordo_event_list *list);

/* ---- writing shards ---------------------------------------------------- */

/* How ordo_shard_write writes shards; zero fields take the defaults. */
typedef struct ordo_shard_options {
    const char *out_dir;    /* output folder: created if missing, must hold no shard-* file */
    const char *text_field; /* the records' text field (a dotted path); NULL: "text" */
    long docs_per_frame;    /* documents per zstd frame (a chunk), 1 to 2^24; 0: 64 */
    long docs_per_shard;    /* documents per shard file, 1 to 2^40; 0: 65536 */
    int level;              /* zstd level, 1 to 19; 0: 3 */
} ordo_shard_options;

/* What ordo_shard_write wrote. */
typedef struct ordo_shard_summary {
    size_t files;        /* input files read */
    long docs, skipped;  /* documents written; empty ones counted and left out */
    long shards, frames; /* shard files and frames written */
} ordo_shard_summary;

/* Reads .txt files (one document each), .jsonl, .jsonl.gz and .json.gz
 * files (one JSON object per line, whose text field — a name or dotted
 * path — must be a string or null; every gzip member in turn) and .parquet
 * files (each row a JSON object of its columns, struct columns nested)
 * from `inputs` (files, and
 * folders walked recursively without following links), in bytewise order
 * of their resolved paths, and writes out_dir/shard-00000.jsonl.zst, ...:
 * every zstd frame holds docs_per_frame documents as JSON lines. A file
 * reached twice, a link, anything but a regular file, a malformed line
 * (named by file and byte offset) or a document over 256 MiB is refused;
 * on any error no shard of this call is left behind. Not for two calls at
 * once in one process (they take turns). */
ordo_status ordo_shard_write(const ordo_shard_options *options, const char *const *inputs,
                             size_t count, ordo_shard_summary *summary, ordo_error *err);

/* ---- reading a shard file ---------------------------------------------- */

/* Called for every document kept, in file order; `record` is its 0-based
 * physical index in the file (blank, empty and filtered-out records
 * count). Non-zero stops the read (not an error). */
typedef int (*ordo_document_fn)(void *context, const char *text, size_t len, uint64_t record);

/* Reads every document of the shard file at `path`, in any format a
 * recipe reads (.jsonl, .jsonl.zst, .jsonl.gz, .json.gz, .parquet, .txt:
 * by its name's ending), through the same readers a loader uses: the text
 * at `text_field` (a dotted path; NULL: "text"), kept when non-empty and
 * passing `filter_json` (a source's "filter" object as JSON text; NULL:
 * none). *counts (may be NULL) gets the counts. A malformed record names
 * the file and the record. */
ordo_status ordo_shard_read(const char *path, const char *text_field, const char *filter_json,
                            ordo_document_fn fn, void *context, ordo_read_counts *counts,
                            ordo_error *err);

/* ---- recovery manifests ------------------------------------------------ */

/* The recovery manifest for resuming run `run_id` from its checkpoint at
 * `step` (0: the latest) at world size `world_size`: JSON with the recipe,
 * L, W, rank -> lanes, the checkpoint state (base64) and its per-lane
 * replay positions, the batch digests recorded for the next
 * `expected_steps` steps, and "sha256": the SHA-256 of the manifest's
 * canonical text without that field. ORDO_INVALID naming both numbers when
 * L % W != 0. *json is owned by the caller (ordo_free). */
ordo_status ordo_recovery_manifest(ordo_ledger *ledger, int64_t run_id, int world_size,
                                   int64_t step, int expected_steps, char **json, ordo_error *err);

/* Checks that a manifest is well-formed and its SHA-256 matches. */
ordo_status ordo_recovery_manifest_check(const char *json, size_t len, ordo_error *err);

/* A recovery manifest read back against a ledger (ordo_recovery_manifest_read). */
typedef struct ordo_manifest {
    ordo_run_info run;          /* the manifest's run, as this ledger holds it */
    ordo_recipe *recipe;        /* its recipe, shards verified and indexed; owned */
    ordo_checkpoint checkpoint; /* the checkpoint to resume from; state owned */
    int world_size;             /* the world size the manifest was made for */
    unsigned char *expected;    /* expected_count × 32 bytes, owned: the batch
                                 * digests of the steps after checkpoint.step */
    size_t expected_count;
} ordo_manifest;

/* Checks a manifest (ordo_recovery_manifest_check) and reads it against
 * `ledger`, which must hold its run with the same recipe id: the recipe is
 * parsed with its shards resolved under `data_root` (NULL: the manifest's),
 * verified and indexed. Every refusal says why, starting "manifest:" (what
 * the manifest holds is wrong) or "refused:" (the check, the recipe or its
 * shards). *manifest is the caller's (ordo_manifest_free). */
ordo_status ordo_recovery_manifest_read(ordo_ledger *ledger, const char *json, size_t len,
                                        const char *data_root, ordo_manifest **manifest,
                                        ordo_error *err);

/* Frees a manifest ordo_recovery_manifest_read returned (NULL accepted). */
void ordo_manifest_free(ordo_manifest *manifest);

/* ---- API tokens -------------------------------------------------------- */

/* "ordo_" and 64 hex characters, plus the terminating NUL. */
#define ORDO_TOKEN_SIZE 70

/* What a token may do: read, or read and write. Their names at the edges
 * (CLI, JSON, the ledger) are "reader" and "writer". */
typedef enum ordo_token_role { ORDO_ROLE_READER = 0, ORDO_ROLE_WRITER = 1 } ordo_token_role;

/* "reader" or "writer"; NULL for a value that is neither. Static string. */
const char *ordo_token_role_name(ordo_token_role role);

/* Reads "reader" or "writer" into *role; anything else (NULL too) is
 * ORDO_INVALID "token role '<text>' must be writer or reader". */
ordo_status ordo_token_role_parse(const char *text, ordo_token_role *role, ordo_error *err);

/* Creates an API token for `role` named `name`: a fresh random secret
 * written to `token` (shown once; only its SHA-256 is stored). */
ordo_status ordo_token_create(ordo_ledger *ledger, const char *name, ordo_token_role role,
                              char token[ORDO_TOKEN_SIZE], ordo_error *err);

/* Checks a presented token: ORDO_OK with its role written to *role, or
 * ORDO_NOTFOUND for a malformed, unknown or revoked token. Only hashes are
 * compared, in constant time. */
ordo_status ordo_token_check(ordo_ledger *ledger, const char *token, ordo_token_role *role,
                             ordo_error *err);

/* A stored token, as listed: never its secret (which is not stored). */
typedef struct ordo_token_info {
    int64_t id;
    char name[ORDO_NAME_MAX + 1];
    ordo_token_role role;
    char created_at[32];  /* ISO 8601, UTC */
    char revoked_at[32];  /* "" while the token is valid */
    char fingerprint[13]; /* the first 12 hex digits of the token's SHA-256 */
} ordo_token_info;

/* A list of tokens: `count` items. */
typedef struct ordo_token_list {
    size_t count;
    ordo_token_info *items; /* NULL when count is 0 */
} ordo_token_list;

/* Every token, ordered by id. *list is the caller's (ordo_token_list_free). */
ordo_status ordo_tokens_list(ordo_ledger *ledger, ordo_token_list **list, ordo_error *err);

void ordo_token_list_free(ordo_token_list *list);

/* Revokes token `id`: from this call on, ordo_token_check refuses it.
 * Revoking a revoked token again is ORDO_OK; ORDO_NOTFOUND for an id that
 * is not in the ledger. */
ordo_status ordo_token_revoke(ordo_ledger *ledger, int64_t id, ordo_error *err);

/* ---- batch provenance ------------------------------------------------- */

/* One piece of a document in a sample: tokens [start, end) of the
 * document's `length` ([bos] tokens eos, both included; 0 when the
 * document goes on past the step's flush epoch: the replay tokenizes no
 * further than the epoch packs), at token `at` of the sample. The document is record `record` of `shard`: its physical
 * index in the shard from 0 (a line of .jsonl, .jsonl.zst or .jsonl.gz, a
 * Parquet row, 0 for a .txt file), blank, empty and filtered-out records
 * counted, starting at byte `byte` of the file (.jsonl and .txt; -1 in
 * compressed and Parquet shards, where `record` locates it). */
typedef struct ordo_batch_piece {
    const char *shard; /* its path as in the resolved recipe (owned by the provenance) */
    uint64_t record;
    int64_t byte;
    uint64_t start, end, length;
    int at;
} ordo_batch_piece;

/* One sample of a regenerated batch. */
typedef struct ordo_batch_sample {
    int lane;
    int source;              /* recipe source index */
    const char *source_name; /* owned by the provenance */
    int piece_count;
    const ordo_batch_piece *pieces; /* in sample order */
    const uint32_t *tokens;         /* sample_len ids */
} ordo_batch_sample;

/* The global batch of one recorded step, regenerated and checked. */
typedef struct ordo_provenance {
    int64_t step;
    int64_t from_step; /* the step it was replayed from (steps from_step+1 to step
                          were regenerated); 0: the run's start */
    /* what from_step is: "start" (step 0), "checkpoint" (a checkpoint's
     * step, none recorded in the step's flush epoch), or "epoch" (the start
     * of the step's flush epoch, from the lane state recorded with one of
     * its steps, ordo_step.lane_state, or a checkpoint taken in it).
     * Static string. */
    const char *from;
    int lanes, per_lane, sample_len, rows;
    unsigned char batch_digest[ORDO_DIGEST_SIZE];
    const unsigned char *lane_digests; /* lanes x 32 bytes, equal to the ledger's */
    const ordo_batch_sample *samples;  /* rows, in batch order (lane by lane) */
    const ordo_recipe *recipe;         /* the run's recipe, owned */
} ordo_provenance;

/* Regenerates the global batch of step `step` of run `run_id` (any world
 * size or segment it ran at) through the loader itself at world size 1:
 * from the start of the step's flush epoch when the ledger holds a lane
 * state of that epoch (at most one epoch of replay), else from its latest
 * checkpoint before that step (or from step 0), and checks every lane
 * digest of every step it regenerates against the ledger's (the resume
 * check for the checkpoint's flush epoch, then each step up to `step`). The recipe's relative shard paths resolve in `data_root`
 * (NULL: the run's recorded one, else the current folder); shards are
 * checked chunk by chunk as they are read. Refused: ORDO_NOTFOUND for a
 * step the run did not record; ORDO_INVALID for a foreign digest kind or
 * rank-bound lanes (their samples mix sources and depend on the world
 * size's history); ORDO_CONFLICT when a regenerated lane digest differs
 * from the ledger's (naming step and lane: the data or the code changed)
 * or a shard changed (naming step, lane and file); a checkpoint that does
 * not reproduce the ledger is refused as a resume refuses it (ORDO_INVALID
 * naming step and lane). Errors start "step N of run 'NAME': " ("step N
 * of run 'NAME' (ledger 'FILE'): " once the replay began). *out is the
 * caller's (ordo_provenance_free). */
ordo_status ordo_batch_provenance(ordo_ledger *ledger, int64_t run_id, int64_t step,
                                  const char *data_root, ordo_provenance **out, ordo_error *err);

void ordo_provenance_free(ordo_provenance *provenance);

/* The text of piece `piece` of sample `row`: its tokens decoded by the
 * recipe's tokenizer (bytes for the byte tokenizer), bos and eos left
 * out. *text is the caller's (ordo_free); *len may be 0. */
ordo_status ordo_provenance_piece_text(const ordo_provenance *provenance, int row, int piece,
                                       char **text, size_t *len, ordo_error *err);

/* ---- JSON views -------------------------------------------------------- */

/* The JSON objects the CLI (`ordo show --json`, `ordo runs --json`, `ordo
 * compare --json`) and the service's API print for what the functions
 * above read back, so the two cannot disagree. Each returns compact text on
 * one line, non-ASCII characters escaped (\uXXXX), so it can be embedded
 * as is in a larger JSON document or parsed back; the caller owns it
 * (ordo_free). NULL when memory runs out or a string is not UTF-8. JSON
 * held in the structs (lane plans, workers, event details, metrics) is
 * embedded as JSON, not as strings; absent values are null. */

/* {"id", "name", "recipe_id", "recipe_name", "group", "baseline", "lanes",
 * "world_size", "digest_kind", "segments", "steps", "first_step",
 * "last_step", "checkpoints", "conflicts", "created_at"} */
char *ordo_run_info_json(const ordo_run_info *run);

/* {"id", "ordinal", "world_size", "lanes", "lane_binding", "start_step",
 * "end_step", "open", "resumed_from", "lane_plan", "workers", "host",
 * "created_at"} */
char *ordo_segment_info_json(const ordo_segment_info *segment);

/* {"step", "lanes", "state_bytes", "created_at", "held"} (not the state) */
char *ordo_checkpoint_json(const ordo_checkpoint *checkpoint);

/* {"id", "step", "kind", "detail", "created_at"} */
char *ordo_event_json(const ordo_event *event);

/* {"step", "batch_digest", "lane_digests", "tokens", "pad_tokens",
 * "source_tokens", "loss", "metrics"}; digests as 64 hex characters. */
char *ordo_step_json(const ordo_step *step);

/* ordo_step_json's object with "target_shares" and "delivered_shares"
 * (ordo_mixture_step; null where not known). `mixture` may be NULL. */
char *ordo_step_mixture_json(const ordo_step *step, const ordo_mixture *mixture);

/* {"global_batch", "steps", "measured_steps", "by_source": [{"name",
 * "target_mean", "delivered", "worst_deviation_samples", "worst_step"}],
 * "unavailable"} (ordo_mixture_summary; unavailable: ordo_mixture_why, or
 * null). */
char *ordo_mixture_json(const ordo_mixture *mixture);

/* {"a", "b", "comparable", "steps_compared", "matched", "diverged",
 * "first_divergent_step", "only_a", "only_b", "divergent_ranges" ([from,
 * to] pairs), "lanes_differ", "conflicts_a", "conflicts_b",
 * "first_conflict_step", "recipes" ({"a", "b": the recipe ids, "same"}),
 * "recipe_diff" (ordo_recipe_diff's entries)} for the comparison of runs
 * `a` and `b`. */
char *ordo_compare_result_json(const char *a, const char *b, const ordo_compare_result *result);

/* {"source", "tokens_per_byte", "bytes", "documents", "tokens_per_pass",
 * "samples_per_pass", "steps", "samples", "passes", "pass_count",
 * "pass_starts" (the steps passes 1, 2, ... start at, at most
 * ORDO_PASS_STARTS), "last_pass_start", "lane_bytes_min",
 * "lane_bytes_max", "lane_pass2_first", "lane_pass2_last"} (steps past the
 * horizon are null) for one source's passes (ordo_recipe_passes). */
char *ordo_source_plan_json(const ordo_source_plan *plan);

/* {"run", "step", "from_step", "batch_digest", "lanes", "per_lane",
 * "sample_len", "lane_digests": [{"lane", "digest"}], "samples": [{"lane",
 * "row" (in its lane), "source", "pieces": [{"shard", "record", "byte"
 * (null when not known), "tokens": [start, end], "length" (null when not
 * known), "at"}]}]} in
 * batch order; with `lane` >= 0 only that lane's digest and samples. */
char *ordo_provenance_json(const char *run, const ordo_provenance *provenance, int lane);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* ORDO_H */
