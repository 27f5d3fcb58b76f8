/* recipe: the parsed recipe and its plan (chunk tables, token estimates),
 * its canonical id, tokenizing its documents (internal, not installed).
 * Depends on core, tokenizer, shards and ledger's SQLite-free face. */
#ifndef ORDO_RECIPE_H
#define ORDO_RECIPE_H

#include <jansson.h>
#include <stdint.h>

#include "core/core.h"
#include "ledger/ledger.h"
#include "shards/shards.h"
#include "tokenizer/tokenizer.h"

enum ordo__tokenizer_kind {
    ORDO_TOKENIZER_BYTES,
    ORDO_TOKENIZER_TIKTOKEN,
    ORDO_TOKENIZER_HUGGINGFACE
};

/* A recipe without a bos (ordo__bos_id). */
#define ORDO__NO_TOKEN UINT32_MAX

/* A source's chunk, by shard and chunk index. */
typedef struct ordo__chunk_ref {
    uint32_t shard;
    uint32_t chunk;
} ordo__chunk_ref;

typedef struct ordo__source {
    char *name;
    double weight;
    char *text_field;     /* a field name or dotted path */
    ordo__filter *filter; /* NULL: every non-empty record */
    char *filter_key;     /* the filter's canonical JSON; NULL without one */
    ordo__shard *shards;
    uint32_t shard_count;
    /* plan: */
    ordo__chunk_ref *chunks; /* every chunk of every shard, in recipe order */
    uint32_t chunk_count;
    uint64_t sample_records, sample_bytes, sample_tokens; /* token estimation */
    uint64_t share; /* weight / total weight in units of 2^-30 */
} ordo__source;

/* One entry of the mixture (docs/recipe.md, "Mixture schedules"): from
 * `step` on, the sources' normalised weights as integer shares summing to
 * exactly ORDO__SHARE_ONE; with linear_from > 0 the shares ramp from the
 * previous entry's at step linear_from to these at `step`. A recipe
 * without a schedule has one entry at step 1 from the sources' weights. */
typedef struct ordo__mix_entry {
    int64_t step, linear_from;
    uint64_t *shares; /* source_count */
    double *weights;  /* source_count, as written (0 where missing) */
} ordo__mix_entry;

/* The batches a recipe cuts depend on this version of the data algorithm
 * (docs/recipe.md): it is part of the resolved recipe, so its id, and a
 * recipe or checkpoint of another version is refused naming both. */
#define ORDO__DATA_ALGORITHM 2

struct ordo_recipe {
    char *data_root; /* absolute folder the relative paths are resolved in */
    char *name;
    uint64_t seed;
    int seq_len, global_batch, lanes;
    /* "labels": "shifted" packs seq_len + 1 tokens per sample (labels are
     * the input shifted by one, nothing lost); "none" (default) seq_len. */
    int labels_shifted;
    int sample_len;       /* tokens per sample the pipeline packs and digests */
    int flush_every;      /* steps per flush epoch (the shuffle block, the checkpoint grain) */
    int shuffle;          /* samples permuted within a flush epoch among slots of one source */
    ordo__mix_entry *mix; /* the mixture: at least one entry, the first at step 1 */
    uint32_t mix_count;
    int scheduled;        /* the recipe has a "schedule" (sources have no weight) */
    int chunk_records;    /* lines per chunk of a plain .jsonl shard */
    int estimate_records; /* records sampled per source for token estimation */
    enum ordo__tokenizer_kind tokenizer_kind;
    ordo_tokenizer *tokenizer; /* a tiktoken encoding or a tokenizer.json, owned; NULL: bytes */
    char *tokenizer_path;      /* its file as written (relative to data_root) */
    unsigned char tokenizer_sha256[ORDO_DIGEST_SIZE];
    char *bos, *eos;         /* as the recipe names them; NULL: none, the encoding's end-of-text */
    uint32_t bos_id, eos_id; /* bos_id ORDO__NO_TOKEN: none */
    ordo__source *sources;
    uint32_t source_count;
    char *canonical;
    char id[ORDO_DIGEST_HEX_SIZE];
    int planned;           /* chunk tables and estimates are present */
    int indexed_shards;    /* shards the last ordo_recipe_index read (not from a ledger) */
    int hashed_shards;     /* shard files hashed whole since it was opened */
    uint64_t hashed_bytes; /* and their bytes */
    ordo_ledger *known;    /* while parsing: the ledger that may know shard digests */
};

