/* tokenizer.json internals (hf_*.c): string and pair hash tables, the BPE
 * model, the added tokens and the decoder. Only the files of the
 * tokenizer.json loader include this. */
#ifndef ORDO_HF_MODEL_H
#define ORDO_HF_MODEL_H

#include <string.h>

#include "hf.h"

#define ORDO__HF_NONE UINT32_MAX

/* A byte string inside a blob someone else owns. */
typedef struct ordo__hf_str {
    const char *p;
    uint32_t n;
} ordo__hf_str;

/* An open-addressing table from byte strings to ids; the key of id i is
 * keys[i] (the table does not own them). Lookups never depend on the
 * order of insertion. */
typedef struct ordo__hf_map {
    const ordo__hf_str *keys;
    uint64_t *slots; /* hash's high half << 32 | id; UINT64_MAX when empty */
    size_t mask;
} ordo__hf_map;

/* Sizes the table for `count` keys of `keys`. */
ordo_status ordo__hf_map_init(ordo__hf_map *m, const ordo__hf_str *keys, size_t count,
                              ordo_error *err);

/* Inserts id (its key is keys[id]); returns the id already holding an
 * equal key (then nothing is inserted), or ORDO__HF_NONE. */
uint32_t ordo__hf_map_put(ordo__hf_map *m, uint32_t id);

/* The id whose key is s[0..n), or ORDO__HF_NONE. */
uint32_t ordo__hf_map_get(const ordo__hf_map *m, const char *s, size_t n);

void ordo__hf_map_free(ordo__hf_map *m);

/* Merges by pair of ids (hf_merges.c): an open-addressing table from a
 * pair to its rank (its index in "merges"), the merged id of each rank in
 * ids[]. A slot is one 64-bit word, pair << rank_bits | rank, when the
 * bits of two ids and a rank fit in 63 (every published vocab: Gemma 3's
 * 515k merges make an 8 MB table, not 16); else two words, pair then
 * rank (wide). UINT64_MAX is an empty slot. */
typedef struct ordo__hf_merges {
    uint64_t *slots;
    uint64_t *filter; /* a bit per pair hash, 8 bits a merge: most pairs that do not
                         merge stop here, in cache, not in the table */
    unsigned filter_shift;
    uint32_t *ids; /* by rank: the merged id */
    size_t cap;    /* slots (any size: a slot is picked by multiply-shift) */
    unsigned id_bits, rank_bits;
    uint64_t rank_mask;
    int wide;
} ordo__hf_merges;

/* Sizes the table for `count` merges of ids below `vocab`; wide forces
 * the two-word layout (tests compare both). */
ordo_status ordo__hf_merges_init(ordo__hf_merges *m, size_t count, uint32_t vocab, int wide,
                                 ordo_error *err);

/* Sets the merge of (left, right): rank and merged id; a later put of the
 * same pair replaces the earlier one, as the library's map does. */
void ordo__hf_merges_put(ordo__hf_merges *m, uint32_t left, uint32_t right, uint32_t rank,
                         uint32_t id);

/* Slot i's pair in *left, *right: 0 when the slot is empty. */
int ordo__hf_merges_at(const ordo__hf_merges *m, size_t i, uint32_t *left, uint32_t *right);

void ordo__hf_merges_free(ordo__hf_merges *m);

/* The slot a pair's search starts at: the high half of the product
 * depends on every bit of both ids, and times cap picks a slot. */
static inline size_t ordo__hf_merge_slot(uint64_t key, size_t cap)
{
    return (size_t)((((key * 0x9E3779B97F4A7C15ull) >> 32) * (uint64_t)cap) >> 32);
}

/* The filter bit of pair key (set for every listed merge). */
static inline uint64_t ordo__hf_merge_bit(const ordo__hf_merges *m, uint64_t key)
{
    return (key * 0xC2B2AE3D27D4EB4Full) >> m->filter_shift;
}

