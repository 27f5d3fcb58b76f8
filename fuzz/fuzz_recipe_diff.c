/* Fuzzes the recipe diff (ordo_recipe_diff) with two arbitrary JSON texts:
 * the input up to its first NUL byte is recipe a, the rest recipe b (no
 * NUL: b is a against itself). What it must hold: a text that is not a
 * JSON object is refused, never misread; a diff is a JSON array of
 * {"key", "a", "b"} entries; a recipe against itself differs in nothing;
 * a and b differ in nothing exactly when they are equal as JSON. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "ordo.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* The diff of a and b, checked for its shape; NULL when refused. */
static json_t *diff_of(const char *a, const char *b)
{
    char *text = NULL;
    ordo_error err;
    ordo_status status = ordo_recipe_diff(a, b, &text, &err);
    if (status != ORDO_OK) {
        if (text || (status != ORDO_INVALID && status != ORDO_NOMEM))
            abort();
        return NULL;
    }
    json_t *diff = json_loads(text, 0, NULL);
    ordo_free(text);
    if (!json_is_array(diff))
        abort();
    for (size_t i = 0; i < json_array_size(diff); i++) {
        json_t *e = json_array_get(diff, i);
        if (json_object_size(e) != 3 || !json_is_string(json_object_get(e, "key")) ||
            !json_object_get(e, "a") || !json_object_get(e, "b"))
            abort();
    }
    return diff;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char *text = malloc(size + 2);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = text[size + 1] = '\0';
    const char *a = text, *b = memchr(text, '\0', size) ? text + strlen(text) + 1 : text;
    json_t *ja = json_loads(a, 0, NULL), *jb = json_loads(b, 0, NULL);
    json_t *self = diff_of(a, a), *diff = diff_of(a, b);
    if (json_is_object(ja) && (!self || json_array_size(self) != 0))
        abort(); /* a recipe against itself */
    if (json_is_object(ja) && json_is_object(jb) && diff &&
        (json_array_size(diff) == 0) != (json_equal(ja, jb) != 0))
        abort(); /* no entries exactly when equal */
    json_decref(self);
    json_decref(diff);
    json_decref(ja);
    json_decref(jb);
    free(text);
    return 0;
}
