/* A tiktoken-compatible byte-level BPE tokenizer: rank files, the
 * encodings' split patterns (PCRE2 JIT), merges by lowest rank. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"
#include "bpe_merge.h"
#include "piece_cache.h"
#include "pretokenize.h"
#include "unicode_classes.h"

/* The published patterns, with every Unicode class spelled out from
 * Unicode 16.0 (unicode_classes.h): `\s` is White_Space as in tiktoken's
 * engine, and letters and numbers assigned after PCRE2's Unicode 14 are
 * classified as tiktoken classifies them. */
#define L_ ORDO_U_L
#define N_ ORDO_U_N
#define WS_ ORDO_U_WS
#define UPPERISH ORDO_U_LU ORDO_U_LT ORDO_U_LM ORDO_U_LO ORDO_U_M
#define LOWERISH ORDO_U_LL ORDO_U_LM ORDO_U_LO ORDO_U_M
#define GPT2_PATTERN                                                                               \
    "'(?:[sdmt]|ll|ve|re)| ?[" L_ "]++| ?[" N_ "]++| ?[^" WS_ L_ N_ "]++|[" WS_ "]++$|[" WS_       \
    "]+(?![^" WS_ "])|[" WS_ "]"
#define CL100K_PATTERN                                                                             \
    "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n" L_ N_ "]?+[" L_ "]++|[" N_ "]{1,3}+| ?[^" WS_ L_ N_           \
    "]++[\\r\\n]*+|[" WS_ "]++$|[" WS_ "]*[\\r\\n]|[" WS_ "]+(?![^" WS_ "])|[" WS_ "]"
/* Llama 3: Meta's reference tokenizer's pattern, cl100k's but for the
 * whitespace alternatives (no \s++$; \s*[\r\n]+; a final \s+). */
#define LLAMA3_PATTERN                                                                             \
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n" L_ N_ "]?[" L_ "]+|[" N_ "]{1,3}| ?[^" WS_ L_ N_       \
    "]+[\\r\\n]*|[" WS_ "]*[\\r\\n]+|[" WS_ "]+(?![^" WS_ "])|[" WS_ "]+"
#define O200K_CONTRACTIONS "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
#define O200K_PATTERN                                                                              \
    "[^\\r\\n" L_ N_ "]?[" UPPERISH "]*[" LOWERISH "]+" O200K_CONTRACTIONS "|[^\\r\\n" L_ N_       \
    "]?[" UPPERISH "]+[" LOWERISH "]*" O200K_CONTRACTIONS "|[" N_ "]{1,3}| ?[^" WS_ L_ N_          \
    "]+[\\r\\n/]*|[" WS_ "]*[\\r\\n]+|[" WS_ "]+(?![^" WS_ "])|[" WS_ "]+"

static const ordo__encoding encodings[] = {
    {"gpt2", GPT2_PATTERN, 50256, 50256, 50256, 50257, NULL},
    {"r50k_base", GPT2_PATTERN, 50256, 50256, 50256, 50257, NULL},
    {"p50k_base", GPT2_PATTERN, 50280, 50281, 50256, 50281, NULL},
    {"cl100k_base", CL100K_PATTERN, 100256, 100256, 100257, 100277, ordo__cl100k_piece},
    {"o200k_base", O200K_PATTERN, 199998, 199998, 199999, 200019, ordo__o200k_piece},
    {"llama3", LLAMA3_PATTERN, 128000, 128000, 128001, 128256, ordo__llama3_piece},
};

/* A table slot holds the token's first 8 bytes, so most lookups touch one
 * cache line. */
#define FILTER_BITS ((uint64_t)1 << 21)

struct rank_slot {
    uint64_t head;          /* first 8 bytes, zero-padded, little-endian */
    uint32_t rank_plus_one; /* 0: empty */
    uint32_t length;
};

/* One token's bytes: where they sit in the blob. */
typedef struct {
    uint32_t offset;
    uint32_t length;
} token_bytes;

