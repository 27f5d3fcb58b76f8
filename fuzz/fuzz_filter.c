/* Fuzzes source filters: the input's first line is a filter's JSON, the
 * rest JSON-lines records. A filter that compiles has a canonical form
 * that compiles to itself and decides every record as the filter does
 * (errors included); {"not": filter} decides the opposite; and the record
 * scanner reads the records under it. */
#include <stdlib.h>
#include <string.h>

#include "testing.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

typedef struct {
    const json_t *record;
    const ordo__filter *filter;
} fields;

static ordo_status field(void *context, uint32_t index, ordo__field_value *out, ordo_error *err)
{
    (void)err;
    const fields *f = context;
    if (index >= ordo__filter_field_count(f->filter))
        abort();
    ordo__json_value(ordo__json_path(f->record, ordo__filter_field(f->filter, index)), out);
    return ORDO_OK;
}

static char *canonical_text(const ordo__filter *filter)
{
    json_t *canonical = ordo__filter_canonical(filter);
    char *text = json_dumps(canonical, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    json_decref(canonical);
    if (!text)
        abort();
    return text;
}

static ordo__filter *compile_text(const char *text)
{
    json_t *spec = json_loads(text, 0, NULL);
    ordo__filter *filter = NULL;
    ordo_error err;
    if (!spec || ordo__filter_compile(spec, "fuzz", &filter, &err) != ORDO_OK)
        abort();
    json_decref(spec);
    return filter;
}

/* One record under the filter, its canonical twin and its negation. */
static void decide(const json_t *record, size_t bytes, const ordo__filter *filter,
                   const ordo__filter *twin, const ordo__filter *negated)
{
    ordo_error err;
    int pass = 0, twin_pass = 0, negated_pass = 0;
    fields a = {record, filter}, b = {record, twin}, c = {record, negated};
    ordo_status status = ordo__filter_eval(filter, bytes, field, &a, &pass, &err);
    ordo_status twin_status = ordo__filter_eval(twin, bytes, field, &b, &twin_pass, &err);
    if (status != twin_status || pass != twin_pass)
        abort();
    if (status != ORDO_OK && strncmp(err.message, "field '", 7) != 0)
        abort();
    if (negated) {
        ordo_status negated_status =
            ordo__filter_eval(negated, bytes, field, &c, &negated_pass, &err);
        if (negated_status != status || (status == ORDO_OK && negated_pass == pass))
            abort();
    }
}

static void records(const char *lines, size_t len, const ordo__filter *filter,
                    const ordo__filter *twin, const ordo__filter *negated)
{
    size_t start = 0;
    while (start < len) {
        const char *newline = memchr(lines + start, '\n', len - start);
        size_t end = newline ? (size_t)(newline - lines) : len;
        json_t *record = json_loadb(lines + start, end - start, 0, NULL);
        if (record) {
            const json_t *text = json_object_get(record, "text");
            decide(record, json_is_string(text) ? json_string_length(text) : end - start, filter,
                   twin, negated);
            json_decref(record);
        }
        start = end + 1;
    }
    ordo_error err;
    ordo__origin origin = {"fuzz", UINT64_MAX, 0, 1, NULL};
    ordo__read_spec spec = {"text", filter, 0, 0};
    ordo__counts counts = {0};
    ordo__scan_records(ORDO_FORMAT_JSONL, lines, len, &spec, &origin, NULL, NULL, &counts, &err);
    uint64_t decided = counts.empty + counts.filtered + counts.passed;
    if (counts.read != decided && counts.read != decided + 1)
        abort(); /* a record that failed is read but neither kept nor dropped */
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const char *text = (const char *)data;
    const char *newline = memchr(text, '\n', size);
    size_t head = newline ? (size_t)(newline - text) : size;
    json_t *spec = json_loadb(text, head, JSON_DECODE_ANY, NULL);
    if (!spec)
        return 0;
    ordo__filter *filter = NULL;
    ordo_error err;
    if (ordo__filter_compile(spec, "fuzz", &filter, &err) != ORDO_OK) {
        if (strncmp(err.message, "recipe: sources.fuzz.filter", 27) != 0 || filter)
            abort();
        json_decref(spec);
        return 0;
    }
    char *canonical = canonical_text(filter);
    ordo__filter *twin = compile_text(canonical);
    char *again = canonical_text(twin);
    if (strcmp(canonical, again) != 0)
        abort();
    json_t *not_spec = json_pack("{s:O}", "not", spec);
    ordo__filter *negated = NULL;
    if (ordo__filter_compile(not_spec, "fuzz", &negated, &err) != ORDO_OK)
        negated = NULL; /* one level too deep */
    if (newline)
        records(newline + 1, size - head - 1, filter, twin, negated);
    json_decref(not_spec);
    json_decref(spec);
    free(canonical);
    free(again);
    ordo__filter_free(negated);
    ordo__filter_free(twin);
    ordo__filter_free(filter);
    return 0;
}
