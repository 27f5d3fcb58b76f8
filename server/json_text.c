/* Answers built as text around the library's JSON views: a list of a
 * thousand steps is each step's view joined by commas, not a tree of
 * Jansson values parsed back from the views and dumped again. */
#include <stdlib.h>
#include <string.h>

#include "server.h"

/* Appends `len` bytes; a failure is remembered and ends the building. */
static void append(json_text *t, const char *bytes, size_t len)
{
    if (t->failed)
        return;
    if (t->len + len + 2 > t->cap) { /* room for the final "\n" and NUL */
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + len + 2)
            cap *= 2;
        char *grown = realloc(t->data, cap);
        if (!grown) {
            t->failed = 1;
            return;
        }
        t->data = grown;
        t->cap = cap;
    }
    memcpy(t->data + t->len, bytes, len);
    t->len += len;
}

/* Appends JSON text as it is. */
void json_text_raw(json_text *t, const char *text)
{
    append(t, text, strlen(text));
}

/* Appends a view (stolen), after a comma unless it is the list's first.
 * A NULL view is left out, as Jansson leaves out a NULL array item. */
void json_text_item(json_text *t, char *view)
{
    if (!view)
        return;
    if (t->items++ > 0)
        append(t, ",", 1);
    append(t, view, strlen(view));
    ordo_free(view);
}

/* The answer: the text and a newline (as server_render ends every JSON
 * body), or the 500 json_ok gives for a body that could not be built. */
response json_text_ok(json_text *t, int status)
{
    if (t->failed || !t->data) {
        free(t->data);
        return json_ok(status, NULL);
    }
    memcpy(t->data + t->len, "\n", 2);
    response out = {.status = status, .owned_text = t->data};
    *t = (json_text){0};
    return out;
}
