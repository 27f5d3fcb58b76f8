/* The "added_tokens" of a tokenizer.json: ids given as the library's
 * AddedVocabulary::add_tokens gives them, and the two tries of the tokens
 * matched in text (special tokens are never matched). */
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"

static const char *const token_keys[] = {"id",     "content",    "single_word", "lstrip",
                                         "rstrip", "normalized", "special",     NULL};

static ordo_status check_token(const json_t *t, size_t i, const char *what, ordo_error *err)
{
    if (!json_is_object(t))
        return ordo__error(err, ORDO_INVALID,
                           "tokenizer.json '%s': added_tokens[%zu] must be an object", what, i);
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)t, key, value)
    {
        size_t k = 0;
        while (token_keys[k] && strcmp(token_keys[k], key) != 0)
            k++;
        if (!token_keys[k])
            return ordo__error(err, ORDO_INVALID,
                               "tokenizer.json '%s': added_tokens[%zu].%s is not a key ordo knows",
                               what, i, key);
    }
    for (size_t k = 0; token_keys[k]; k++) {
        const json_t *v = json_object_get(t, token_keys[k]);
        int ok = k == 0 ? json_is_integer(v) && json_integer_value(v) >= 0 &&
                              json_integer_value(v) < (json_int_t)ORDO__HF_NONE
                 : k == 1 ? json_is_string(v)
                          : json_is_boolean(v);
        if (!ok)
            return ordo__error(err, ORDO_INVALID,
                               "tokenizer.json '%s': added_tokens[%zu].%s must be %s", what, i,
                               token_keys[k],
                               k == 0   ? "an id (an integer from 0)"
                               : k == 1 ? "a string"
                                        : "true or false");
    }
    return ORDO_OK;
}

static ordo_status copy_text(const char *s, size_t n, char **out, ordo_error *err)
{
    *out = malloc(n + 1);
    if (!*out)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    memcpy(*out, s, n);
    (*out)[n] = '\0';
    return ORDO_OK;
}

/* The token's fields, and the pattern a normalized one is matched by. */
static ordo_status read_token(const json_t *t, size_t i, const ordo__hf_normalizer *normalizer,
                              ordo__hf_added_token *out, const char *what, ordo_error *err)
{
    const json_t *content = json_object_get(t, "content");
    out->special = json_is_true(json_object_get(t, "special"));
    out->normalized = json_is_true(json_object_get(t, "normalized"));
    out->lstrip = json_is_true(json_object_get(t, "lstrip"));
    out->rstrip = json_is_true(json_object_get(t, "rstrip"));
    out->len = json_string_length(content);
    char q[200];
    if (json_is_true(json_object_get(t, "single_word")) && !out->special)
        return ordo__error(err, ORDO_INVALID,
                           "tokenizer.json '%s': added_tokens[%zu] '%s': single_word is not "
                           "supported",
                           what, i, ordo__hf_quote(json_string_value(content), out->len, q));
    ordo_status s = copy_text(json_string_value(content), out->len, &out->content, err);
    if (s != ORDO_OK)
        return s;
    if (!out->normalized || !normalizer) {
        out->pattern_len = out->len;
        return copy_text(out->content, out->len, &out->pattern, err);
    }
    ordo__text normal = {0};
    s = ordo__hf_normalize(normalizer, out->content, out->len, &normal, err);
    if (s == ORDO_OK && !normal.data)
        s = ordo__text_append(&normal, "", 0, err);
    out->pattern = normal.data;
    out->pattern_len = normal.len;
    return s;
}

/* The id the library gives: the content's own id (vocab or an earlier
 * added token), else the next one after the vocab. */
