/* The vocab and merges of a tokenizer.json BPE model, checked as the
 * library checks them (and a little more: each id once, and not far past
 * the vocab's size). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"

/* What a JSON value is, for messages. */
static const char *kind_of(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_REAL: return "a number with a fraction or exponent";
    case JSON_STRING: return "a string";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    case JSON_ARRAY: return "an array";
    case JSON_OBJECT: return "an object";
    default: return "an integer";
    }
}

/* How many ids a vocab may skip (Xenova's gpt-4o file skips the 18
 * between its tokens and <|endofprompt|>): room is made for every id, so
 * a file naming an id far past its size is refused, not allocated for. */
#define SKIPPED_IDS_MAX 1048576

/* Every id an integer of the id space, one more than the largest in *size. */
static ordo_status check_ids(const json_t *vocab, const char *what, size_t n, uint32_t *size,
                             ordo_error *err)
{
    const char *key;
    json_t *value;
    char q[200];
    json_int_t largest = -1;
    json_object_foreach((json_t *)vocab, key, value)
    {
        if (!json_is_integer(value))
            return ordo__error(err, ORDO_INVALID,
                               "tokenizer.json '%s': model.vocab '%s': the id must be an integer, "
                               "not %s",
                               what, ordo__hf_quote(key, strlen(key), q), kind_of(value));
        json_int_t id = json_integer_value(value);
        if (id < 0 || (uint64_t)id >= n + SKIPPED_IDS_MAX)
            return ordo__error(err, ORDO_INVALID,
                               "tokenizer.json '%s': model.vocab '%s': id %lld is out of range "
                               "(the vocab has %zu tokens, so ids are 0..%zu, skipping at most "
                               "%d)",
                               what, ordo__hf_quote(key, strlen(key), q), (long long)id, n,
                               n + SKIPPED_IDS_MAX - 1, SKIPPED_IDS_MAX);
        largest = id > largest ? id : largest;
    }
    *size = (uint32_t)(largest + 1);
    return ORDO_OK;
}

/* Reads "vocab"; see hf_model.h. */
ordo_status ordo__hf_bpe_vocab(ordo__hf_bpe *b, const json_t *vocab, const char *what,
                               ordo_error *err)
{
    if (!json_is_object(vocab))
        return ordo__error(err, ORDO_INVALID, "tokenizer.json '%s': model.vocab must be an object",
                           what);
    size_t n = json_object_size(vocab), total = 0;
    if (n >= ORDO__HF_NONE / 4)
        return ordo__error(err, ORDO_INVALID, "tokenizer.json '%s': model.vocab is too large",
                           what);
    uint32_t size = 0;
    ordo_status s = check_ids(vocab, what, n, &size, err);
    if (s != ORDO_OK)
        return s;
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)vocab, key, value) total += strlen(key);
    b->count = size;
    b->entries = (uint32_t)n;
    b->blob = malloc(total + 1);
    b->tokens = calloc(size ? size : 1, sizeof *b->tokens);
    if (!b->blob || !b->tokens)
        return ordo__error(err, ORDO_NOMEM, "out of memory for %u token ids", size);
    char *o = b->blob, q[200], q2[200];
    json_object_foreach((json_t *)vocab, key, value)
    {
        size_t len = strlen(key);
        json_int_t id = json_integer_value(value);
        if (b->tokens[id].p) {
            const ordo__hf_str *other = &b->tokens[id];
            return ordo__error(err, ORDO_INVALID,
                               "tokenizer.json '%s': model.vocab: '%s' and '%s' both have id %lld",
                               what, ordo__hf_quote(other->p, other->n, q2),
                               ordo__hf_quote(key, len, q), (long long)id);
        }
        memcpy(o, key, len);
        if (b->nul_keys)
            len = ordo__hf_json_key_restore(o, len);
        b->tokens[id] = (ordo__hf_str){o, (uint32_t)len};
        o += len;
    }
    s = ordo__hf_map_init(&b->vocab, b->tokens, n, err);
    for (uint32_t id = 0; s == ORDO_OK && id < size; id++)
        if (b->tokens[id].p)
            ordo__hf_map_put(&b->vocab, id);
    return s;
}

/* A later merge of the same pair replaces an earlier one, as the
 * library's map does. */
static void merges_put(ordo__hf_bpe *b, uint32_t left, uint32_t right, uint32_t rank, uint32_t id)
{
    b->left[left >> 6] |= 1ull << (left & 63);
    b->right[right >> 6] |= 1ull << (right & 63);
    ordo__hf_merges_put(&b->merges, left, right, rank, id);
}

/* One merge: both tokens and their concatenation (the right one without
 * continuing_subword_prefix) must be in the vocab. */