#define ORDO__SHARE_ONE ((uint64_t)1 << 30)

/* The most bytes one chunk of the recipe may hold (see ORDO__CHUNK_MAX). */
uint64_t ordo__chunk_limit(const ordo_recipe *recipe);

/* What a shard of source `src` has its chunk table made under (text
 * field, filter, lines per chunk); borrowed from the recipe. */
ordo__shard_key ordo__shard_key_of(const ordo_recipe *r, const ordo__source *src,
                                   const ordo__shard *shard);

/* Resolves a shard's SHA-256 at open (see shard_known.c). With `recorded`
 * the recipe holds its digest and size: a file of another size is refused,
 * one the ledger (r->known) saw with the same size, time and digest is
 * taken as it is (its chunks are checked as they are read), any other is
 * hashed and refused when it differs. Without, the digest comes from the
 * ledger when the file's size and time match what it recorded, else from
 * hashing the file. */
ordo_status ordo__shard_resolve(ordo_recipe *r, ordo__shard *shard, int recorded, ordo_error *err);

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

/* Parses the recipe's "schedule" (or, without one, makes the single entry
 * from the sources' weights) into recipe->mix. */
ordo_status ordo__mixture_parse(ordo_recipe *recipe, json_t *root, ordo_error *err);

/* A recipe holding only the mixture of recipe JSON (a stored canonical
 * recipe, or any JSON object): source names, weights or schedule, global
 * batch (0 when absent). No tokenizer or shard is read, so it serves only
 * ordo_recipe_step_weights, ordo_recipe_source_name and ordo__step_shares.
 * ORDO_INVALID naming what is wrong; *recipe is the caller's
 * (ordo_recipe_free). */
ordo_status ordo__mixture_read(const char *json, size_t len, ordo_recipe **recipe, ordo_error *err);

/* The canonical "schedule" array (a new reference), or NULL without one. */
json_t *ordo__mixture_canonical(const ordo_recipe *recipe);

/* Frees recipe->mix. */
void ordo__mixture_free(ordo_recipe *recipe);

/* The integer shares (summing to exactly ORDO__SHARE_ONE) of every source
 * at `step` (from 1): a pure function of the recipe and the step. */
void ordo__step_shares(const ordo_recipe *recipe, int64_t step, uint64_t *shares);

/* Refuses a shard holding a chunk larger than the recipe's chunk limit
 * (ordo__chunk_limit), naming shard, chunk and both sizes. */
ordo_status ordo__recipe_chunks_fit(const ordo_recipe *recipe, const ordo__shard *shard,
                                    ordo_error *err);

/* Builds every source's flat chunk list and integer shares (plan done). */
ordo_status ordo__recipe_finish_plan(ordo_recipe *recipe, ordo_error *err);

/* Reads the recipe's "tokenizer" (recipe_tokenizer.c): opens the tokenizer
 * file, pinned by SHA-256, and checks its bos and eos are its tokens. */
ordo_status ordo__tokenizer_parse(json_t *root, ordo_recipe *recipe, ordo_error *err);

/* The canonical "tokenizer" of the recipe, a new reference (NULL: out of
 * memory). */
json_t *ordo__tokenizer_canonical(const ordo_recipe *recipe);

/* Frees the recipe's tokenizer and its names. */
void ordo__tokenizer_release(ordo_recipe *recipe);

/* Appends the tokens of `text` (no bos or eos) to `out`. */
ordo_status ordo__tokenize(const ordo_recipe *recipe, const char *text, size_t len,
                           ordo__tokens *out, ordo_error *err);

/* The same until `out` holds `stop` ids, between pieces (bytes: exactly
 * there): the text's first ids, at least stop - out->count of them when it
 * has so many; *complete 1 when they are all of them. */
ordo_status ordo__tokenize_upto(const ordo_recipe *recipe, const char *text, size_t len,
                                size_t stop, ordo__tokens *out, int *complete, ordo_error *err);

/* A document is packed as [bos] tokens eos: the eos (end-of-text) id, the
 * bos id (ORDO__NO_TOKEN: none), the special tokens each document adds
 * (1 or 2) and the pad id of the recipe's tokenizer. */
uint32_t ordo__eot_id(const ordo_recipe *recipe);
uint32_t ordo__bos_id(const ordo_recipe *recipe);
uint32_t ordo__doc_specials(const ordo_recipe *recipe);
uint32_t ordo__pad_id(const ordo_recipe *recipe);

#endif
