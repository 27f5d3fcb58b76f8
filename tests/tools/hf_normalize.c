/* What ordo's tokenizer.json normalizers make of text, for the conformance
 * suite (tests/hf_normalize_conformance.sh) to compare with the library:
 *
 *   hf_normalize NORMALIZER_JSON < lines
 *
 * reads one JSON string per line and prints the hexadecimal UTF-8 of its
 * normalized form (ordo__hf_normalize), one line each. An error prints
 * "hf_normalize: <message>" on stderr and exits 1. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"
#include "tokenizer/hf.h"

static int fail(const char *what, const char *message)
{
    fprintf(stderr, "hf_normalize: %s: %s\n", what, message);
    return 1;
}

static int normalize_lines(const ordo__hf_normalizer *n)
{
    char *line = NULL;
    size_t cap = 0, number = 0;
    ssize_t got;
    ordo__text out = {0};
    ordo_error err;
    int rc = 0;
    while (rc == 0 && (got = getline(&line, &cap, stdin)) > 0) {
        json_error_t jerr;
        number++;
        json_t *s = json_loadb(line, (size_t)got, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
        if (!json_is_string(s)) {
            fprintf(stderr, "hf_normalize: line %zu: not a JSON string\n", number);
            rc = 1;
        } else if (ordo__hf_normalize(n, json_string_value(s), json_string_length(s), &out, &err) !=
                   ORDO_OK) {
            rc = fail("normalize", err.message);
        } else {
            for (size_t i = 0; i < out.len; i++)
                printf("%02x", (unsigned char)out.data[i]);
            putchar('\n');
        }
        json_decref(s);
    }
    free(line);
    free(out.data);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: hf_normalize NORMALIZER_JSON < lines\n");
        return 2;
    }
    json_error_t jerr;
    json_t *json = json_loads(argv[1], JSON_DECODE_ANY, &jerr);
    if (!json)
        return fail("normalizer", jerr.text);
    ordo__hf_normalizer *n = NULL;
    ordo_error err;
    if (ordo__hf_normalizer_parse(json, "normalizer", &n, &err) != ORDO_OK) {
        json_decref(json);
        return fail("normalizer", err.message);
    }
    json_decref(json);
    int rc = normalize_lines(n);
    ordo__hf_normalizer_free(n);
    return rc;
}