static ordo_status merge_one(ordo__hf_bpe *b, size_t index, uint32_t rank, const char *left,
                             size_t left_len, const char *right, size_t right_len,
                             ordo__text *joined, const char *what, ordo_error *err)
{
    char q[200], q2[200];
    uint32_t a = ordo__hf_map_get(&b->vocab, left, left_len),
             c = ordo__hf_map_get(&b->vocab, right, right_len);
    if (a == ORDO__HF_NONE || c == ORDO__HF_NONE) {
        const char *missing = a == ORDO__HF_NONE ? left : right;
        size_t missing_len = a == ORDO__HF_NONE ? left_len : right_len;
        return ordo__error(err, ORDO_INVALID,
                           "tokenizer.json '%s': model.merges[%zu]: '%s' is not in the vocab", what,
                           index, ordo__hf_quote(missing, missing_len, q));
    }
    size_t cut = b->prefix_len;
    if (cut > right_len || (cut < right_len && ((unsigned char)right[cut] & 0xC0) == 0x80))
        return ordo__error(err, ORDO_INVALID,
                           "tokenizer.json '%s': model.merges[%zu]: '%s' is shorter than "
                           "continuing_subword_prefix",
                           what, index, ordo__hf_quote(right, right_len, q));
    joined->len = 0;
    ordo_status s;
    if ((s = ordo__text_append(joined, left, left_len, err)) != ORDO_OK ||
        (s = ordo__text_append(joined, right + cut, right_len - cut, err)) != ORDO_OK)
        return s;
    uint32_t merged = ordo__hf_map_get(&b->vocab, joined->data, joined->len);
    if (merged == ORDO__HF_NONE)
        return ordo__error(
            err, ORDO_INVALID,
            "tokenizer.json '%s': model.merges[%zu]: '%s' + '%s' is not in the vocab", what, index,
            ordo__hf_quote(left, left_len, q), ordo__hf_quote(right, right_len, q2));
    merges_put(b, a, c, rank, merged);
    return ORDO_OK;
}

/* "a b": exactly one space (the library splits on ' ' into two parts). */
static ordo_status legacy_merge(ordo__hf_bpe *b, const json_t *item, size_t index, uint32_t rank,
                                ordo__text *joined, const char *what, ordo_error *err)
{
    const char *s = json_string_value(item);
    size_t n = json_string_length(item);
    const char *space = memchr(s, ' ', n);
    char q[200];
    if (!space || memchr(space + 1, ' ', n - (size_t)(space + 1 - s)))
        return ordo__error(err, ORDO_INVALID,
                           "tokenizer.json '%s': model.merges[%zu] '%s' is not two tokens "
                           "separated by one space",
                           what, index, ordo__hf_quote(s, n, q));
    return merge_one(b, index, rank, s, (size_t)(space - s), space + 1, n - (size_t)(space + 1 - s),
                     joined, what, err);
}

static int is_pair(const json_t *item)
{
    return json_is_array(item) && json_array_size(item) == 2 &&
           json_is_string(json_array_get(item, 0)) && json_is_string(json_array_get(item, 1));
}

/* Reads "merges"; see hf_model.h. */
ordo_status ordo__hf_bpe_merges(ordo__hf_bpe *b, const json_t *merges, const char *what,
                                ordo_error *err)
{
    if (!json_is_array(merges))
        return ordo__error(err, ORDO_INVALID, "tokenizer.json '%s': model.merges must be an array",
                           what);
    size_t n = json_array_size(merges);
    if (n >= ORDO__HF_NONE / 2)
        return ordo__error(err, ORDO_INVALID, "tokenizer.json '%s': model.merges is too large",
                           what);
    ordo_status s = ordo__hf_merges_init(&b->merges, n, b->count, 0, err);
    b->left = calloc(b->count / 64 + 1, sizeof *b->left);
    b->right = calloc(b->count / 64 + 1, sizeof *b->right);
    if (s == ORDO_OK && (!b->left || !b->right))
        s = ordo__error(err, ORDO_NOMEM, "out of memory");
    int legacy = n > 0 && json_is_string(json_array_get(merges, 0));
    ordo__text joined = {0};
    uint32_t rank = 0;
    for (size_t i = 0; s == ORDO_OK && i < n; i++) {
        const json_t *item = json_array_get(merges, i);
        if (legacy ? !json_is_string(item) : !is_pair(item)) {
            s = ordo__error(err, ORDO_INVALID,
                            "tokenizer.json '%s': model.merges[%zu] is not %s (merges are all "
                            "\"a b\" strings or all [\"a\", \"b\"] pairs)",
                            what, i, legacy ? "a string" : "a pair of strings");
            break;
        }
        if (legacy && strncmp(json_string_value(item), "#version", 8) == 0)
            continue; /* the library skips these lines */
        if (legacy)
            s = legacy_merge(b, item, i, rank, &joined, what, err);
        else {
            const json_t *l = json_array_get(item, 0), *r = json_array_get(item, 1);
            s = merge_one(b, i, rank, json_string_value(l), json_string_length(l),
                          json_string_value(r), json_string_length(r), &joined, what, err);
        }
        rank++;
    }
    free(joined.data);
    return s;
}
