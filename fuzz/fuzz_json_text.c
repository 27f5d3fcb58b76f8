/* Fuzzes the text field read without Jansson (shards/json_text.c) against
 * Jansson itself: whenever it answers, Jansson must accept the line as an
 * object and hold the same text, byte for byte (null for null). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static const char *const fields[] = {"text", "content", "t"};
    char *buffer = NULL;
    size_t capacity = 0;
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        const char *text = NULL;
        size_t len = 0;
        if (!ordo__json_text_fast((const char *)data, size, fields[f], &buffer, &capacity, &text,
                                  &len))
            continue;
        json_t *record = json_loadb((const char *)data, size, JSON_ALLOW_NUL, NULL);
        const json_t *want = json_is_object(record) ? json_object_get(record, fields[f]) : NULL;
        if (!want)
            abort();
        if (json_is_null(want)
                ? text != NULL
                : !json_is_string(want) || !text || len != json_string_length(want) ||
                      memcmp(text, json_string_value(want), len) != 0)
            abort();
        json_decref(record);
    }
    free(buffer);
    return 0;
}
