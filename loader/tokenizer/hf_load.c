/* Reading a tokenizer.json: the top-level keys, then the normalizer,
 * pre-tokenizer, model, added tokens and decoder. */
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"

#define MAX_JSON ((size_t)1 << 31)

static const char *const top_keys[] = {
    "version",       "truncation",     "padding", "added_tokens", "normalizer",
    "pre_tokenizer", "post_processor", "decoder", "model",        NULL};

static ordo_status check_top(const json_t *root, const char *what, ordo_error *err)
{
    if (!json_is_object(root))
        return ordo__error(err, ORDO_INVALID, "tokenizer.json '%s' is not a JSON object", what);
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)root, key, value)
    {
        size_t i = 0;
        while (top_keys[i] && strcmp(top_keys[i], key) != 0)
            i++;
        if (!top_keys[i])
            return ordo__error(
                err, ORDO_INVALID,
                "tokenizer.json '%s': '%s' is not a key ordo knows, so it is refused", what, key);
    }
    const json_t *version = json_object_get(root, "version");
    if (version && !(json_is_string(version) && strcmp(json_string_value(version), "1.0") == 0))
        return ordo__error(err, ORDO_INVALID,
                           "tokenizer.json '%s': version must be \"1.0\" (as the library requires)",
                           what);
    const char *const off[] = {"truncation", "padding"};
    for (int k = 0; k < 2; k++) {
        const json_t *v = json_object_get(root, off[k]);
        if (v && !json_is_null(v))
            return ordo__error(err, ORDO_INVALID,
                               "tokenizer.json '%s': %s must be null (ordo tokenizes whole "
                               "documents; it never truncates or pads)",
                               what, off[k]);
    }
    if (!json_object_get(root, "model"))
        return ordo__error(err, ORDO_INVALID, "tokenizer.json '%s': model is missing", what);
    return ORDO_OK;
}

/* Where each id comes from, and one more than the largest id. */
static ordo_status index_ids(ordo__hf *hf, ordo_error *err)
{
    uint32_t size = hf->bpe->count;
    for (size_t k = 0; k < hf->added.count; k++)
        if (hf->added.tokens[k].id >= size)
            size = hf->added.tokens[k].id + 1;
    hf->size = size;
    hf->added_of_id = malloc((size ? size : 1) * sizeof *hf->added_of_id);
    if (!hf->added_of_id)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    memset(hf->added_of_id, 0xff, (size ? size : 1) * sizeof *hf->added_of_id);
    for (size_t k = 0; k < hf->added.count; k++)
        hf->added_of_id[hf->added.tokens[k].id] = (uint32_t)k;
    return ORDO_OK;
}

static ordo_status build(ordo__hf *hf, const json_t *root, int nul_keys, const char *what,
                         ordo_error *err)
{
    ordo_status s = check_top(root, what, err);
    if (s != ORDO_OK)
        return s;
    ordo_error inner = {0};
    s = ordo__hf_normalizer_parse(json_object_get(root, "normalizer"), "normalizer",
                                  &hf->normalizer, &inner);
    if (s == ORDO_OK)
        s = ordo__hf_pretokenizer_parse(json_object_get(root, "pre_tokenizer"), "pre_tokenizer",
                                        &hf->pretokenizer, &inner);
    if (s != ORDO_OK)
        return ordo__error(err, s, "tokenizer.json '%s': %s", what, inner.message);
    int byte_level = ordo__hf_pretokenizer_byte_level(hf->pretokenizer);
    s = ordo__hf_bpe_parse(json_object_get(root, "model"), byte_level, nul_keys, what, &hf->bpe,
                           err);
    if (s == ORDO_OK)
        s = ordo__hf_added_parse(json_object_get(root, "added_tokens"), hf->bpe, hf->normalizer,
                                 what, &hf->added, err);
    if (s == ORDO_OK)
        s = ordo__hf_decoder_parse(json_object_get(root, "decoder"), what, &hf->decoder, err);
    if (s == ORDO_OK)
        s = index_ids(hf, err);
    return s;
}

/* Compiles JSON text; see hf.h. */
ordo_status ordo__hf_parse(const char *json, size_t len, const char *what, ordo__hf **out,
                           ordo_error *err)
{
    *out = NULL;
    char *rewritten = NULL;
    ordo_status s = ordo__hf_json_nul_keys(json, len, what, &rewritten, err);
    if (s != ORDO_OK)
        return s;
    json_error_t jerr;
    int nul_keys = rewritten != NULL;
    json_t *root = json_loadb(rewritten ? rewritten : json, len,
                              JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    free(rewritten);
    if (!root)
        return ordo__error(err, ORDO_INVALID,
                           "tokenizer.json '%s': malformed JSON at line %d, column %d: %s", what,
                           jerr.line, jerr.column, jerr.text);
    ordo__hf *hf = calloc(1, sizeof *hf);
    s = hf ? build(hf, root, nul_keys, what, err) : ordo__error(err, ORDO_NOMEM, "out of memory");
    json_decref(root);
    if (s != ORDO_OK) {
        ordo__hf_free(hf);
        return s;
    }
    *out = hf;
    return ordo__ok(err);
}

/* Reads and compiles a file; see hf.h. */
ordo_status ordo__hf_load(const char *path, ordo__hf **out, ordo_error *err)
{
    *out = NULL;
    char *data = NULL;
    size_t size = 0;
    ordo_status s = ordo__read_file(path, MAX_JSON, &data, &size, err);
    if (s != ORDO_OK)
        return s;
    s = ordo__hf_parse(data, size, path, out, err);
    free(data);
    return s;
}

/* Frees a tokenizer and all its parts (NULL is fine). */
void ordo__hf_free(ordo__hf *hf)
{
    if (!hf)
        return;
    ordo__hf_normalizer_free(hf->normalizer);
    ordo__hf_pretokenizer_free(hf->pretokenizer);
    ordo__hf_bpe_free(hf->bpe);
    ordo__hf_added_free(&hf->added);
    ordo__hf_decoder_free(hf->decoder);
    free(hf->added_of_id);
    free(hf);
}
