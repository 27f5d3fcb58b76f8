/* The pieces ordo's tokenizer.json pre-tokenizer makes, as JSON lines, for
 * the conformance suite (tests/hf_pretok_conformance.sh) to compare with
 * the library's preTokenizeString:
 *
 *   hf_pretok_dump [--pcre2] TOKENIZER_JSON < lines.jsonl
 *       per input line {"text": ...}: a JSON array of the pieces of the
 *       text (invalid UTF-8 repaired first; when ByteLevel is the last
 *       step, the pieces through GPT-2's byte map, as the library shows
 *       them). --pcre2: every regex through PCRE2, no hand scanner.
 *   hf_pretok_dump [--pcre2] --bench TOKENIZER_JSON FILE
 *       pre-tokenizes FILE's bytes (repaired) 5 times; prints the best
 *       MB/s and the piece count.
 *
 * An error prints "hf_pretok_dump: <message>" on stderr and exits 1. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testing.h"

typedef struct sink {
    json_t *pieces;
    int byte_level;
    size_t count;
} sink;

static ordo_status take(void *context, const char *piece, size_t len, ordo_error *err)
{
    sink *s = context;
    s->count++;
    if (!s->pieces)
        return ORDO_OK;
    char *out = malloc(len * 2 + 1);
    size_t n = 0;
    if (!out)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    for (size_t i = 0; i < len; i++) {
        unsigned char b = (unsigned char)piece[i];
        unsigned c = b;
        if (s->byte_level && !((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)) {
            c = 0x100;
            for (unsigned k = 0; k < b; k++)
                c += !((k >= '!' && k <= '~') || (k >= 0xA1 && k <= 0xAC) || k >= 0xAE);
        }
        if (s->byte_level && c >= 0x80)
            out[n++] = (char)(0xC0 | c >> 6), out[n++] = (char)(0x80 | (c & 0x3F));
        else
            out[n++] = (char)b;
    }
    json_array_append_new(s->pieces, json_stringn(out, n));
    free(out);
    return ORDO_OK;
}

static void die(const char *what, const ordo_error *err)
{
    fprintf(stderr, "hf_pretok_dump: %s%s%s\n", what, err ? ": " : "", err ? err->message : "");
    exit(1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void bench(const ordo__hf_pretokenizer *p, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die(path, NULL);
    ordo__text t = {0};
    char chunk[65536];
    size_t n;
    ordo_error err;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (ordo__text_append(&t, chunk, n, &err) != ORDO_OK)
            die("reading", &err);
    fclose(f);
    char *text = NULL;
    size_t len = 0;
    if (ordo__utf8_repair(t.data, t.len, &text, &len, &err) != ORDO_OK)
        die("repair", &err);
    double best = 1e30;
    sink s = {NULL, 0, 0};
    for (int round = 0; round < 5; round++) {
        s.count = 0;
        double start = now();
        if (ordo__hf_pretokenize(p, text ? text : t.data, text ? len : t.len, take, &s, &err) !=
            ORDO_OK)
            die("pre-tokenizing", &err);
        double took = now() - start;
        best = took < best ? took : best;
    }
    printf("%.1f MB/s, %zu pieces\n", (double)t.len / best / 1e6, s.count);
    free(text);
    free(t.data);
}

int main(int argc, char **argv)
{
    int scanners = 1, arg = 1, benching = 0;
    for (; arg < argc && argv[arg][0] == '-'; arg++)
        if (strcmp(argv[arg], "--pcre2") == 0)
            scanners = 0;
        else if (strcmp(argv[arg], "--bench") == 0)
            benching = 1;
    if (arg >= argc)
        die("usage: hf_pretok_dump [--pcre2] [--bench] TOKENIZER_JSON [FILE]", NULL);
    json_error_t jerr;
    json_t *root = json_load_file(argv[arg], 0, &jerr);
    if (!root)
        die(jerr.text, NULL);
    ordo__hf_pretokenizer *p = NULL;
    ordo_error err;
    if (ordo__hf_pretokenizer_parse_with(json_object_get(root, "pre_tokenizer"), "pre_tokenizer",
                                         scanners, &p, &err) != ORDO_OK)
        die(argv[arg], &err);
    if (benching) {
        if (arg + 1 >= argc)
            die("--bench needs a FILE", NULL);
        bench(p, argv[arg + 1]);
    } else {
        char *line = NULL;
        size_t cap = 0;
        ssize_t got;
        while ((got = getline(&line, &cap, stdin)) > 0) {
            json_t *doc = json_loadb(line, (size_t)got, JSON_ALLOW_NUL, &jerr);
            json_t *text = json_object_get(doc, "text");
            if (!json_is_string(text))
                die("a line without a \"text\" string", NULL);
            sink s = {json_array(), ordo__hf_pretokenizer_byte_level(p), 0};
            if (ordo__hf_pretokenize(p, json_string_value(text), json_string_length(text), take, &s,
                                     &err) != ORDO_OK)
                die("pre-tokenizing", &err);
            char *dump = json_dumps(s.pieces, JSON_COMPACT);
            puts(dump);
            free(dump);
            json_decref(s.pieces);
            json_decref(doc);
        }
        free(line);
    }
    ordo__hf_pretokenizer_free(p);
    json_decref(root);
    return 0;
}
