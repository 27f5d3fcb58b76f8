/* ordo_shard_read: one shard file of any format, read through the same
 * readers a loader uses, for 'ordo tokens' and other tools. */
#include <string.h>

#include "shards.h"

typedef struct {
    ordo_document_fn fn;
    void *context;
} forward;

static int forward_doc(void *context, const char *text, size_t len, uint64_t record)
{
    forward *f = context;
    return f->fn ? f->fn(f->context, text, len, record) : 0;
}

static ordo_status compile_filter(const char *filter_json, ordo__filter **filter, ordo_error *err)
{
    *filter = NULL;
    if (!filter_json)
        return ORDO_OK;
    json_error_t jerr;
    json_t *spec = json_loads(filter_json, 0, &jerr);
    if (!spec)
        return ordo__error(err, ORDO_INVALID, "filter: invalid JSON at line %d, column %d: %s",
                           jerr.line, jerr.column, jerr.text);
    ordo_status status = ordo__filter_compile(spec, NULL, filter, err);
    json_decref(spec);
    return status;
}

/* Reads one shard file's documents; see ordo.h. */
ordo_status ordo_shard_read(const char *path, const char *text_field, const char *filter_json,
                            ordo_document_fn fn, void *context, ordo_read_counts *counts,
                            ordo_error *err)
{
    ordo_error own;
    err = err ? err : &own;
    if (counts)
        memset(counts, 0, sizeof *counts);
    enum ordo__format format;
    if (!path || ordo__format_of(path, &format) != 0)
        return ordo__error(err, ORDO_INVALID, "'%s' is not a shard file (expected %s)",
                           path ? path : "(null)", ordo__format_list);
    const char *field = text_field ? text_field : "text";
    if (!ordo__dotted_path(field))
        return ordo__error(err, ORDO_INVALID,
                           "text field '%s' must be a field name or a dotted path of them", field);
    ordo__filter *filter = NULL;
    ordo_status status = compile_filter(filter_json, &filter, err);
    ordo__read_spec spec = {field, filter, 0, 0};
    forward f = {fn, context};
    ordo__counts got = {0};
    if (status == ORDO_OK)
        status = ordo__file_scan(path, format, &spec, forward_doc, &f, &got, err);
    ordo__filter_free(filter);
    if (status == ORDO_OK && counts)
        *counts = (ordo_read_counts){got.read, got.passed, got.filtered, got.empty};
    return status == ORDO_OK ? ordo__ok(err) : status;
}