struct ordo__bpe {
    const ordo__encoding *encoding;
    char *blob;          /* every token's bytes */
    token_bytes *tokens; /* by rank */
    uint32_t count;
    struct rank_slot *table; /* open addressing; rank_plus_one 0 is empty */
    uint64_t *filter;        /* FILTER_BITS bits, one per token hash: most strings that are
                                no token are refused here, in cache */
    uint64_t mask;
    uint32_t max_length; /* the longest token's bytes */
    uint32_t byte_rank[256];
    uint32_t *pair_rank;   /* 65536: rank of each two-byte string */
    ordo__bpe_pairs pairs; /* token pair to merged token (bpe_pairs.c) */
    pcre2_code *pattern;
    uint64_t cache_owner; /* its number in the per-thread piece caches */
};

const ordo__encoding *ordo__encoding_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof encodings / sizeof encodings[0]; i++)
        if (strcmp(encodings[i].name, name) == 0)
            return &encodings[i];
    return NULL;
}

/* The encodings' names from the table; see ordo.h. */
size_t ordo_tokenizer_encodings(char *buffer, size_t size)
{
    size_t count = sizeof encodings / sizeof encodings[0], length = 0;
    if (size)
        buffer[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        const char *glue = i == 0 ? "" : i + 1 == count ? " or " : ", ";
        int n = snprintf(buffer + (length < size ? length : size),
                         length < size ? size - length : 0, "%s%s", glue, encodings[i].name);
        length += n > 0 ? (size_t)n : 0;
    }
    return length;
}

const ordo__encoding *ordo__bpe_encoding(const ordo__bpe *bpe)
{
    return bpe->encoding;
}

/* Ranks the rank file spans; see bpe_merge.h. */
uint32_t ordo__bpe_count(const ordo__bpe *bpe)
{
    return bpe->count;
}

/* A rank's bytes; see bpe_merge.h. */
const unsigned char *ordo__bpe_token_bytes(const ordo__bpe *bpe, uint32_t r, size_t *len)
{
    *len = bpe->tokens[r].length;
    return (const unsigned char *)bpe->blob + bpe->tokens[r].offset;
}

/* The merge table and the short strings' ranks; see bpe_merge.h. */
const ordo__bpe_pairs *ordo__bpe_pairs_of(const ordo__bpe *bpe)
{
    return &bpe->pairs;
}

const uint32_t *ordo__bpe_byte_ranks(const ordo__bpe *bpe)
{
    return bpe->byte_rank;
}

const uint32_t *ordo__bpe_pair_ranks(const ordo__bpe *bpe)
{
    return bpe->pair_rank;
}

/* The tokenizer's owner number in the piece caches; see bpe_merge.h. */
uint64_t ordo__bpe_cache_owner(const ordo__bpe *bpe)
{
    return bpe->cache_owner;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ull;
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ull;
    x ^= x >> 32;
    return x;
}

static uint64_t head_of(const unsigned char *p, size_t n)
{
    uint64_t w = 0;
    if (n >= 8) {
        memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        return w;
    }
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)p[i] << (8 * i);
    return w;
}

/* A table hash (not a digest): the head word, then the rest in 8-byte
 * words. */
static uint64_t hash_bytes(uint64_t head, const unsigned char *p, size_t n)
{
    uint64_t h = mix(head ^ (0x9e3779b97f4a7c15ull * (n + 1)));
    for (size_t i = 8; i < n; i += 8) {
        uint64_t w = head_of(p + i, n - i < 8 ? n - i : 8);
        h = mix(h ^ w);
    }
    return h;
}

/* The table hash of a string of 3 or more bytes. */
static uint64_t piece_hash(const unsigned char *p, size_t n)
{
    return hash_bytes(head_of(p, n), p, n);
}

/* The rank of a string of 3 or more bytes whose hash is h. */
static uint32_t rank_hashed(const ordo__bpe *bpe, const unsigned char *p, size_t n, uint64_t h)
{
    if (n > bpe->max_length)
        return UINT32_MAX;
    uint64_t head = head_of(p, n), bit = h >> 43;
    if (!(bpe->filter[bit >> 6] >> (bit & 63) & 1))
        return UINT32_MAX;
    for (uint64_t i = h & bpe->mask;; i = (i + 1) & bpe->mask) {
        const struct rank_slot *slot = &bpe->table[i];
        if (!slot->rank_plus_one)
            return UINT32_MAX;
        if (slot->head != head || slot->length != n)
            continue;
        uint32_t rank = slot->rank_plus_one - 1;
        if (n <= 8 || memcmp(bpe->blob + bpe->tokens[rank].offset + 8, p + 8, n - 8) == 0)
            return rank;
    }
}