/* Whether the filter lets pair key through (no merge when it does not). */
static inline int ordo__hf_merge_maybe(const ordo__hf_merges *m, uint64_t key)
{
    uint64_t bit = ordo__hf_merge_bit(m, key);
    return (int)(m->filter[bit >> 6] >> (bit & 63) & 1);
}

/* Functions that only prefetch must be inlined where they are called:
 * GCC takes a call of one (no result, no side effect) as dead code. */
#if defined(__GNUC__)
#define ORDO__HF_INLINE static inline __attribute__((always_inline))
#else
#define ORDO__HF_INLINE static inline
#endif

/* A lookup in two halves, for callers with other work to do while its
 * memory loads: ordo__hf_merge_start computes where the pair's filter
 * bit and first slot are and starts loading both, ordo__hf_merge_finish
 * reads them (the rank, or ORDO__HF_NONE). The slot is loaded whatever
 * the filter says: waiting for the filter word to decide stalled the
 * merge (Gemma 3 +7.5% without), so that the misses of a word's pairs
 * overlap instead of following one another. */
typedef struct ordo__hf_probe {
    uint64_t key, bit;
    size_t slot;
} ordo__hf_probe;

ORDO__HF_INLINE ordo__hf_probe ordo__hf_merge_start(const ordo__hf_merges *m, uint32_t left,
                                                    uint32_t right)
{
    ordo__hf_probe p;
    p.key = (uint64_t)left << m->id_bits | right;
    p.bit = ordo__hf_merge_bit(m, p.key);
    p.slot = ordo__hf_merge_slot(p.key, m->cap);
#if defined(__GNUC__)
    __builtin_prefetch(&m->filter[p.bit >> 6]);
    __builtin_prefetch(m->slots + (m->wide ? 2 * p.slot : p.slot));
#endif
    return p;
}

/* ordo__hf_merge_start for a pair that will be looked up whole
 * (ordo__hf_merge_rank) later. */
ORDO__HF_INLINE void ordo__hf_merge_prefetch(const ordo__hf_merges *m, uint32_t left,
                                             uint32_t right)
{
    (void)ordo__hf_merge_start(m, left, right);
}

/* The rank of pair key from its first slot i on, or ORDO__HF_NONE (the
 * filter has let it through). */
static inline uint32_t ordo__hf_merge_probe(const ordo__hf_merges *m, uint64_t key, size_t i)
{
    if (!m->wide)
        for (;;) { /* an empty slot never matches: the key has at most 63 - rank_bits bits */
            uint64_t slot = m->slots[i];
            if (slot >> m->rank_bits == key)
                return (uint32_t)(slot & m->rank_mask);
            if (slot == UINT64_MAX)
                return ORDO__HF_NONE;
            if (++i == m->cap)
                i = 0;
        }
    for (;;) {
        const uint64_t *slot = &m->slots[2 * i];
        if (slot[0] == key)
            return (uint32_t)slot[1];
        if (slot[0] == UINT64_MAX)
            return ORDO__HF_NONE;
        if (++i == m->cap)
            i = 0;
    }
}

/* The rank of the merge of (left, right), or ORDO__HF_NONE. */
static inline uint32_t ordo__hf_merge_rank(const ordo__hf_merges *m, uint32_t left, uint32_t right)
{
    uint64_t key = (uint64_t)left << m->id_bits | right;
    if (!ordo__hf_merge_maybe(m, key))
        return ORDO__HF_NONE;
    return ordo__hf_merge_probe(m, key, ordo__hf_merge_slot(key, m->cap));
}

static inline uint32_t ordo__hf_merge_finish(const ordo__hf_merges *m, const ordo__hf_probe *p)
{
    if (!(m->filter[p->bit >> 6] >> (p->bit & 63) & 1))
        return ORDO__HF_NONE;
    return ordo__hf_merge_probe(m, p->key, p->slot);
}

/* Length of the UTF-8 character at s[0] (the text is valid UTF-8);
 * *cp gets its code point. */
