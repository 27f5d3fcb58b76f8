/* Encoding text: UTF-8 repair, the split pattern, merges per piece. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "bpe_merge.h"
#include "piece_cache.h"

/* What is done with each piece: merged into tokens, or (tests) its end
 * offset noted. */
typedef struct {
    const ordo__bpe *bpe;
    ordo__tokens *out;
    int ends_only;
    const char *text;
    ordo__piece_cache *cache; /* the thread's, or NULL */
    uint64_t owner;
    size_t stop; /* no piece is taken once out holds this many ids */
} piece_sink;

/* Merges a piece that is no token (its table hash h), through the
 * thread's piece cache. */
static ordo_status merge_cached(piece_sink *sink, const unsigned char *p, size_t n, uint64_t h,
                                ordo_error *err)
{
    uint32_t ids[ORDO__CACHE_IDS];
    size_t count = ordo__piece_cache_find_hashed(sink->cache, sink->owner, h, p, n, ids);
    if (count) {
        ordo_status status = ordo__tokens_reserve(sink->out, count, err);
        if (status == ORDO_OK) {
            memcpy(sink->out->ids + sink->out->count, ids, count * sizeof *ids);
            sink->out->count += count;
        }
        return status;
    }
    size_t before = sink->out->count;
    ordo_status status = ordo__bpe_merge_parts(sink->bpe, p, n, sink->out, err);
    if (status == ORDO_OK)
        ordo__piece_cache_put_hashed(sink->cache, sink->owner, h, p, n, sink->out->ids + before,
                                     sink->out->count - before);
    return status;
}

/* A piece of 3 or more bytes whose hash came from ordo__bpe_rank_prefetch:
 * one token, or merged through the thread's piece cache when short. */
static ordo_status take_hashed(piece_sink *sink, const unsigned char *p, size_t n, uint64_t h,
                               ordo_error *err)
{
    uint32_t whole = ordo__bpe_rank_of_hash(sink->bpe, p, n, h);
    if (whole != UINT32_MAX)
        return ordo__tokens_push(sink->out, whole, err);
    if (sink->cache && n <= ORDO__CACHE_BYTES)
        return merge_cached(sink, p, n, h, err);
    return ordo__bpe_merge_parts(sink->bpe, p, n, sink->out, err);
}

static ordo_status take_piece(piece_sink *sink, const unsigned char *p, size_t n, ordo_error *err)
{
    if (sink->ends_only)
        return ordo__tokens_push(sink->out, (uint32_t)((const char *)p + n - sink->text), err);
    if (n >= 3) /* shorter: two table reads */
        return take_hashed(sink, p, n, ordo__bpe_rank_prefetch(sink->bpe, p, n, sink->cache), err);
    return ordo__bpe_merge(sink->bpe, p, n, sink->out, err);
}

static ordo_status split_and_merge(const pcre2_code *pattern, const char *text, size_t len,
                                   piece_sink *sink, int *done, ordo_error *err)
{
    pcre2_match_data *match = pcre2_match_data_create(2, NULL);
    if (!match)
        return ordo__error(err, ORDO_NOMEM, "out of memory tokenizing");
    ordo_status status = ORDO_OK;
    PCRE2_SIZE at = 0;
    while (status == ORDO_OK && at < len && sink->out->count < sink->stop) {
        int rc =
            pcre2_jit_match(pattern, (PCRE2_SPTR)text, len, at, PCRE2_NO_UTF_CHECK, match, NULL);
        if (rc == PCRE2_ERROR_JIT_BADOPTION) /* not compiled by the JIT: the interpreter */
            rc = pcre2_match(pattern, (PCRE2_SPTR)text, len, at, PCRE2_NO_UTF_CHECK, match, NULL);
        if (rc == PCRE2_ERROR_NOMATCH) {
            at = len; /* cannot happen: the patterns cover every character */
            break;
        }
        if (rc < 0) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(rc, message, sizeof message);
            status = ordo__error(err, ORDO_INVALID, "split pattern failed at byte %zu: %s",
                                 (size_t)at, (const char *)message);
            break;
        }
        PCRE2_SIZE *ovector = pcre2_get_ovector_pointer(match);
        if (ovector[1] <= ovector[0]) { /* an empty match: step one character */
            at = ovector[0] + 1;
            while (at < len && ((unsigned char)text[at] & 0xC0) == 0x80)
                at++;
            continue;
        }
        status = take_piece(sink, (const unsigned char *)text + ovector[0], ovector[1] - ovector[0],
                            err);
        at = ovector[1];
    }
    pcre2_match_data_free(match);
    *done = at >= len;
    return status;
}

