/* From a piece to the symbols the BPE model merges, as the library's
 * BPE::merge_word builds them; then merging (hf_bpe_merge.c). */
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"
#include "piece_cache.h"

/* ByteLevel pieces are raw bytes: the library sees each byte as its
 * ByteLevel character. */
static ordo_status as_characters(const char *piece, size_t len, ordo__text *chars, ordo_error *err)
{
    uint32_t cp[256];
    ordo__hf_byte_level_table(cp);
    chars->len = 0;
    ordo_status s = ordo__text_append(chars, "", 0, err);
    for (size_t i = 0; s == ORDO_OK && i < len; i++) {
        uint32_t c = cp[(unsigned char)piece[i]];
        char u[2] = {(char)c, 0};
        size_t n = 1;
        if (c >= 0x80) {
            u[0] = (char)(0xC0 | c >> 6);
            u[1] = (char)(0x80 | (c & 0x3F));
            n = 2;
        }
        s = ordo__text_append(chars, u, n, err);
    }
    return s;
}

/* The symbol's id: the vocab's string for the character with the prefix
 * (not first) and the suffix (last) around it. */
static ordo_status lookup_symbol(const ordo__hf_bpe *b, ordo__hf_scratch *s, const char *c,
                                 size_t n, int first, int last, const char **text, size_t *len,
                                 uint32_t *id, ordo_error *err)
{
    *text = c;
    *len = n;
    if ((first || !b->prefix) && (!last || !b->suffix)) { /* the character alone */
        uint32_t cp;
        ordo__hf_utf8((const unsigned char *)c, &cp);
        *id = ordo__hf_char_id(b, cp);
        return ORDO_OK;
    }
    ordo__text *t = &s->symbol;
    t->len = 0;
    ordo_status status = ORDO_OK;
    if (!first && b->prefix)
        status = ordo__text_append(t, b->prefix, b->prefix_len, err);
    if (status == ORDO_OK)
        status = ordo__text_append(t, c, n, err);
    if (status == ORDO_OK && last && b->suffix)
        status = ordo__text_append(t, b->suffix, b->suffix_len, err);
    if (status != ORDO_OK)
        return status;
    *text = t->data;
    *len = t->len;
    *id = ordo__hf_map_get(&b->vocab, *text, *len);
    return ORDO_OK;
}

/* BPE::merge_word's first loop: symbols into s->ids, their count in *n.
 * A pending unknown is only written when a known character or the end
 * comes (byte-fallback bytes do not flush it: the library's order). */
static ordo_status symbols(const ordo__hf_bpe *b, const char *w, size_t len, ordo__hf_scratch *s,
                           size_t *n, ordo_error *err)
{
    size_t k = 0;
    uint32_t unk = ORDO__HF_NONE;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t clen = ordo__hf_utf8((const unsigned char *)w + i, &cp);
        const char *text;
        size_t text_len;
        uint32_t id;
        ordo_status status =
            lookup_symbol(b, s, w + i, clen, i == 0, i + clen >= len, &text, &text_len, &id, err);
        i += clen;
        if (status == ORDO_OK)
            status = ordo__hf_scratch_reserve(s, k + text_len + 2, err);
        if (status != ORDO_OK)
            return status;
        if (id != ORDO__HF_NONE) {
            if (unk != ORDO__HF_NONE)
                s->ids[k++] = unk;
            unk = ORDO__HF_NONE;
            s->ids[k++] = id;
            continue;
        }
        if (b->byte_fallback) {
            size_t j = 0;
            while (j < text_len && b->fallback[(unsigned char)text[j]] != ORDO__HF_NONE)
                j++;
            if (j == text_len) {
                for (j = 0; j < text_len; j++)
                    s->ids[k++] = b->fallback[(unsigned char)text[j]];
                continue;
            }
        }
        if (b->unk != ORDO__HF_NONE) {
            if (unk != ORDO__HF_NONE && !b->fuse_unk)
                s->ids[k++] = unk;
            unk = b->unk;
        }
    }
    if (unk != ORDO__HF_NONE)
        s->ids[k++] = unk;
    *n = k;
    return ORDO_OK;
}