/* Starts loading what looking up a piece of 3 or more bytes will read;
 * see bpe_merge.h. */
uint64_t ordo__bpe_rank_prefetch(const ordo__bpe *bpe, const unsigned char *p, size_t n,
                                 const ordo__piece_cache *cache)
{
    uint64_t h = piece_hash(p, n), bit = h >> 43;
    __builtin_prefetch(&bpe->filter[bit >> 6]);
    if (n <= bpe->max_length)
        __builtin_prefetch(&bpe->table[h & bpe->mask]);
    if (cache && n <= ORDO__CACHE_BYTES)
        ordo__piece_cache_prefetch_hashed(cache, bpe->cache_owner, h);
    return h;
}

/* The rank of a piece of 3 or more bytes by its hash; see bpe_merge.h. */
uint32_t ordo__bpe_rank_of_hash(const ordo__bpe *bpe, const unsigned char *p, size_t n,
                                uint64_t hash)
{
    return rank_hashed(bpe, p, n, hash);
}

/* The rank of a byte string, or UINT32_MAX. */
uint32_t ordo__bpe_rank(const ordo__bpe *bpe, const unsigned char *p, size_t n)
{
    if (n <= 2)
        return n == 1 ? bpe->byte_rank[p[0]] : bpe->pair_rank[p[0] << 8 | p[1]];
    if (n > bpe->max_length)
        return UINT32_MAX;
    return rank_hashed(bpe, p, n, piece_hash(p, n));
}

void ordo__bpe_free(ordo__bpe *bpe)
{
    if (!bpe)
        return;
    pcre2_code_free(bpe->pattern);
    free(bpe->blob);
    free(bpe->tokens);
    free(bpe->table);
    free(bpe->filter);
    free(bpe->pair_rank);
    ordo__bpe_pairs_free(&bpe->pairs);
    free(bpe);
}

/* One line: base64 SP rank. Returns the decoded length or -1. */
static int parse_line(const char *line, size_t len, unsigned char *out, uint64_t *rank)
{
    const char *space = memchr(line, ' ', len);
    if (!space || space == line || (size_t)(space - line) > 400)
        return -1;
    size_t b64 = (size_t)(space - line);
    int n = ordo__base64_decode_into(line, b64, out);
    if (n < 0)
        return -1;
    char *end = NULL;
    char number[24];
    size_t digits = len - b64 - 1;
    if (digits == 0 || digits >= sizeof number)
        return -1;
    memcpy(number, space + 1, digits);
    number[digits] = '\0';
    *rank = strtoull(number, &end, 10);
    return *end == '\0' && n > 0 ? n : -1;
}

static ordo_status add_token(ordo__bpe *bpe, size_t *blob_size, size_t *blob_cap,
                             const unsigned char *bytes, int n, uint64_t rank, size_t line,
                             const char *path, ordo_error *err)
{
    if (rank >= bpe->count || rank == bpe->encoding->eot || bpe->tokens[rank].length)
        return ordo__error(err, ORDO_INVALID, "rank file '%s' line %zu: rank %llu is %s", path,
                           line, (unsigned long long)rank,
                           rank >= bpe->count ? "out of range" : "listed twice");
    if (*blob_size + (size_t)n > *blob_cap) {
        size_t cap = *blob_cap * 2 + (size_t)n;
        char *grown = realloc(bpe->blob, cap);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory loading '%s'", path);
        bpe->blob = grown;
        *blob_cap = cap;
    }
    memcpy(bpe->blob + *blob_size, bytes, (size_t)n);
    bpe->tokens[rank] = (token_bytes){(uint32_t)*blob_size, (uint32_t)n};
    *blob_size += (size_t)n;
    return ORDO_OK;
}

