/* Fuzzes tokenizer.json normalizers: the input's first line is a
 * "normalizer" JSON value (parsed; a refusal is fine), or when it is not
 * JSON, its first byte picks one of the built-in cases below; the rest is
 * text (repaired to valid UTF-8 first). Never a crash; the four forms are
 * idempotent, and NFC and NFKC give the same from the text and from its
 * NFD and NFKD. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"
#include "tokenizer/hf_normalize.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const char *const cases[] = {
    "{\"type\":\"NFC\"}",
    "{\"type\":\"NFKC\"}",
    "{\"type\":\"Lowercase\"}",
    "{\"type\":\"Strip\",\"strip_left\":true,\"strip_right\":true}",
    "{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Prepend\",\"prepend\":\"_\"},"
    "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"_\"}]}",
    "{\"type\":\"Replace\",\"pattern\":{\"String\":\"\"},\"content\":\"x\"}",
    "{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"a*|\\\\s+\"},\"content\":\"\"}",
};

static void same_or_abort(const ordo__text *a, const ordo__text *b)
{
    if (a->len != b->len || memcmp(a->data, b->data, a->len) != 0)
        abort();
}

/* NFC(NFC(x)) == NFC(x) and NFC(NFD(x)) == NFC(x); likewise K. */
static void check_forms(const char *text, size_t len)
{
    ordo__text once = {0}, twice = {0}, via = {0}, decomposed = {0};
    ordo_error err;
    for (int compat = 0; compat < 2; compat++) {
        ordo__nf_form c = compat ? ORDO__NFKC : ORDO__NFC, d = compat ? ORDO__NFKD : ORDO__NFD;
        once.len = twice.len = via.len = decomposed.len = 0;
        if (ordo__hf_unicode_normalize(c, text, len, &once, &err) ||
            ordo__hf_unicode_normalize(c, once.data, once.len, &twice, &err) ||
            ordo__hf_unicode_normalize(d, text, len, &decomposed, &err) ||
            ordo__hf_unicode_normalize(c, decomposed.data, decomposed.len, &via, &err))
            abort();
        same_or_abort(&once, &twice);
        same_or_abort(&once, &via);
        twice.len = 0;
        if (ordo__hf_unicode_normalize(d, decomposed.data, decomposed.len, &twice, &err))
            abort();
        same_or_abort(&decomposed, &twice);
    }
    free(once.data), free(twice.data), free(via.data), free(decomposed.data);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const unsigned char *newline = memchr(data, '\n', size);
    size_t head = newline ? (size_t)(newline - data) : size;
    json_error_t jerr;
    json_t *json = json_loadb((const char *)data, head, JSON_DECODE_ANY, &jerr);
    if (!json && size > 0)
        json = json_loads(cases[data[0] % (sizeof cases / sizeof cases[0])], 0, &jerr);
    const unsigned char *rest = newline ? newline + 1 : data + size;
    size_t rest_len = (size_t)(data + size - rest);
    char *copy = NULL;
    size_t copy_len = 0;
    ordo_error err;
    if (ordo__utf8_repair((const char *)rest, rest_len, &copy, &copy_len, &err) != ORDO_OK)
        abort();
    const char *text = copy ? copy : (const char *)rest;
    size_t len = copy ? copy_len : rest_len;
    ordo__hf_normalizer *n = NULL;
    if (json && ordo__hf_normalizer_parse(json, "normalizer", &n, &err) == ORDO_OK) {
        ordo__text out = {0};
        ordo_status st = ordo__hf_normalize(n, text, len, &out, &err);
        if (st != ORDO_OK && st != ORDO_INVALID)
            abort();
        free(out.data);
        ordo__hf_normalizer_free(n);
    }
    json_decref(json);
    check_forms(text, len);
    free(copy);
    return 0;
}
