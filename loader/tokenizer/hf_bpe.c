/* The BPE model of a tokenizer.json: its options, the <0xXX> and
 * ByteLevel tables; the vocab and merges are read in hf_bpe_vocab.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"
#include "piece_cache.h"

static const char *const model_keys[] = {"type",
                                         "dropout",
                                         "unk_token",
                                         "continuing_subword_prefix",
                                         "end_of_word_suffix",
                                         "fuse_unk",
                                         "byte_fallback",
                                         "ignore_merges",
                                         "vocab",
                                         "merges",
                                         NULL};

static ordo_status check_keys(const json_t *model, const char *what, ordo_error *err)
{
    const json_t *type = json_object_get(model, "type");
    if (!json_is_string(type))
        return ordo__error(err, ORDO_INVALID, "tokenizer.json '%s': model.type is missing", what);
    if (strcmp(json_string_value(type), "BPE") != 0)
        return ordo__error(err, ORDO_INVALID,
                           "tokenizer.json '%s': model.type '%s' is not supported (only BPE)", what,
                           json_string_value(type));
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)model, key, value)
    {
        size_t i = 0;
        while (model_keys[i] && strcmp(model_keys[i], key) != 0)
            i++;
        if (!model_keys[i])
            return ordo__error(err, ORDO_INVALID,
                               "tokenizer.json '%s': model.%s is not a key of a BPE model ordo "
                               "knows, so it is refused",
                               what, key);
    }
    return ORDO_OK;
}

/* A string option: NULL for null or absent (or empty, when empty_is_none). */
static ordo_status string_option(const json_t *model, const char *key, int empty_is_none,
                                 const char *what, char **out, size_t *len, ordo_error *err)
{
    const json_t *v = json_object_get(model, key);
    *out = NULL;
    *len = 0;
    if (!v || json_is_null(v))
        return ORDO_OK;
    if (!json_is_string(v))
        return ordo__error(err, ORDO_INVALID,
                           "tokenizer.json '%s': model.%s must be a string or null", what, key);
    if (empty_is_none && json_string_length(v) == 0)
        return ORDO_OK;
    *len = json_string_length(v);
    *out = malloc(*len + 1);
    if (!*out)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    memcpy(*out, json_string_value(v), *len + 1);
    return ORDO_OK;
}

static ordo_status bool_option(const json_t *model, const char *key, const char *what, int *out,
                               ordo_error *err)
{
    const json_t *v = json_object_get(model, key);
    *out = 0;
    if (!v || json_is_null(v))
        return ORDO_OK;
    if (!json_is_boolean(v))
        return ordo__error(err, ORDO_INVALID,
                           "tokenizer.json '%s': model.%s must be true, false or null", what, key);
    *out = json_is_true(v);
    return ORDO_OK;
}

static ordo_status options(ordo__hf_bpe *b, const json_t *model, const char *what, ordo_error *err)
{
    const json_t *dropout = json_object_get(model, "dropout");
    if (dropout && !json_is_null(dropout)) {
        if (!json_is_number(dropout))
            return ordo__error(err, ORDO_INVALID,
                               "tokenizer.json '%s': model.dropout must be a number or null", what);
        if (json_number_value(dropout) != 0.0)
            return ordo__error(err, ORDO_INVALID,
                               "tokenizer.json '%s': model.dropout %g is refused (dropout skips "
                               "merges at random; only null or 0 is deterministic)",
                               what, json_number_value(dropout));
    }
    ordo_status s;
    if ((s = string_option(model, "continuing_subword_prefix", 1, what, &b->prefix, &b->prefix_len,
                           err)) != ORDO_OK ||
        (s = string_option(model, "end_of_word_suffix", 1, what, &b->suffix, &b->suffix_len,
                           err)) != ORDO_OK ||
        (s = bool_option(model, "fuse_unk", what, &b->fuse_unk, err)) != ORDO_OK ||
        (s = bool_option(model, "byte_fallback", what, &b->byte_fallback, err)) != ORDO_OK ||
        (s = bool_option(model, "ignore_merges", what, &b->ignore_merges, err)) != ORDO_OK)
        return s;
    return ORDO_OK;
}