static ordo_status read_ranks(ordo__bpe *bpe, const char *path, const char *data, size_t size,
                              ordo_error *err)
{
    size_t blob_size = 0, blob_cap = 1 << 20, start = 0, line = 0, seen = 0;
    bpe->blob = malloc(blob_cap);
    bpe->tokens = calloc(bpe->count, sizeof *bpe->tokens);
    if (!bpe->blob || !bpe->tokens)
        return ordo__error(err, ORDO_NOMEM, "out of memory loading '%s'", path);
    unsigned char bytes[320];
    while (start < size) {
        const char *nl = memchr(data + start, '\n', size - start);
        size_t end = nl ? (size_t)(nl - data) : size;
        line++;
        if (end > start) {
            uint64_t rank = 0;
            int n = parse_line(data + start, end - start, bytes, &rank);
            if (n < 0)
                return ordo__error(err, ORDO_INVALID,
                                   "rank file '%s' line %zu is not 'base64 SP rank'", path, line);
            ordo_status status =
                add_token(bpe, &blob_size, &blob_cap, bytes, n, rank, line, path, err);
            if (status != ORDO_OK)
                return status;
            seen++;
        }
        start = end + 1;
    }
    if (seen != bpe->encoding->ranks)
        return ordo__error(err, ORDO_INVALID, "rank file '%s' has %zu ranks, %s needs %u", path,
                           seen, bpe->encoding->name, bpe->encoding->ranks);
    return ORDO_OK;
}

static ordo_status build_table(ordo__bpe *bpe, ordo_error *err)
{
    uint64_t size = 1;
    while (size < (uint64_t)bpe->count * 2)
        size <<= 1;
    bpe->mask = size - 1;
    bpe->table = calloc(size, sizeof *bpe->table);
    bpe->filter = calloc(FILTER_BITS / 64, sizeof *bpe->filter);
    bpe->pair_rank = malloc(65536 * sizeof *bpe->pair_rank);
    if (!bpe->table || !bpe->filter || !bpe->pair_rank)
        return ordo__error(err, ORDO_NOMEM, "out of memory building the rank table");
    for (int b = 0; b < 256; b++)
        bpe->byte_rank[b] = UINT32_MAX;
    for (int b = 0; b < 65536; b++)
        bpe->pair_rank[b] = UINT32_MAX;
    for (uint32_t r = 0; r < bpe->count; r++) {
        const token_bytes *t = &bpe->tokens[r];
        if (t->length == 0) /* the end-of-text hole */
            continue;
        const unsigned char *p = (const unsigned char *)bpe->blob + t->offset;
        if (t->length == 1)
            bpe->byte_rank[p[0]] = r;
        if (t->length == 2)
            bpe->pair_rank[p[0] << 8 | p[1]] = r;
        if (t->length > bpe->max_length)
            bpe->max_length = t->length;
        uint64_t head = head_of(p, t->length), h = hash_bytes(head, p, t->length);
        uint64_t i = h & bpe->mask, bit = h >> 43;
        bpe->filter[bit >> 6] |= (uint64_t)1 << (bit & 63);
        while (bpe->table[i].rank_plus_one)
            i = (i + 1) & bpe->mask;
        bpe->table[i] = (struct rank_slot){head, r + 1, t->length};
    }
    for (int b = 0; b < 256; b++)
        if (bpe->byte_rank[b] == UINT32_MAX)
            return ordo__error(err, ORDO_INVALID, "rank file lacks the single byte 0x%02x", b);
    return ORDO_OK;
}

static ordo_status compile_pattern(ordo__bpe *bpe, ordo_error *err)
{
    int code = 0;
    PCRE2_SIZE offset = 0;
    bpe->pattern =
        pcre2_compile((PCRE2_SPTR)bpe->encoding->pattern, PCRE2_ZERO_TERMINATED,
                      PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &code, &offset, NULL);
    if (!bpe->pattern) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(code, message, sizeof message);
        return ordo__error(err, ORDO_INVALID, "split pattern of %s: %s at %zu", bpe->encoding->name,
                           (const char *)message, (size_t)offset);
    }
    pcre2_jit_compile(bpe->pattern, PCRE2_JIT_COMPLETE); /* falls back to the interpreter */
    return ORDO_OK;
}

