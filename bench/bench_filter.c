/*
 * bench_filter: what a source filter costs per record. FineWeb-like JSON
 * lines (id, dump, url, date, language, language_score, token_count and a
 * text of 100 to 3,000 bytes) are scanned by the record scanner with and
 * without the filter below, in the same process, alternating (ABBA within
 * each round); ns per record for each, their ratio, and the filter's own
 * evaluation over records already parsed; medians of rounds.
 *
 *   bench_filter [--records N] [--rounds R]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testing.h"

static const char filter_json[] =
    "{\"all\": [{\"field\": \"language\", \"in\": [\"en\"]}, {\"field\": \"language_score\", "
    "\"ge\": 0.65}, {\"field\": \"$bytes\", \"ge\": 200}, {\"not\": {\"field\": \"url\", \"eq\": "
    "\"http://example.com/\"}}, {\"any\": [{\"field\": \"dump\", \"eq\": \"CC-MAIN-2024-10\"}, "
    "{\"field\": \"token_count\", \"lt\": 2000}]}]}";

static void die(const char *what, const char *message)
{
    fprintf(stderr, "bench_filter: %s: %s\n", what, message);
    exit(1);
}

static unsigned next_random(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (*state >> 8) & 0xffffff;
}

/* N records of JSON lines, deterministic; *len their bytes. */
static char *make_records(long n, size_t *len)
{
    static const char *const dumps[] = {"CC-MAIN-2024-10", "CC-MAIN-2023-50", "CC-MAIN-2023-40",
                                        "CC-MAIN-2013-20"};
    static const char *const langs[] = {"en", "en", "en", "en", "de", "fr"};
    static const char *const words[] = {"the", "data",     "loader",   "caf\\u00e9", "order",
                                        "of",  "training", "\xce\xbb", "tokens",     "and"};
    char *text = NULL;
    FILE *out = open_memstream(&text, len);
    unsigned state = 1;
    for (long i = 0; i < n; i++) {
        int target = 100 + (int)(next_random(&state) % 2901);
        unsigned url = next_random(&state) % 50;
        fprintf(out,
                "{\"id\": \"<urn:uuid:%08lx>\", \"dump\": \"%s\", \"url\": \"%s\", "
                "\"date\": \"2024-02-2%uT05:%02u:00Z\", \"language\": \"%s\", "
                "\"language_score\": %.4f, \"token_count\": %d, \"text\": \"",
                i, dumps[next_random(&state) % 4],
                url == 0 ? "http://example.com/" : "https://example.org/page", (unsigned)(i % 10),
                (unsigned)(i % 60), langs[next_random(&state) % 6],
                0.3 + (next_random(&state) % 7000) / 10000.0,
                target / 4 + (int)(next_random(&state) % 1000));
        for (int written = 0; written < target;) {
            const char *w = words[next_random(&state) % 10];
            fprintf(out, "%s ", w);
            written += (int)strlen(w) + 1;
        }
        fprintf(out, "\"}\n");
    }
    if (fclose(out) != 0)
        die("records", "out of memory");
    return text;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int kept(void *context, const char *text, size_t len, uint64_t record)
{
    (void)text, (void)record;
    *(size_t *)context += len;
    return 0;
}

/* ns per record of one scan of the records. */
static double scan(const char *data, size_t len, long n, const ordo__filter *filter,
                   ordo__counts *counts)
{
    ordo__read_spec spec = {"text", filter, 0, 0};
    ordo__origin origin = {"bench", UINT64_MAX, 0, 1, NULL};
    ordo_error err;
    size_t bytes = 0;
    *counts = (ordo__counts){0};
    double start = now();
    if (ordo__scan_records(ORDO_FORMAT_JSONL, data, len, &spec, &origin, kept, &bytes, counts,
                           &err) != ORDO_OK)
        die("scan", err.message);
    return (now() - start) * 1e9 / (double)n;
}

typedef struct {
    const json_t *record;
    const ordo__filter *filter;
} fields;

static ordo_status field(void *context, uint32_t index, ordo__field_value *out, ordo_error *err)
{
    (void)err;
    const fields *f = context;
    ordo__json_value(ordo__json_path(f->record, ordo__filter_field(f->filter, index)), out);
    return ORDO_OK;
}

/* ns per record of the filter alone, over records already parsed. */
static double evaluate(json_t *const *records, long n, const ordo__filter *filter, long *passed)
{
    ordo_error err;
    *passed = 0;
    double start = now();
    for (long i = 0; i < n; i++) {
        fields f = {records[i], filter};
        size_t bytes = json_string_length(json_object_get(records[i], "text"));
        int pass = 0;
        if (ordo__filter_eval(filter, bytes, field, &f, &pass, &err) != ORDO_OK)
            die("eval", err.message);
        *passed += pass;
    }
    return (now() - start) * 1e9 / (double)n;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

int main(int argc, char **argv)
{
    long n = 20000;
    int rounds = 7;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--records") == 0 && i + 1 < argc)
            n = atol(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else
            die("usage", "bench_filter [--records N] [--rounds R]");
    }
    if (n < 1 || rounds < 1 || rounds > 99)
        die("usage", "need --records >= 1 and 1 <= --rounds <= 99");
    size_t len = 0;
    char *data = make_records(n, &len);
    json_t *spec = json_loads(filter_json, 0, NULL);
    ordo__filter *filter = NULL;
    ordo_error err;
    if (ordo__filter_compile(spec, "bench", &filter, &err) != ORDO_OK)
        die("filter", err.message);
    json_t **parsed = malloc((size_t)n * sizeof *parsed);
    size_t at = 0;
    for (long i = 0; i < n; i++) {
        size_t end = at;
        while (data[end] != '\n')
            end++;
        parsed[i] = json_loadb(data + at, end - at, 0, NULL);
        at = end + 1;
    }
    printf("filter: %ld records, %.1f MB of JSON lines, %d rounds (ABBA within each)\n", n,
           (double)len / 1e6, rounds);
    printf("%5s %13s %13s %8s %13s\n", "round", "plain ns/rec", "filter ns/rec", "ratio",
           "eval ns/rec");
    double plain[99], filtered[99], ratio[99], eval[99];
    ordo__counts counts = {0};
    long passed = 0;
    for (int r = 0; r < rounds; r++) {
        double a = scan(data, len, n, NULL, &counts);
        double b = scan(data, len, n, filter, &counts);
        b += scan(data, len, n, filter, &counts);
        a += scan(data, len, n, NULL, &counts);
        plain[r] = a / 2;
        filtered[r] = b / 2;
        ratio[r] = filtered[r] / plain[r];
        eval[r] = evaluate(parsed, n, filter, &passed);
        printf("%5d %13.1f %13.1f %8.3f %13.1f\n", r + 1, plain[r], filtered[r], ratio[r], eval[r]);
    }
    scan(data, len, n, filter, &counts);
    printf("median: plain %.1f ns/record, filtered %.1f ns/record, ratio %.3f; the filter "
           "alone %.1f ns/record\n",
           median(plain, rounds), median(filtered, rounds), median(ratio, rounds),
           median(eval, rounds));
    printf("passed %llu of %llu records (%.1f%%); evaluation agrees: %s\n",
           (unsigned long long)counts.passed, (unsigned long long)counts.read,
           100.0 * (double)counts.passed / (double)counts.read,
           (uint64_t)passed == counts.passed ? "yes" : "NO");
    for (long i = 0; i < n; i++)
        json_decref(parsed[i]);
    free(parsed);
    ordo__filter_free(filter);
    json_decref(spec);
    free(data);
    return (uint64_t)passed == counts.passed ? 0 : 1;
}
