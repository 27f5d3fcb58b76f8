/* Fields of JSON records by dotted path, and their values as filters see
 * them. */
#include <string.h>

#include "shards.h"

/* The value at a dotted path; see shards.h. */
const json_t *ordo__json_path(const json_t *record, const char *path)
{
    const json_t *at = record;
    const char *part = path;
    for (;;) {
        if (!json_is_object(at))
            return NULL;
        const char *dot = strchr(part, '.');
        size_t n = dot ? (size_t)(dot - part) : strlen(part);
        at = json_object_getn(at, part, n);
        if (!at || !dot)
            return at;
        part = dot + 1;
    }
}

/* A field name or a dotted path of them; see shards.h. */
int ordo__dotted_path(const char *path)
{
    size_t n = strlen(path);
    return n > 0 && path[0] != '.' && path[n - 1] != '.' && !strstr(path, "..");
}

/* A JSON value as a filter sees it; see shards.h. */
void ordo__json_value(const json_t *json, ordo__field_value *out)
{
    *out = (ordo__field_value){.kind = ORDO__VALUE_MISSING};
    if (!json)
        return;
    switch (json_typeof(json)) {
    case JSON_NULL: out->kind = ORDO__VALUE_NULL; break;
    case JSON_TRUE:
    case JSON_FALSE:
        out->kind = ORDO__VALUE_BOOL;
        out->b = json_is_true(json);
        break;
    case JSON_INTEGER:
        out->kind = ORDO__VALUE_INT;
        out->i = (int64_t)json_integer_value(json);
        break;
    case JSON_REAL:
        out->kind = ORDO__VALUE_DOUBLE;
        out->d = json_real_value(json);
        break;
    case JSON_STRING:
        out->kind = ORDO__VALUE_STRING;
        out->s = json_string_value(json);
        out->len = json_string_length(json);
        break;
    default: out->kind = ORDO__VALUE_OTHER;
    }
}
