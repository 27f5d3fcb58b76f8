/* tokenizer.json normalizers: MB/s of ordo__hf_normalize over the texts of
 * a JSON-lines file ({"text": ...} per line), one thread, median of
 * ROUNDS passes; bench/hf_normalize.sh compares it with the library.
 *   build/bench_hf_normalize CORPUS.jsonl ROUNDS NAME=NORMALIZER_JSON...
 * prints "NAME MB/s" per normalizer. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testing.h"
#include "tokenizer/hf.h"

typedef struct {
    char **text;
    size_t *len, count, bytes;
} corpus;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void read_corpus(const char *path, corpus *c)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(1);
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, f)) > 0) {
        json_error_t jerr;
        json_t *o = json_loadb(line, (size_t)got, JSON_ALLOW_NUL, &jerr);
        const json_t *t = json_object_get(o, "text");
        if (json_is_string(t)) {
            c->text = realloc(c->text, (c->count + 1) * sizeof *c->text);
            c->len = realloc(c->len, (c->count + 1) * sizeof *c->len);
            if (!c->text || !c->len)
                exit(1);
            c->len[c->count] = json_string_length(t);
            c->text[c->count] = malloc(c->len[c->count] + 1);
            memcpy(c->text[c->count], json_string_value(t), c->len[c->count] + 1);
            c->bytes += c->len[c->count++];
        }
        json_decref(o);
    }
    free(line);
    fclose(f);
}

static double bench(const ordo__hf_normalizer *n, const corpus *c, int rounds)
{
    double mbs[64];
    ordo__text out = {0};
    ordo_error err;
    for (int r = -1; r < rounds; r++) { /* round -1 warms up, unmeasured */
        double start = now();
        for (size_t i = 0; i < c->count; i++)
            if (ordo__hf_normalize(n, c->text[i], c->len[i], &out, &err) != ORDO_OK) {
                fprintf(stderr, "bench_hf_normalize: %s\n", err.message);
                exit(1);
            }
        if (r >= 0)
            mbs[r] = (double)c->bytes / 1e6 / (now() - start);
    }
    free(out.data);
    qsort(mbs, (size_t)rounds, sizeof *mbs, compare_doubles);
    return rounds % 2 ? mbs[rounds / 2] : (mbs[rounds / 2 - 1] + mbs[rounds / 2]) / 2;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_hf_normalize CORPUS.jsonl ROUNDS NAME=JSON...\n");
        return 2;
    }
    corpus c = {0};
    read_corpus(argv[1], &c);
    int rounds = atoi(argv[2]);
    rounds = rounds < 1 ? 1 : rounds > 64 ? 64 : rounds;
    for (int a = 3; a < argc; a++) {
        char *eq = strchr(argv[a], '=');
        json_error_t jerr;
        json_t *json = eq ? json_loads(eq + 1, 0, &jerr) : NULL;
        ordo__hf_normalizer *n = NULL;
        ordo_error err;
        if (!json || ordo__hf_normalizer_parse(json, "normalizer", &n, &err) != ORDO_OK) {
            fprintf(stderr, "bench_hf_normalize: bad normalizer %s\n", argv[a]);
            return 1;
        }
        json_decref(json);
        printf("%.*s %.2f\n", (int)(eq - argv[a]), argv[a], bench(n, &c, rounds));
        ordo__hf_normalizer_free(n);
    }
    for (size_t i = 0; i < c.count; i++)
        free(c.text[i]);
    free(c.text);
    free(c.len);
    return 0;
}
