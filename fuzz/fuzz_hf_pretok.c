/* Fuzzes the tokenizer.json pre-tokenizers: the input's first line is a
 * "pre_tokenizer" JSON value, the rest a text (repaired to valid UTF-8).
 * Never a crash; a refused pre-tokenizer has a message; every piece is
 * non-empty and lies in the text or a scratch buffer; the hand scanners
 * and PCRE2 give the same pieces. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

typedef struct out {
    ordo__text all;
    size_t count;
} out;

static ordo_status take(void *context, const char *piece, size_t len, ordo_error *err)
{
    out *o = context;
    if (!len)
        abort();
    o->count++;
    ordo_status status = ordo__text_append(&o->all, piece, len, err);
    return status == ORDO_OK ? ordo__text_append(&o->all, "\x01", 1, err) : status;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const unsigned char *newline = memchr(data, '\n', size);
    size_t json_len = newline ? (size_t)(newline - data) : size;
    json_t *json = json_loadb((const char *)data, json_len, JSON_DECODE_ANY, NULL);
    if (!json)
        return 0;
    ordo__hf_pretokenizer *fast = NULL, *slow = NULL;
    ordo_error err;
    ordo_status a = ordo__hf_pretokenizer_parse_with(json, "pre_tokenizer", 1, &fast, &err);
    if (a != ORDO_OK && !err.message[0])
        abort();
    ordo_status b = ordo__hf_pretokenizer_parse_with(json, "pre_tokenizer", 0, &slow, &err);
    json_decref(json);
    if (a != b)
        abort();
    if (a == ORDO_OK) {
        const char *text = newline ? (const char *)newline + 1 : "";
        size_t len = newline ? size - json_len - 1 : 0;
        char *copy = NULL;
        size_t copy_len = 0;
        if (ordo__utf8_repair(text, len, &copy, &copy_len, &err) == ORDO_OK) {
            if (copy)
                text = copy, len = copy_len;
            out x = {{0}, 0}, y = {{0}, 0};
            ordo_status sx = ordo__hf_pretokenize(fast, text, len, take, &x, &err);
            ordo_status sy = ordo__hf_pretokenize(slow, text, len, take, &y, &err);
            /* PCRE2 may stop at its match limit on a pathological regex */
            if (sx == ORDO_OK && sy == ORDO_OK &&
                (x.all.len != y.all.len ||
                 (x.all.len && memcmp(x.all.data, y.all.data, x.all.len))))
                abort();
            free(x.all.data);
            free(y.all.data);
        }
        free(copy);
    }
    ordo__hf_pretokenizer_free(fast);
    ordo__hf_pretokenizer_free(slow);
    return 0;
}
