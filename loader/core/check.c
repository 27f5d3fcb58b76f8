/* Validation helpers shared by the recording calls. */
#include <jansson.h>
#include <string.h>

#include "core.h"

/* 1..255 bytes of valid UTF-8 without control characters. */
ordo_status ordo__check_name(const char *name, const char *what, ordo_error *err)
{
    if (!name || !*name)
        return ordo__error(err, ORDO_INVALID, "%s is empty", what);
    size_t len = strlen(name);
    if (len > ORDO_NAME_MAX)
        return ordo__error(err, ORDO_INVALID, "%s is %zu bytes long, more than %d", what, len,
                           ORDO_NAME_MAX);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7f)
            return ordo__error(err, ORDO_INVALID, "%s has a control character (0x%02x) at byte %zu",
                               what, c, i);
    }
    json_t *probe = json_stringn(name, len); /* NULL when not valid UTF-8 */
    if (!probe)
        return ordo__error(err, ORDO_INVALID, "%s is not valid UTF-8", what);
    json_decref(probe);
    return ORDO_OK;
}

/* A run's name: a name (ordo__check_name) without '/'. */
ordo_status ordo__check_run_name(const char *name, const char *what, ordo_error *err)
{
    ordo_status status = ordo__check_name(name, what, err);
    if (status == ORDO_OK && strchr(name, '/'))
        status = ordo__error(err, ORDO_INVALID,
                             "run names may not contain '/' (they are URL "
                             "path segments)");
    return status;
}

/* A run name as every caller must give it; see ordo.h. */
ordo_status ordo_run_name_check(const char *name, ordo_error *err)
{
    ordo_status status = ordo__check_run_name(name, "run name", err);
    return status == ORDO_OK ? ordo__ok(err) : status;
}

/* `text` parses as a JSON object. */
ordo_status ordo__check_json_object(const char *text, const char *what, ordo_error *err)
{
    json_error_t jerr;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return ordo__error(err, ORDO_INVALID, "%s is not valid JSON: line %d, column %d: %s", what,
                           jerr.line, jerr.column, jerr.text);
    int is_object = json_is_object(root);
    json_decref(root);
    if (!is_object)
        return ordo__error(err, ORDO_INVALID, "%s must be a JSON object", what);
    return ORDO_OK;
}
