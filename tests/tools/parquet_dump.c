/* What ordo reads from a Parquet file, as JSON lines, for the conformance
 * suite (tests/parquet_conformance.sh) to compare with what a real writer
 * was given and what another reader reads:
 *
 *   parquet_dump columns FILE COLUMN...   every row: [value, ...] of the
 *       dotted leaf columns (ordo__pq_scan_columns); null for a null,
 *       "$missing" for a column the file does not have
 *   parquet_dump docs FILE TEXT_FIELD     every kept document:
 *       {"record": N, "text": "..."} (ordo__file_scan; the format by the
 *       file's name, so a .jsonl of the same rows can be compared), then
 *       {"read": R, "passed": P, "filtered": F, "empty": E}
 *   parquet_dump chunks FILE TEXT_FIELD LIMIT
 *       the same through the chunk table: indexed with chunks of at most
 *       LIMIT bytes, then every chunk read (ordo__chunk_read), documents
 *       in chunk order, then the index's counts and {"chunks": N,
 *       "largest": the most text bytes (raw_length) of one chunk}
 *
 * An error prints "parquet_dump: <message>" on stderr and exits 1. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"

static void print_string(const char *s, size_t len)
{
    json_t *j = json_stringn_nocheck(s, len);
    char *text = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;
    fputs(text ? text : "\"$not-utf8\"", stdout);
    free(text);
    json_decref(j);
}

static void print_value(const ordo__field_value *v)
{
    switch (v->kind) {
    case ORDO__VALUE_MISSING: fputs("\"$missing\"", stdout); break;
    case ORDO__VALUE_NULL: fputs("null", stdout); break;
    case ORDO__VALUE_BOOL: fputs(v->b ? "true" : "false", stdout); break;
    case ORDO__VALUE_INT: printf("%lld", (long long)v->i); break;
    case ORDO__VALUE_DOUBLE: printf("%.17g", v->d); break;
    case ORDO__VALUE_STRING: print_string(v->s, v->len); break;
    default: fputs("\"$other\"", stdout);
    }
}

typedef struct {
    size_t count;
} row_context;

static int print_row(void *context, uint64_t row, const ordo__field_value *values)
{
    (void)row;
    const row_context *c = context;
    putchar('[');
    for (size_t i = 0; i < c->count; i++) {
        if (i)
            putchar(',');
        print_value(&values[i]);
    }
    fputs("]\n", stdout);
    return 0;
}

/* context: NULL, or the record number of the chunk's first record (a
 * chunk read numbers its records from its first) */
static int print_doc(void *context, const char *text, size_t len, uint64_t record)
{
    uint64_t base = context ? *(const uint64_t *)context : 0;
    printf("{\"record\": %llu, \"text\": ", (unsigned long long)(base + record));
    print_string(text, len);
    fputs("}\n", stdout);
    return 0;
}

static void print_counts(const ordo__counts *c)
{
    printf("{\"read\": %llu, \"passed\": %llu, \"filtered\": %llu, \"empty\": %llu}\n",
           (unsigned long long)c->read, (unsigned long long)c->passed,
           (unsigned long long)c->filtered, (unsigned long long)c->empty);
}

static ordo_status chunks(const char *path, const char *field, uint64_t limit, ordo_error *err)
{
    ordo__shard shard = {.format = ORDO_FORMAT_PARQUET};
    ordo__read_spec spec = {field, NULL, 0, 0};
    ordo__index_spec index = {.read = spec, .per_chunk = 1, .chunk_limit = limit, .lanes = 1};
    ordo_status status = ordo__sha256_file(path, shard.sha256, &shard.size, err);
    if (status == ORDO_OK)
        status = ordo__shard_index(path, &shard, &index, err);
    for (uint32_t c = 0; status == ORDO_OK && c < shard.chunk_count; c++) {
        ordo__counts counts = {0};
        uint64_t base = shard.chunks[c].first_record;
        status = ordo__chunk_read(path, &shard, c, &spec, print_doc, &base, &counts, err);
    }
    if (status == ORDO_OK) {
        uint64_t largest = 0;
        for (uint32_t c = 0; c < shard.chunk_count; c++)
            if (shard.chunks[c].raw_length > largest)
                largest = shard.chunks[c].raw_length;
        print_counts(&shard.counts);
        printf("{\"chunks\": %u, \"largest\": %llu}\n", shard.chunk_count,
               (unsigned long long)largest);
    }
    free(shard.chunks);
    free(shard.aux);
    return status;
}

int main(int argc, char **argv)
{
    ordo_error err = {0};
    ordo_status status;
    if (argc >= 3 && !strcmp(argv[1], "columns")) {
        row_context c = {(size_t)(argc - 3)};
        status = ordo__pq_scan_columns(argv[2], (const char *const *)argv + 3, c.count, print_row,
                                       &c, &err);
    } else if (argc == 4 && !strcmp(argv[1], "docs")) {
        ordo__read_spec spec = {argv[3], NULL, 0, 0};
        ordo__counts counts = {0};
        enum ordo__format format = ORDO_FORMAT_PARQUET;
        if (ordo__format_of(argv[2], &format) != 0)
            format = ORDO_FORMAT_PARQUET;
        status = ordo__file_scan(argv[2], format, &spec, print_doc, NULL, &counts, &err);
        if (status == ORDO_OK)
            print_counts(&counts);
    } else if (argc == 5 && !strcmp(argv[1], "chunks")) {
        status = chunks(argv[2], argv[3], strtoull(argv[4], NULL, 10), &err);
    } else {
        fprintf(stderr, "usage: parquet_dump columns FILE COLUMN... | docs FILE TEXT_FIELD | "
                        "chunks FILE TEXT_FIELD LIMIT\n");
        return 2;
    }
    fflush(stdout);
    if (status != ORDO_OK) {
        fprintf(stderr, "parquet_dump: %s\n", err.message);
        return 1;
    }
    return 0;
}