static ordo_status assign_id(const ordo__hf_added *a, const ordo__hf_bpe *bpe, const json_t *t,
                             size_t i, uint32_t *next, const char *what, ordo_error *err)
{
    ordo__hf_added_token *token = &a->tokens[a->count];
    char q[200];
    for (size_t k = 0; k < a->count; k++)
        if (a->tokens[k].len == token->len &&
            memcmp(a->tokens[k].content, token->content, token->len) == 0)
            return ordo__error(err, ORDO_INVALID,
                               "tokenizer.json '%s': added_tokens[%zu] '%s' is listed twice", what,
                               i, ordo__hf_quote(token->content, token->len, q));
    token->id = ordo__hf_map_get(&bpe->vocab, token->content, token->len);
    int in_vocab = token->id != ORDO__HF_NONE;
    if (!in_vocab)
        token->id = (*next)++;
    json_int_t file_id = json_integer_value(json_object_get(t, "id"));
    if ((json_int_t)token->id != file_id)
        return ordo__error(err, ORDO_INVALID,
                           "tokenizer.json '%s': added_tokens[%zu] '%s' has id %lld, but the "
                           "library gives it id %u (%s)",
                           what, i, ordo__hf_quote(token->content, token->len, q),
                           (long long)file_id, (unsigned)token->id,
                           in_vocab ? "its id in the vocab" : "the next id after the vocab");
    return ORDO_OK;
}

/* Puts the non-special tokens in the trie they are matched by. */
static ordo_status build_tries(ordo__hf_added *a, const char *what, ordo_error *err)
{
    char q[200], q2[200];
    for (size_t k = 0; k < a->count; k++) {
        ordo__hf_added_token *token = &a->tokens[k];
        if (token->special)
            continue;
        ordo__hf_trie **trie = token->normalized ? &a->normalized : &a->raw;
        if (!*trie && !(*trie = ordo__hf_trie_new()))
            return ordo__error(err, ORDO_NOMEM, "out of memory");
        if (token->pattern_len == 0)
            return ordo__error(err, ORDO_INVALID,
                               "tokenizer.json '%s': added token '%s' normalizes to nothing", what,
                               ordo__hf_quote(token->content, token->len, q));
        int nomem;
        uint32_t other =
            ordo__hf_trie_add(*trie, token->pattern, token->pattern_len, (uint32_t)k, &nomem);
        if (nomem)
            return ordo__error(err, ORDO_NOMEM, "out of memory");
        if (other != ORDO__HF_NONE)
            return ordo__error(err, ORDO_INVALID,
                               "tokenizer.json '%s': added tokens '%s' and '%s' match the same "
                               "text",
                               what,
                               ordo__hf_quote(a->tokens[other].content, a->tokens[other].len, q),
                               ordo__hf_quote(token->content, token->len, q2));
    }
    return ORDO_OK;
}

/* Reads "added_tokens"; see hf_model.h. */
ordo_status ordo__hf_added_parse(const json_t *json, const ordo__hf_bpe *bpe,
                                 const ordo__hf_normalizer *normalizer, const char *what,
                                 ordo__hf_added *out, ordo_error *err)
{
    memset(out, 0, sizeof *out);
    if (!json || json_is_null(json))
        return ORDO_OK;
    if (!json_is_array(json))
        return ordo__error(err, ORDO_INVALID, "tokenizer.json '%s': added_tokens must be an array",
                           what);
    size_t n = json_array_size(json);
    out->tokens = calloc(n ? n : 1, sizeof *out->tokens);
    if (!out->tokens)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    uint32_t next = bpe->entries; /* the library's vocab size: its count of tokens */
    ordo_status s = ORDO_OK;
    for (size_t i = 0; s == ORDO_OK && i < n; i++) {
        const json_t *t = json_array_get(json, i);
        if ((s = check_token(t, i, what, err)) != ORDO_OK)
            break;
        if (json_string_length(json_object_get(t, "content")) == 0)
            continue; /* the library ignores an empty token */
        if ((s = read_token(t, i, normalizer, &out->tokens[out->count], what, err)) == ORDO_OK)
            s = assign_id(out, bpe, t, i, &next, what, err);
        out->count++;
    }
    if (s == ORDO_OK)
        s = build_tries(out, what, err);
    return s;
}

/* Frees the tokens and tries (a may be zeroed). */
void ordo__hf_added_free(ordo__hf_added *a)
{
    for (size_t k = 0; k < a->count; k++)
        free(a->tokens[k].content), free(a->tokens[k].pattern);
    free(a->tokens);
    ordo__hf_trie_free(a->raw);
    ordo__hf_trie_free(a->normalized);
    memset(a, 0, sizeof *a);
}