static ordo_status unk_and_fallback(ordo__hf_bpe *b, const json_t *model, const char *what,
                                    ordo_error *err)
{
    char *unk = NULL;
    size_t unk_len = 0;
    ordo_status s = string_option(model, "unk_token", 0, what, &unk, &unk_len, err);
    if (s != ORDO_OK)
        return s;
    b->unk = ORDO__HF_NONE;
    if (unk) {
        b->unk = ordo__hf_map_get(&b->vocab, unk, unk_len);
        char q[200];
        if (b->unk == ORDO__HF_NONE)
            s = ordo__error(err, ORDO_INVALID,
                            "tokenizer.json '%s': model.unk_token '%s' is not in the vocab", what,
                            ordo__hf_quote(unk, unk_len, q));
        free(unk);
    }
    for (unsigned byte = 0; byte < 256; byte++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", byte);
        b->fallback[byte] = ordo__hf_map_get(&b->vocab, name, 6);
    }
    return s;
}

/* ByteLevel: each byte's id, and each token's bytes when ignore_merges
 * looks whole pieces up. */
static ordo_status byte_level_tables(ordo__hf_bpe *b, ordo_error *err)
{
    uint32_t cp[256];
    int inverse[256 + 68];
    ordo__hf_byte_level_table(cp);
    memset(inverse, 0xff, sizeof inverse);
    b->fast = !b->prefix && !b->suffix;
    for (unsigned byte = 0; byte < 256; byte++) {
        inverse[cp[byte]] = (int)byte;
        unsigned char u[2] = {(unsigned char)cp[byte], 0};
        size_t n = 1;
        if (cp[byte] >= 0x80) {
            u[0] = (unsigned char)(0xC0 | cp[byte] >> 6);
            u[1] = (unsigned char)(0x80 | (cp[byte] & 0x3F));
            n = 2;
        }
        b->byte_id[byte] = ordo__hf_map_get(&b->vocab, (const char *)u, n);
        if (b->byte_id[byte] == ORDO__HF_NONE)
            b->fast = 0;
    }
    if (!b->fast || !b->ignore_merges)
        return ORDO_OK;
    size_t total = 0;
    for (uint32_t id = 0; id < b->count; id++)
        total += b->tokens[id].n;
    b->bytes_blob = malloc(total + 1);
    b->bytes = calloc(b->count, sizeof *b->bytes);
    if (!b->bytes_blob || !b->bytes)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    ordo_status s = ordo__hf_map_init(&b->by_bytes, b->bytes, b->count, err);
    char *o = b->bytes_blob;
    for (uint32_t id = 0; s == ORDO_OK && id < b->count; id++) {
        const unsigned char *p = (const unsigned char *)b->tokens[id].p;
        size_t i = 0, n = b->tokens[id].n, k = 0;
        while (i < n) {
            uint32_t c;
            i += ordo__hf_utf8(p + i, &c);
            if (c >= 256 + 68 || inverse[c] < 0)
                break;
            o[k++] = (char)inverse[c];
        }
        if (i < n || n == 0)
            continue;
        b->bytes[id] = (ordo__hf_str){o, (uint32_t)k};
        o += k;
        ordo__hf_map_put(&b->by_bytes, id);
    }
    return s;
}

/* The table of single-character tokens. */
static ordo_status char_table(ordo__hf_bpe *b, ordo_error *err)
{
    size_t count = 0, cap = 64;
    for (uint32_t id = 0; id < b->count; id++) {
        uint32_t cp;
        if (b->tokens[id].n &&
            ordo__hf_utf8((const unsigned char *)b->tokens[id].p, &cp) == b->tokens[id].n)
            count++;
    }
    while (cap < 2 * count)
        cap *= 2;
    b->chars = malloc(cap * sizeof *b->chars);
    if (!b->chars)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    memset(b->chars, 0xff, cap * sizeof *b->chars);
    b->chars_mask = cap - 1;
    for (uint32_t id = 0; id < b->count; id++) {
        uint32_t cp;
        if (!b->tokens[id].n ||
            ordo__hf_utf8((const unsigned char *)b->tokens[id].p, &cp) != b->tokens[id].n)
            continue;
        size_t i = (size_t)((cp * 0x9E3779B1u) >> 7) & b->chars_mask;
        while (b->chars[i].id != ORDO__HF_NONE)
            i = (i + 1) & b->chars_mask;
        b->chars[i].cp = cp;
        b->chars[i].id = id;
    }
    return ORDO_OK;
}

