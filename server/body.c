/* What a request body may cost before it is parsed, and the keys a body
 * may have. Jansson has no limit on the values of a document, and an empty
 * object costs it a few hundred bytes for three bytes of input, so the
 * bytes are scanned first (one pass, no allocation): values, containers
 * and nesting are counted and a body beyond the limits is refused before
 * Jansson sees it. */
#include <malloc.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "server.h"

/* Skips a string starting at body[i] == '"'; returns the index after it. */
static size_t skip_string(const char *body, size_t len, size_t i)
{
    for (i++; i < len; i++) {
        if (body[i] == '\\')
            i++;
        else if (body[i] == '"')
            return i + 1;
    }
    return len;
}

/* Counts the body's values; 0 when within the limits, else fills *error. */
int body_scan(const char *body, size_t len, response *error)
{
    size_t values = 0, containers = 0, depth = 0, deepest = 0;
    int value_may_start = 1; /* after '[', '{', ',', ':' or at the start */
    for (size_t i = 0; i < len;) {
        char c = body[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            i++;
            continue;
        }
        if (c == '{' || c == '[') {
            values++, containers++;
            deepest = ++depth > deepest ? depth : deepest;
            value_may_start = 1;
        } else if (c == '}' || c == ']') {
            depth -= depth > 0;
            value_may_start = 0;
        } else if (c == ',' || c == ':') {
            value_may_start = 1;
        } else if (c == '"') {
            values++; /* keys too: each costs Jansson an entry */
            i = skip_string(body, len, i);
            value_may_start = 0;
            continue;
        } else if (value_may_start) { /* a number or a literal */
            values++;
            value_may_start = 0;
        }
        i++;
        if (deepest > SERVER_MAX_DEPTH || containers > SERVER_MAX_CONTAINERS ||
            values > SERVER_MAX_VALUES)
            break;
    }
    if (deepest > SERVER_MAX_DEPTH)
        *error =
            json_error(413, "too_large", "the body nests deeper than %d levels", SERVER_MAX_DEPTH);
    else if (containers > SERVER_MAX_CONTAINERS)
        *error = json_error(413, "too_large", "the body has more than %d arrays and objects",
                            SERVER_MAX_CONTAINERS);
    else if (values > SERVER_MAX_VALUES)
        *error = json_error(413, "too_large", "the body has more than %d values and keys",
                            SERVER_MAX_VALUES);
    else
        return 0;
    return -1;
}

/* Bytes of parse cost reserved by the requests in flight. */
static atomic_llong parsing;

/* Reserves the body's parse cost; see server.h. */
int body_reserve(request *req, response *error)
{
    long long cost = (long long)req->body_len * SERVER_PARSE_COST;
    if (atomic_fetch_add(&parsing, cost) + cost > SERVER_PARSE_BUDGET && cost > 0) {
        atomic_fetch_sub(&parsing, cost);
        *error = json_error(503, "busy",
                            "the server is parsing other large bodies (at most "
                            "%lld MiB of parse cost at once, this one needs %lld "
                            "MiB); try again",
                            SERVER_PARSE_BUDGET >> 20, cost >> 20);
        return -1;
    }
    req->parsing += cost;
    return 0;
}

/* Gives back the request's reservation; see server.h. After a large body
 * the freed memory goes back to the system: each thread allocates from its
 * own arena, which would otherwise keep a parse's peak, and the next large
 * body parsed on another thread would add its own. */
void body_release(request *req)
{
    atomic_fetch_sub(&parsing, req->parsing);
    if (req->parsing >= SERVER_TRIM_AFTER)
        malloc_trim(0);
    req->parsing = 0;
}

/* The first key of `object` that is not in `known`; see server.h. */
const char *unknown_key(json_t *object, const char *const *known)
{
    const char *key;
    json_t *value;
    json_object_foreach(object, key, value)
    {
        size_t k = 0;
        while (known[k] && strcmp(known[k], key) != 0)
            k++;
        if (!known[k])
            return key;
    }
    return NULL;
}

/* 0 when every key of the body is known, else fills *error; see server.h. */
int body_keys(json_t *body, const char *const *known, const char *what, response *error)
{
    const char *key = unknown_key(body, known);
    if (!key)
        return 0;
    char list[256];
    size_t n = 0;
    for (size_t k = 0; known[k] && n < sizeof list; k++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", k ? ", " : "", known[k]);
    *error = json_error(400, "invalid", "%s: unknown key '%.100s' (known: %s)", what, key, list);
    return -1;
}

/* Whether an allocation failed on this thread since body_memory_reset:
 * Jansson reports a failed allocation inside its lexer as a syntax error
 * ("invalid token"), so the parse's own error cannot tell memory from
 * JSON. */
static _Thread_local int allocation_failed;

static void *noting_malloc(size_t size)
{
    void *p = malloc(size);
    if (!p)
        allocation_failed = 1;
    return p;
}

/* Makes Jansson allocate through noting_malloc; see server.h. */
void body_memory_watch(void)
{
    json_set_alloc_funcs(noting_malloc, free);
}

/* Clears this thread's note of a failed allocation; see server.h. */
void body_memory_reset(void)
{
    allocation_failed = 0;
}

/* Whether an allocation failed on this thread since the reset; see server.h. */
int body_memory_failed(void)
{
    return allocation_failed;
}