/* Loads a rank file; see tokenizer.h. */
ordo_status ordo__bpe_load(const char *path, const ordo__encoding *encoding, ordo__bpe **out,
                           ordo_error *err)
{
    *out = NULL;
    char *data = NULL;
    size_t size = 0;
    ordo_status status = ordo__read_file(path, 64u << 20, &data, &size, err);
    if (status != ORDO_OK)
        return status;
    ordo__bpe *bpe = calloc(1, sizeof *bpe);
    if (!bpe) {
        free(data);
        return ordo__error(err, ORDO_NOMEM, "out of memory loading '%s'", path);
    }
    bpe->encoding = encoding;
    bpe->count = encoding->rank_space;
    bpe->cache_owner = ordo__piece_cache_owner();
    status = read_ranks(bpe, path, data, size, err);
    free(data);
    if (status == ORDO_OK)
        status = build_table(bpe, err);
    if (status == ORDO_OK)
        status = ordo__bpe_pairs_build(&bpe->pairs, bpe, err);
    if (status == ORDO_OK)
        status = compile_pattern(bpe, err);
    if (status != ORDO_OK) {
        ordo__bpe_free(bpe);
        return status;
    }
    *out = bpe;
    return ORDO_OK;
}

/* Appends a token's bytes. */
ordo_status ordo__bpe_decode(const ordo__bpe *bpe, uint32_t id, char **buffer, size_t *len,
                             size_t *capacity, ordo_error *err)
{
    if (id >= bpe->count || bpe->tokens[id].length == 0)
        return ordo__error(err, ORDO_INVALID, "token %u has no bytes in %s", id,
                           bpe->encoding->name);
    const token_bytes *t = &bpe->tokens[id];
    if (*len + t->length > *capacity) {
        size_t cap = *capacity ? *capacity * 2 : 256;
        while (cap < *len + t->length)
            cap *= 2;
        char *grown = realloc(*buffer, cap);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory decoding");
        *buffer = grown;
        *capacity = cap;
    }
    memcpy(*buffer + *len, bpe->blob + t->offset, t->length);
    *len += t->length;
    return ORDO_OK;
}

/* Encodes ordinary text: UTF-8 repair, split, merge (bpe_encode.c). */
ordo_status ordo__bpe_encode(const ordo__bpe *bpe, const char *text, size_t len, ordo__tokens *out,
                             ordo_error *err)
{
    return ordo__bpe_encode_upto(bpe, text, len, SIZE_MAX, out, NULL, err);
}

/* Encodes a prefix of ordinary text, piece by piece; see tokenizer.h. */
ordo_status ordo__bpe_encode_upto(const ordo__bpe *bpe, const char *text, size_t len, size_t stop,
                                  ordo__tokens *out, int *complete, ordo_error *err)
{
    return ordo__bpe_encode_with(bpe, bpe->encoding->scan ? NULL : bpe->pattern, text, len, stop,
                                 out, complete, err);
}

/* Encodes with PCRE2 whatever the encoding's scanner; see tokenizer.h. */
ordo_status ordo__bpe_encode_pcre2(const ordo__bpe *bpe, const char *text, size_t len,
                                   ordo__tokens *out, ordo_error *err)
{
    return ordo__bpe_encode_with(bpe, bpe->pattern, text, len, SIZE_MAX, out, NULL, err);
}

/* Piece ends by scanner or PCRE2; see tokenizer.h. */
ordo_status ordo__bpe_split(const ordo__bpe *bpe, int pcre2, const char *text, size_t len,
                            ordo__tokens *ends, ordo_error *err)
{
    if (!pcre2 && !bpe->encoding->scan)
        return ordo__error(err, ORDO_INVALID, "%s has no scanner", bpe->encoding->name);
    return ordo__bpe_split_with(bpe, pcre2 ? bpe->pattern : NULL, text, len, ends, err);
}