static ordo_status push_one(ordo__tokens *out, uint32_t id, ordo_error *err)
{
    return ordo__tokens_push(out, id, err);
}

static ordo_status uncached(const ordo__hf_bpe *b, const char *piece, size_t len,
                            ordo__hf_scratch *s, ordo__tokens *out, ordo_error *err)
{
    ordo_status status;
    if (b->fast) {
        if (b->ignore_merges) {
            uint32_t whole = ordo__hf_map_get(&b->by_bytes, piece, len);
            if (whole != ORDO__HF_NONE)
                return push_one(out, whole, err);
        }
        if (len == 1)
            return push_one(out, b->byte_id[(unsigned char)piece[0]], err);
        if ((status = ordo__hf_scratch_reserve(s, len, err)) != ORDO_OK)
            return status;
        for (size_t i = 0; i < len; i++)
            s->ids[i] = b->byte_id[(unsigned char)piece[i]];
        return ordo__hf_bpe_merge_emit(b, s, len, out, err);
    }
    if (b->byte_level) {
        if ((status = as_characters(piece, len, &s->chars, err)) != ORDO_OK)
            return status;
        piece = s->chars.data;
        len = s->chars.len;
    }
    if (b->ignore_merges) {
        uint32_t whole = ordo__hf_map_get(&b->vocab, piece, len);
        if (whole != ORDO__HF_NONE)
            return push_one(out, whole, err);
    }
    size_t n = 0;
    if ((status = symbols(b, piece, len, s, &n, err)) != ORDO_OK)
        return status;
    return ordo__hf_bpe_merge_emit(b, s, n, out, err);
}

/* One word through the model, or its ids from the thread's cache (which
 * holds exactly what merging gave). */
static ordo_status cached(const ordo__hf_bpe *b, const char *piece, size_t len, ordo__hf_scratch *s,
                          ordo__tokens *out, ordo_error *err)
{
    if (b->fast && len == 1)
        return push_one(out, b->byte_id[(unsigned char)piece[0]], err);
    if (!s->cache || len > ORDO__CACHE_BYTES)
        return uncached(b, piece, len, s, out, err);
    uint32_t ids[ORDO__CACHE_IDS];
    const unsigned char *bytes = (const unsigned char *)piece;
    uint64_t h = ordo__piece_cache_hash(bytes, len);
    size_t count = ordo__piece_cache_find_hashed(s->cache, b->owner, h, bytes, len, ids);
    ordo_status status;
    if (count) {
        if ((status = ordo__tokens_reserve(out, count, err)) == ORDO_OK) {
            memcpy(out->ids + out->count, ids, count * sizeof *ids);
            out->count += count;
        }
        return status;
    }
    size_t before = out->count;
    status = uncached(b, piece, len, s, out, err);
    if (status == ORDO_OK && out->count > before)
        ordo__piece_cache_put_hashed(s->cache, b->owner, h, bytes, len, out->ids + before,
                                     out->count - before);
    return status;
}

/* A cut before the U+2581 at `at` is safe when the character before it is
 * a token itself and ends no left token of a merge into a U+2581 token:
 * every symbol ending there then ends with that character, so no merge
 * joins the two sides, and a pending unknown is flushed by the U+2581. */
static int cut_before(const ordo__hf_bpe *b, const char *w, size_t at)
{
    size_t start = at - 1;
    while (start > 0 && ((unsigned char)w[start] & 0xC0) == 0x80)
        start--;
    uint32_t cp;
    ordo__hf_utf8((const unsigned char *)w + start, &cp);
    for (size_t k = 0; k < b->ends_count; k++)
        if (b->ends[k] == cp)
            return 0;
    return ordo__hf_char_id(b, cp) != ORDO__HF_NONE;
}

/* One part of a long word: its ids from the cache, or its symbols queued
 * to be merged beside the other parts (hf_bpe_batch.c); parts too long
 * for the queue are merged at once, after what is queued. The parts of a
 * cut word never begin with a prefix or end with a suffix (split_words
 * has none), so their symbols are those of uncached(). */