typedef size_t (*scan_fn)(const ordo__unicode_table *, const unsigned char *, size_t, size_t);

/* A piece scanned ahead of its turn: where it is and its hash (pieces of
 * 3 or more bytes; their lookups' memory starts loading when scanned). */
#define AHEAD 4
typedef struct {
    size_t at, end;
    uint64_t hash;
} upcoming;

static size_t look_ahead(const piece_sink *sink, const ordo__unicode_table *u, scan_fn scan,
                         const unsigned char *s, size_t len, size_t at, upcoming *next)
{
    next->at = at;
    next->end = scan(u, s, len, at);
    size_t n = next->end - at;
    next->hash =
        n >= 3 && !sink->ends_only ? ordo__bpe_rank_prefetch(sink->bpe, s + at, n, sink->cache) : 0;
    return next->end;
}

/* Encodes with the encoding's scanner, which runs AHEAD pieces ahead of
 * the merges so each piece's lookups have started loading by its turn;
 * the pieces are still taken one by one in order, and none once out holds
 * sink->stop ids. */
static ordo_status scan_and_merge(const ordo__bpe *bpe, const char *text, size_t len,
                                  piece_sink *sink, int *done, ordo_error *err)
{
    const ordo__unicode_table *u = ordo__unicode();
    if (!u)
        return ordo__error(err, ORDO_NOMEM, "out of memory building the Unicode table");
    scan_fn scan = ordo__bpe_encoding(bpe)->scan;
    const unsigned char *s = (const unsigned char *)text;
    ordo_status status = ORDO_OK;
    size_t at = 0;
    upcoming ring[AHEAD];
    size_t head = 0, queued = 0, scanned = 0;
    for (; queued < AHEAD && scanned < len; queued++)
        scanned = look_ahead(sink, u, scan, s, len, scanned, &ring[queued]);
    while (status == ORDO_OK && queued && sink->out->count < sink->stop) {
        const upcoming *next = &ring[head];
        size_t n = next->end - next->at;
        status = n >= 3 && !sink->ends_only ? take_hashed(sink, s + next->at, n, next->hash, err)
                                            : take_piece(sink, s + next->at, n, err);
        at = next->end;
        head = (head + 1) % AHEAD;
        queued--;
        if (scanned < len)
            scanned = look_ahead(sink, u, scan, s, len, scanned, &ring[(head + queued++) % AHEAD]);
    }
    *done = at >= len;
    return status;
}

/* Encodes ordinary text; see tokenizer.h. */
ordo_status ordo__bpe_encode_with(const ordo__bpe *bpe, const void *pattern, const char *text,
                                  size_t len, size_t stop, ordo__tokens *out, int *complete,
                                  ordo_error *err)
{
    char *copy = NULL;
    size_t copy_len = 0;
    ordo_status status = ordo__utf8_repair(text, len, &copy, &copy_len, err);
    if (status != ORDO_OK)
        return status;
    const char *valid = copy ? copy : text;
    size_t valid_len = copy ? copy_len : len;
    piece_sink sink = {bpe, out, 0, valid, ordo__piece_cache_get(), ordo__bpe_cache_owner(bpe),
                       stop};
    int done = 1;
    status = pattern ? split_and_merge(pattern, valid, valid_len, &sink, &done, err)
                     : scan_and_merge(bpe, valid, valid_len, &sink, &done, err);
    if (complete)
        *complete = done;
    free(copy);
    return status;
}

/* Piece ends of valid UTF-8 text; see bpe_merge.h. */
ordo_status ordo__bpe_split_with(const ordo__bpe *bpe, const void *pattern, const char *text,
                                 size_t len, ordo__tokens *ends, ordo_error *err)
{
    piece_sink sink = {bpe, ends, 1, text, NULL, 0, SIZE_MAX};
    int done;
    return pattern ? split_and_merge(pattern, text, len, &sink, &done, err)
                   : scan_and_merge(bpe, text, len, &sink, &done, err);
}