/* Where a long word may be cut (see hf_model.h, split_words). */
static ordo_status word_boundaries(ordo__hf_bpe *b, ordo_error *err)
{
    if (b->prefix || b->suffix || b->ignore_merges || b->byte_level ||
        ordo__hf_map_get(&b->vocab, "\xe2\x96\x81", 3) == ORDO__HF_NONE)
        return ORDO_OK;
    for (size_t i = 0; i < b->merges.cap; i++) {
        uint32_t l, r;
        if (!ordo__hf_merges_at(&b->merges, i, &l, &r))
            continue;
        const ordo__hf_str *left = &b->tokens[l], *right = &b->tokens[r];
        if (right->n < 3 || memcmp(right->p, "\xe2\x96\x81", 3) != 0 || left->n == 0)
            continue;
        size_t at = left->n - 1;
        while (at > 0 && ((unsigned char)left->p[at] & 0xC0) == 0x80)
            at--;
        uint32_t cp;
        ordo__hf_utf8((const unsigned char *)left->p + at, &cp);
        size_t k = 0;
        while (k < b->ends_count && b->ends[k] != cp)
            k++;
        if (k < b->ends_count)
            continue;
        uint32_t *grown = realloc(b->ends, (b->ends_count + 1) * sizeof *grown);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory");
        b->ends = grown;
        b->ends[b->ends_count++] = cp;
    }
    b->split_words = 1;
    return ORDO_OK;
}

/* Builds the model; see hf_model.h. */
ordo_status ordo__hf_bpe_parse(const json_t *model, int byte_level, int nul_keys, const char *what,
                               ordo__hf_bpe **out, ordo_error *err)
{
    *out = NULL;
    if (!json_is_object(model))
        return ordo__error(err, ORDO_INVALID, "tokenizer.json '%s': model must be an object", what);
    ordo_status s = check_keys(model, what, err);
    if (s != ORDO_OK)
        return s;
    ordo__hf_bpe *b = calloc(1, sizeof *b);
    if (!b)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    b->byte_level = byte_level;
    b->nul_keys = nul_keys;
    b->owner = ordo__piece_cache_owner();
    const json_t *vocab = json_object_get(model, "vocab"),
                 *merges = json_object_get(model, "merges");
    if (!vocab || !merges)
        s = ordo__error(err, ORDO_INVALID, "tokenizer.json '%s': model.%s is missing", what,
                        vocab ? "merges" : "vocab");
    if (s == ORDO_OK)
        s = options(b, model, what, err);
    if (s == ORDO_OK)
        s = ordo__hf_bpe_vocab(b, vocab, what, err);
    if (s == ORDO_OK)
        s = unk_and_fallback(b, model, what, err);
    if (s == ORDO_OK)
        s = ordo__hf_bpe_merges(b, merges, what, err);
    if (s == ORDO_OK && byte_level)
        s = byte_level_tables(b, err);
    if (s == ORDO_OK)
        s = char_table(b, err);
    if (s == ORDO_OK)
        s = word_boundaries(b, err);
    if (s != ORDO_OK) {
        ordo__hf_bpe_free(b);
        return s;
    }
    *out = b;
    return ORDO_OK;
}

/* Frees the model and everything it owns (NULL is fine). */
void ordo__hf_bpe_free(ordo__hf_bpe *b)
{
    if (!b)
        return;
    ordo__hf_map_free(&b->vocab);
    ordo__hf_map_free(&b->by_bytes);
    ordo__hf_merges_free(&b->merges);
    free(b->left), free(b->right);
    free(b->blob), free(b->tokens), free(b->prefix), free(b->suffix);
    free(b->bytes_blob), free(b->bytes), free(b->ends), free(b->chars);
    free(b);
}