static ordo_status part(const ordo__hf_bpe *b, const char *piece, size_t len, uint64_t hash,
                        ordo__hf_scratch *s, ordo__tokens *out, ordo_error *err)
{
    uint32_t ids[ORDO__CACHE_IDS];
    size_t count = 0;
    if (s->cache && len <= ORDO__CACHE_BYTES)
        count = ordo__piece_cache_find_hashed(s->cache, b->owner, hash,
                                              (const unsigned char *)piece, len, ids);
    ordo_status status;
    if (count && ordo__hf_batch_empty(s)) {
        if ((status = ordo__tokens_reserve(out, count, err)) == ORDO_OK) {
            memcpy(out->ids + out->count, ids, count * sizeof *ids);
            out->count += count;
        }
        return status;
    }
    if (count)
        return ordo__hf_batch_add(b, s, piece, len, hash, ids, count, 1, out, err);
    size_t n = 0;
    if ((status = symbols(b, piece, len, s, &n, err)) != ORDO_OK)
        return status;
    if (n <= ORDO__HF_SHORT_WORD)
        return ordo__hf_batch_add(b, s, piece, len, hash, s->ids, n, 0, out, err);
    if ((status = ordo__hf_batch_flush(b, s, out, err)) != ORDO_OK)
        return status;
    return ordo__hf_bpe_merge_emit(b, s, n, out, err);
}

/* Where the part of a long word that begins at `from` ends: before the
 * next U+2581 where a cut is safe, or at the end. */
static size_t next_cut(const ordo__hf_bpe *b, const char *piece, size_t len, size_t from)
{
    for (size_t at = from + 1; at + 3 <= len; at++) {
        const char *hit = memchr(piece + at, '\xe2', len - at - 2);
        if (!hit)
            break;
        at = (size_t)(hit - piece);
        if (memcmp(hit, "\xe2\x96\x81", 3) == 0 && cut_before(b, piece, at))
            return at;
    }
    return len;
}

/* Parts cut ahead of the one being merged: their cache entries are
 * loaded meanwhile (one part ahead left most lookups of a cached part
 * waiting on memory). */
#define AHEAD 4

typedef struct cut {
    size_t end;
    uint64_t hash; /* the part's, when it can be cached */
} cut;

/* One piece through the model; see hf_model.h. A long word of a
 * SentencePiece-style vocab is merged in parts cut before U+2581 where
 * no merge can cross, which gives the ids of merging it whole. The
 * cache entries of the next AHEAD parts are prefetched while a part is
 * merged. */
ordo_status ordo__hf_bpe_piece(const ordo__hf_bpe *b, const char *piece, size_t len,
                               ordo__hf_scratch *s, ordo__tokens *out, ordo_error *err)
{
    if (!b->split_words || len <= ORDO__CACHE_BYTES)
        return cached(b, piece, len, s, out, err);
    ordo_status status = ORDO_OK;
    const unsigned char *bytes = (const unsigned char *)piece;
    cut ahead[AHEAD];
    size_t first = 0, queued = 0, scanned = 0; /* ahead[first..] hold parts up to scanned */
    for (size_t from = 0; status == ORDO_OK && from < len;) {
        for (; queued < AHEAD && scanned < len; queued++) {
            cut *c = &ahead[(first + queued) % AHEAD];
            c->end = next_cut(b, piece, len, scanned);
            c->hash = 0;
            if (s->cache && c->end - scanned <= ORDO__CACHE_BYTES) {
                c->hash = ordo__piece_cache_hash(bytes + scanned, c->end - scanned);
                ordo__piece_cache_prefetch_hashed(s->cache, b->owner, c->hash);
            }
            scanned = c->end;
        }
        cut next = ahead[first];
        first = (first + 1) % AHEAD;
        queued--;
        status = part(b, piece + from, next.end - from, next.hash, s, out, err);
        from = next.end;
    }
    if (status == ORDO_OK)
        status = ordo__hf_batch_flush(b, s, out, err);
    return status;
}
