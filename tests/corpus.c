/* Small deterministic corpora and recipes for the loader tests. */
#include <sys/stat.h>

#include "corpus.h"

static unsigned next(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (*state >> 8) & 0xffffff;
}

void corpus_jsonl(const char *dir, const char *prefix, int files, int docs, int min_len,
                  int max_len, unsigned seed)
{
    static const char *const words[] = {"data",       "order",   "lane",
                                        "batch",      "token",   "gradient",
                                        "caf\\u00e9", "\\u03bb", "r\\u00e9sum\\u00e9",
                                        "seed"};
    char path[1024];
    mkdir(test_path(dir), 0755);
    unsigned state = seed;
    for (int f = 0; f < files; f++) {
        snprintf(path, sizeof path, "%s/%s-%d.jsonl", test_path(dir), prefix, f);
        FILE *out = fopen(path, "w");
        ASSERT(out != NULL);
        for (int d = 0; d < docs; d++) {
            int len = min_len + (int)(next(&state) % (unsigned)(max_len - min_len + 1));
            fprintf(out, "{\"id\": %d, \"text\": \"%s %d:", d, prefix, f);
            for (int written = 0; written < len;) {
                const char *w = words[next(&state) % 10];
                fprintf(out, " %s", w);
                written += (int)strlen(w) + 1;
            }
            fprintf(out, "\"}\n");
        }
        ASSERT(fclose(out) == 0);
    }
}

const char *corpus_recipe(const char *name, int lanes, int global_batch, int seq_len,
                          int flush_every, int shuffle_window, const char *sources)
{
    const char *path = test_path(name);
    FILE *out = fopen(path, "w");
    ASSERT(out != NULL);
    fprintf(out,
            "{\"name\": \"%s\", \"seed\": 1234, \"seq_len\": %d, \"global_batch\": %d,\n"
            " \"lanes\": %d, \"flush_every\": %d, \"shuffle\": %s,\n"
            " \"tokenizer\": {\"kind\": \"bytes\"}, \"sources\": %s}\n",
            name, seq_len, global_batch, lanes, flush_every, shuffle_window ? "true" : "false",
            sources);
    ASSERT(fclose(out) == 0);
    return path;
}

const char *corpus_kept(const char *path)
{
    static char copies[8][1024];
    static int next;
    char *copy = copies[next++ % 8];
    snprintf(copy, sizeof copies[0], "%s", path);
    return copy;
}

const char *corpus_one_source(int lanes, int global_batch, int seq_len, int flush_every,
                              int shuffle_window)
{
    return corpus_kept(corpus_recipe("recipe.json", lanes, global_batch, seq_len, flush_every,
                                     shuffle_window,
                                     "[{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], "
                                     "\"weight\": 1}]"));
}

char *ordo_ok(const char *const *args, int expected_code)
{
    cli_result r = run_ordo(NULL, args);
    if (r.code != expected_code) {
        fprintf(stderr, "  ordo");
        for (int i = 0; args[i]; i++)
            fprintf(stderr, " %s", args[i]);
        fprintf(stderr, "\n  exit %d, expected %d\n  stdout: %s\n  stderr: %s\n", r.code,
                expected_code, r.out ? r.out : "", r.err ? r.err : "");
        test_fail(__FILE__, __LINE__, "unexpected exit code");
    }
    char *out = r.out;
    r.out = NULL;
    cli_result_free(&r);
    return out;
}