static inline size_t ordo__hf_utf8(const unsigned char *s, uint32_t *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] < 0xE0) {
        *cp = (uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F);
        return 2;
    }
    if (s[0] < 0xF0) {
        *cp = (uint32_t)(s[0] & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
        return 3;
    }
    *cp = (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 |
          (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
    return 4;
}

/* The BPE model (hf_bpe.c builds it, hf_bpe_merge.c runs it). */
typedef struct ordo__hf_bpe {
    uint32_t count;       /* ids 0..count-1: one more than the vocab's largest */
    uint32_t entries;     /* the vocab's tokens (fewer when it skips ids) */
    int nul_keys;         /* vocab keys hold U+FDD0 for U+0000 (hf_json_keys.c) */
    char *blob;           /* the vocab's strings */
    ordo__hf_str *tokens; /* by id; p NULL for an id the vocab skips */
    ordo__hf_map vocab;   /* string -> id */
    ordo__hf_merges merges;
    /* Bit id of left: the id is the left token of some merge; of right:
     * the right one (most pairs, of bytes or unknowns, are then ruled out
     * without a probe of the table). */
    uint64_t *left, *right;
    char *prefix, *suffix; /* NULL when absent or empty */
    size_t prefix_len, suffix_len;
    uint32_t unk; /* ORDO__HF_NONE: no unk_token */
    int fuse_unk, byte_fallback, ignore_merges;
    uint32_t fallback[256]; /* ids of <0xXX>, ORDO__HF_NONE when missing */
    /* Pieces are raw bytes (ByteLevel ends the pre-tokenizer). */
    int byte_level;
    /* byte_level, no prefix or suffix, and every byte's character in the
     * vocab: the model runs on bytes directly. */
    int fast;
    uint32_t byte_id[256];
    char *bytes_blob;      /* byte_level: each token's bytes */
    ordo__hf_str *bytes;   /* by id; n 0 when not made of byte characters */
    ordo__hf_map by_bytes; /* raw bytes -> id (ignore_merges) */
    /* Long words split before U+2581 where no merge can join across
     * (hf_bpe_word.c): set when there is no prefix, suffix or
     * ignore_merges and U+2581 is a token; ends[] are the last code points
     * of the left tokens of merges whose right token starts with U+2581. */
    int split_words;
    /* Single-character tokens by code point (open addressing; cp 0 with
     * id NONE is empty), for the characters of a word. */
    struct ordo__hf_char_id {
        uint32_t cp, id;
    } * chars;
    size_t chars_mask;
    uint32_t *ends;
    size_t ends_count;
    uint64_t owner; /* its number in the piece cache (piece_cache.h) */
} ordo__hf_bpe;

/* GPT-2's ByteLevel table: printable Latin-1 bytes are their own
 * character, the other 68 become U+0100.. in byte order. */
void ordo__hf_byte_level_table(uint32_t cp[256]);

/* The id of the token that is code point cp alone, or ORDO__HF_NONE. */
static inline uint32_t ordo__hf_char_id(const ordo__hf_bpe *b, uint32_t cp)
{
    size_t i = (size_t)((cp * 0x9E3779B1u) >> 7) & b->chars_mask;
    for (;; i = (i + 1) & b->chars_mask) {
        if (b->chars[i].id == ORDO__HF_NONE)
            return ORDO__HF_NONE;
        if (b->chars[i].cp == cp)
            return b->chars[i].id;
    }
}

/* Whether a pair can merge as far as its ids' bits tell (0: the left id
 * ends no merge or the right one starts none); then the rank of its
 * merge, or ORDO__HF_NONE, the table probed only for pairs the bits let
 * through. */
static inline int ordo__hf_pair_may_merge(const ordo__hf_bpe *b, uint32_t left, uint32_t right)
{
    return (b->left[left >> 6] >> (left & 63) & 1) && (b->right[right >> 6] >> (right & 63) & 1);
}

static inline uint32_t ordo__hf_pair_rank(const ordo__hf_bpe *b, uint32_t left, uint32_t right)
{
    if (!ordo__hf_pair_may_merge(b, left, right))
        return ORDO__HF_NONE;
    return ordo__hf_merge_rank(&b->merges, left, right);
}

/* Builds the model from the "model" object; `what` names the file.
 * byte_level: the pre-tokenizer hands raw bytes; nul_keys: the text was
 * rewritten by ordo__hf_json_nul_keys, so vocab keys hold U+FDD0 for
 * U+0000. *out is the caller's (ordo__hf_bpe_free). */
ordo_status ordo__hf_bpe_parse(const json_t *model, int byte_level, int nul_keys, const char *what,
                               ordo__hf_bpe **out, ordo_error *err);

/* The JSON text of `what` to give Jansson (hf_json_keys.c): when object
 * keys hold the escape \u0000, which Jansson cannot hold in a key, *copy
 * (the caller's, free) is the text with each such escape made \uFDD0;
 * else NULL. A file whose keys also hold U+FDD0 is refused. */
ordo_status ordo__hf_json_nul_keys(const char *json, size_t len, const char *what, char **copy,
                                   ordo_error *err);

/* A key of the rewritten text made the file's again in place (U+FDD0 to
 * U+0000); its new length. */
size_t ordo__hf_json_key_restore(char *key, size_t len);

/* Reads "vocab" (hf_bpe_vocab.c): ids 0..count-1, each once. */
ordo_status ordo__hf_bpe_vocab(ordo__hf_bpe *b, const json_t *vocab, const char *what,
                               ordo_error *err);

/* Reads "merges" (hf_bpe_vocab.c), both forms. */
ordo_status ordo__hf_bpe_merges(ordo__hf_bpe *b, const json_t *merges, const char *what,
                                ordo_error *err);

void ordo__hf_bpe_free(ordo__hf_bpe *b);

/* Working memory of encoding (hf_scratch.c): each thread keeps one
 * across calls, so a short text costs no allocation. */
typedef struct ordo__hf_scratch {
    uint32_t *ids, *prev, *next, *ranks;
    struct ordo__hf_heap_entry *heap;
    size_t cap, heap_cap;
    ordo__text chars; /* a piece as characters, a composed symbol */
    ordo__text symbol;
    ordo__text normal;               /* a stretch's normalized text (hf_encode.c) */
    struct ordo__piece_cache *cache; /* the thread's (piece_cache.h), or NULL */
    struct ordo__hf_batch *batch;    /* words merged side by side (hf_bpe_batch.c) */
} ordo__hf_scratch;

/* Frees what s holds and empties it. */
void ordo__hf_scratch_free(ordo__hf_scratch *s);

/* The calling thread's scratch, emptied of any word left queued and with
 * the thread's piece cache set; `spare` (zeroed here) when the thread has
 * none and none can be made. Give it back with ordo__hf_scratch_return
 * before the next take on this thread. */
ordo__hf_scratch *ordo__hf_scratch_take(ordo__hf_scratch *spare);

/* Ends a use of s: frees spare's memory, or all of the thread's when
 * any of it grew large (kept for the next call otherwise). */
void ordo__hf_scratch_return(ordo__hf_scratch *s, ordo__hf_scratch *spare);

/* Room for n symbols in ids/prev/next/ranks. */
ordo_status ordo__hf_scratch_reserve(ordo__hf_scratch *s, size_t n, ordo_error *err);

/* Merges the symbols s->ids[0..n) as Word::merge_all does and appends
 * the resulting ids to out (hf_bpe_merge.c). */
ordo_status ordo__hf_bpe_merge_emit(const ordo__hf_bpe *b, ordo__hf_scratch *s, size_t n,
                                    ordo__tokens *out, ordo_error *err);

/* Words of at most this many symbols are merged by scanning an array
 * (longer ones by a heap). */
#define ORDO__HF_SHORT_WORD 48

/* The lowest of ranks[0..pairs) (ORDO__HF_NONE when none or all are) and
 * in *at its leftmost position; without branches (the comparisons of a
 * scan by branches mispredict: 4.7% of Gemma 3's time). */
static inline uint32_t ordo__hf_lowest(const uint32_t *ranks, size_t pairs, size_t *at)
{
    uint64_t lowest = UINT64_MAX;
    for (size_t i = 0; i < pairs; i++) {
        uint64_t key = (uint64_t)ranks[i] << 32 | i;
        lowest = key < lowest ? key : lowest;
    }
    *at = (uint32_t)lowest;
    return (uint32_t)(lowest >> 32);
}

/* Room an array of a short word needs past its symbols for
 * ordo__hf_close_gap's moves of four. */
#define ORDO__HF_SLACK 4

/* After the merge at `at` of a short word of n symbols: drops ids[at + 1]
 * and ranks[at + 1] (ranks[i] is the pair (i, i + 1)'s), moving what
 * follows down one, four at a time by fixed-size copies (a call of
 * memmove per merge cost 4% of Gemma 3's time). Both arrays have n +
 * ORDO__HF_SLACK entries of room; what lies past the word afterwards is
 * not meaningful. */
static inline void ordo__hf_close_gap(uint32_t *ids, uint32_t *ranks, size_t at, size_t n)
{
    for (size_t j = at + 1; j + 1 < n; j += 4) {
        uint32_t moved_ids[4], moved_ranks[4];
        memcpy(moved_ids, ids + j + 1, sizeof moved_ids);
        memcpy(moved_ranks, ranks + j + 1, sizeof moved_ranks);
        memcpy(ids + j, moved_ids, sizeof moved_ids);
        memcpy(ranks + j, moved_ranks, sizeof moved_ranks);
    }
}

/* ---- merging several short words side by side (hf_bpe_batch.c) --------
 * The merges of one word follow one another, each waiting for the table
 * lookups of the one before (most of them cache misses in a large
 * table); words queued here are merged a step of each in turn, so the
 * misses of different words overlap. Results come out in queue order. */

/* Queues the symbols ids[0..n) (n <= ORDO__HF_SHORT_WORD) of piece[0..len)
 * (kept for the piece cache under `hash`, ordo__piece_cache_hash of it
 * when it is short enough to cache; the caller keeps it alive until the
 * flush), or, ids already known (done), count ids to append as they are.
 * Flushes when the queue is full. */
ordo_status ordo__hf_batch_add(const ordo__hf_bpe *b, ordo__hf_scratch *s, const char *piece,
                               size_t len, uint64_t hash, const uint32_t *ids, size_t n, int done,
                               ordo__tokens *out, ordo_error *err);

/* Drops what is queued (left there by an error). */
void ordo__hf_batch_clear(ordo__hf_scratch *s);

/* Merges what is queued and appends every queued word's ids in order. */
ordo_status ordo__hf_batch_flush(const ordo__hf_bpe *b, ordo__hf_scratch *s, ordo__tokens *out,
                                 ordo_error *err);

/* Nothing queued. */
int ordo__hf_batch_empty(const ordo__hf_scratch *s);

/* Appends the ids of one non-empty piece, as the library's BPE does. */
ordo_status ordo__hf_bpe_piece(const ordo__hf_bpe *b, const char *piece, size_t len,
                               ordo__hf_scratch *s, ordo__tokens *out, ordo_error *err);

/* ---- added tokens (hf_added.c) ---------------------------------------- */

typedef struct ordo__hf_added_token {
    char *content;
    size_t len;
    char *pattern; /* what is matched: content, or its normalized form */
    size_t pattern_len;
    uint32_t id;
    unsigned char special, normalized, lstrip, rstrip;
} ordo__hf_added_token;

typedef struct ordo__hf_trie ordo__hf_trie;

/* A byte trie of patterns (hf_added_match.c); NULL when out of memory. */
ordo__hf_trie *ordo__hf_trie_new(void);
void ordo__hf_trie_free(ordo__hf_trie *t);

/* Adds a non-empty pattern for token index `token`: ORDO__HF_NONE when
 * added, the index of the token already holding it, or token itself when
 * out of memory (*nomem set). */
uint32_t ordo__hf_trie_add(ordo__hf_trie *t, const char *pattern, size_t len, uint32_t token,
                           int *nomem);

typedef struct ordo__hf_added {
    ordo__hf_added_token *tokens;
    size_t count;
    ordo__hf_trie *raw, *normalized; /* NULL when nothing to match */
} ordo__hf_added;

/* Reads "added_tokens" and gives each its id as the library does (the id
 * of its content in the vocab, else the next one after the vocab);
 * patterns of normalized tokens go through `normalizer`. */
ordo_status ordo__hf_added_parse(const json_t *json, const ordo__hf_bpe *bpe,
                                 const ordo__hf_normalizer *normalizer, const char *what,
                                 ordo__hf_added *out, ordo_error *err);

void ordo__hf_added_free(ordo__hf_added *a);

/* Receives a stretch of text (id ORDO__HF_NONE) or a matched token. */
typedef ordo_status (*ordo__hf_split_fn)(void *context, const char *text, size_t len, uint32_t id,
                                         ordo_error *err);

/* Splits text around the added tokens of one trie, leftmost-longest, with
 * lstrip/rstrip as the library applies them; empty stretches are skipped. */
ordo_status ordo__hf_added_split(const ordo__hf_added *a, const ordo__hf_trie *trie,
                                 const char *text, size_t len, ordo__hf_split_fn fn, void *context,
                                 ordo_error *err);

/* ---- the decoder (hf_decode.c) ---------------------------------------- */

typedef struct ordo__hf_decoder ordo__hf_decoder;

enum ordo__hf_decode_kind {
    ORDO__HF_DECODE_BYTE_LEVEL,
    ORDO__HF_DECODE_REPLACE,
    ORDO__HF_DECODE_BYTE_FALLBACK,
    ORDO__HF_DECODE_FUSE,
    ORDO__HF_DECODE_STRIP,
    ORDO__HF_DECODE_METASPACE
};

typedef struct ordo__hf_decode_step {
    enum ordo__hf_decode_kind kind;
    char *from, *to; /* Replace; Strip and Metaspace: the character in from */
    size_t from_len, to_len;
    size_t start, stop; /* Strip */
    int prepend;        /* Metaspace: prepend_scheme is not "never" */
} ordo__hf_decode_step;

struct ordo__hf_decoder {
    ordo__hf_decode_step *steps;
    size_t count, cap;
};

ordo_status ordo__hf_decoder_parse(const json_t *json, const char *what, ordo__hf_decoder **out,
                                   ordo_error *err);

void ordo__hf_decoder_free(ordo__hf_decoder *d);

/* Appends one token's text through the decoder; a *buffer still NULL
 * means the token is the first of its sequence (Metaspace, and a Strip
 * after Fuse, treat it so). */
ordo_status ordo__hf_decoder_apply(const ordo__hf_decoder *d, const char *token, size_t len,
                                   char **buffer, size_t *used, size_t *capacity, ordo_error *err);

/* ---- the whole ---------------------------------------------------------- */

struct ordo__hf {
    ordo__hf_normalizer *normalizer;
    ordo__hf_pretokenizer *pretokenizer;
    ordo__hf_bpe *bpe;
    ordo__hf_added added;
    ordo__hf_decoder *decoder;
    uint32_t size;         /* one more than the largest id */
    uint32_t *added_of_id; /* size entries: index in added.tokens, or NONE */
};

/* A printable rendering of a token for messages (at most 40 bytes,
 * control bytes as \xNN) in buf. */
const char *ordo__hf_quote(const char *s, size_t n, char buf[200]);

#endif
