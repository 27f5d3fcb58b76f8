/*
 * Tokenizer benchmark: single-thread MB/s and tokens/s of ordo's BPE
 * tokenizer on the texts of a JSON-lines corpus (one {"text": ...} per
 * line), timing encoding only (texts are loaded first), median of rounds.
 *
 *   bench_tokenizer CORPUS.jsonl ROUNDS ENCODING:RANKS [ENCODING:RANKS ...]
 *
 * A RANKS path ending in ".json" is a Hugging Face tokenizer.json, opened
 * with ordo_tokenizer_open_json (ENCODING is then only the label).
 *
 * Prints one line per encoding and round, then a line
 *   median ENCODING MB/s tokens/s tokens
 * that bench/tokenizer.sh reads beside the peers' figures.
 */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ordo.h"

typedef struct {
    char **text;
    size_t *len;
    size_t count, capacity, bytes;
} corpus;

static void load(const char *path, corpus *c)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        json_error_t jerr;
        json_t *doc = json_loadb(line, (size_t)n, JSON_ALLOW_NUL, &jerr);
        json_t *text = json_object_get(doc, "text");
        if (!json_is_string(text)) {
            fprintf(stderr, "%s: line %zu has no text\n", path, c->count + 1);
            exit(1);
        }
        if (c->count == c->capacity) {
            c->capacity = c->capacity ? 2 * c->capacity : 1024;
            c->text = realloc(c->text, c->capacity * sizeof *c->text);
            c->len = realloc(c->len, c->capacity * sizeof *c->len);
        }
        c->len[c->count] = json_string_length(text);
        c->text[c->count] = malloc(c->len[c->count] + 1);
        memcpy(c->text[c->count], json_string_value(text), c->len[c->count]);
        c->bytes += c->len[c->count];
        c->count++;
        json_decref(doc);
    }
    free(line);
    fclose(f);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_tokenizer CORPUS ROUNDS ENCODING:RANKS...\n");
        return 2;
    }
    corpus c = {0};
    load(argv[1], &c);
    int rounds = atoi(argv[2]);
    if (rounds < 1 || rounds > 99)
        rounds = 3;
    printf("corpus: %zu texts, %.1f MB\n", c.count, (double)c.bytes / 1e6);
    for (int e = 3; e < argc; e++) {
        char name[64];
        const char *colon = strchr(argv[e], ':');
        if (!colon || (size_t)(colon - argv[e]) >= sizeof name)
            return fprintf(stderr, "bad ENCODING:RANKS '%s'\n", argv[e]), 2;
        memcpy(name, argv[e], (size_t)(colon - argv[e]));
        name[colon - argv[e]] = '\0';
        ordo_tokenizer *t = NULL;
        ordo_error err;
        size_t path_len = strlen(colon + 1);
        int json = path_len > 5 && strcmp(colon + 1 + path_len - 5, ".json") == 0;
        if ((json ? ordo_tokenizer_open_json(colon + 1, &t, &err)
                  : ordo_tokenizer_open(name, colon + 1, &t, &err)) != ORDO_OK)
            return fprintf(stderr, "%s\n", err.message), 1;
        double mbs[99], tps[99];
        size_t tokens = 0;
        for (int r = 0; r < rounds; r++) {
            tokens = 0;
            double start = now();
            for (size_t i = 0; i < c.count; i++) {
                uint32_t *ids = NULL;
                size_t count = 0;
                if (ordo_tokenizer_encode(t, c.text[i], c.len[i], &ids, &count, &err) != ORDO_OK)
                    return fprintf(stderr, "%s\n", err.message), 1;
                tokens += count;
                ordo_free(ids);
            }
            double seconds = now() - start;
            mbs[r] = (double)c.bytes / 1e6 / seconds;
            tps[r] = (double)tokens / seconds;
            printf("%-12s round %d: %7.2f MB/s %11.0f tokens/s\n", name, r + 1, mbs[r], tps[r]);
        }
        qsort(mbs, (size_t)rounds, sizeof *mbs, by_value);
        qsort(tps, (size_t)rounds, sizeof *tps, by_value);
        printf("median %s %.2f %.0f %zu\n", name, mbs[rounds / 2], tps[rounds / 2], tokens);
        ordo_tokenizer_close(t);
    }
    for (size_t i = 0; i < c.count; i++)
        free(c.text[i]);
    free(c.text);
    free(c.len);
    return 0;
}
