/* How two recipes differ, value by value: what `ordo compare`, the
 * service's compare and the dashboard's compare view show. The rule is
 * one walk over both canonical JSONs:
 *  - objects: their keys in bytewise order, a key of one side only is one
 *    entry with the whole value and null on the other side;
 *  - arrays whose elements are all objects with a distinct string "name"
 *    (sources) are matched by name, those with a distinct "path" (shards)
 *    by path, both in bytewise order: `sources.web.weight`,
 *    `sources.web.shards["web/0.jsonl"].sha256`; when the elements both
 *    sides share come in another order, one more entry `...[*].name` (or
 *    `[*].path`) gives both orders;
 *  - other arrays by index, `schedule[1].weights.web`; elements past the
 *    shorter side are entries of their own;
 *  - anything else (and values of different JSON types) is one entry when
 *    the two values are not equal.
 * A key that is not a plain word ([A-Za-z_][A-Za-z0-9_-]*) is written as a
 * JSON string in brackets, `["my key"]`, so paths read back unambiguously. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "recipe_diff.h"

typedef struct {
    char *path; /* the key being walked, NUL-terminated */
    size_t len, cap;
    json_t *out; /* the entries */
    int failed;  /* out of memory */
} differ;

static void walk(differ *d, json_t *a, json_t *b);

/* Appends `n` bytes to the path. */
static void push(differ *d, const char *text, size_t n)
{
    if (d->failed)
        return;
    if (d->len + n + 1 > d->cap) {
        size_t cap = (d->len + n + 1) * 2;
        char *grown = realloc(d->path, cap);
        if (!grown) {
            d->failed = 1;
            return;
        }
        d->path = grown;
        d->cap = cap;
    }
    memcpy(d->path + d->len, text, n);
    d->len += n;
    d->path[d->len] = '\0';
}

static int plain_word(const char *key)
{
    if (!((*key >= 'A' && *key <= 'Z') || (*key >= 'a' && *key <= 'z') || *key == '_'))
        return 0;
    for (const char *c = key + 1; *c; c++)
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '-'))
            return 0;
    return 1;
}

/* ".key" (no dot at the root), or `["key"]` when it is not a plain word. */
static void push_key(differ *d, const char *key)
{
    if (plain_word(key)) {
        if (d->len)
            push(d, ".", 1);
        push(d, key, strlen(key));
        return;
    }
    json_t *s = json_string(key);
    char *quoted = s ? json_dumps(s, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;
    json_decref(s);
    if (!quoted) {
        d->failed = 1;
        return;
    }
    push(d, "[", 1);
    push(d, quoted, strlen(quoted));
    push(d, "]", 1);
    free(quoted);
}

static void push_index(differ *d, size_t i)
{
    char text[32];
    push(d, text, (size_t)snprintf(text, sizeof text, "[%zu]", i));
}

/* One entry: the path, both values (NULL: absent, null in the entry). */
static void entry(differ *d, json_t *a, json_t *b)
{
    if (d->failed)
        return;
    json_t *e = json_pack("{s:s, s:O, s:O}", "key", d->path ? d->path : "", "a",
                          a ? a : json_null(), "b", b ? b : json_null());
    if (!e || json_array_append_new(d->out, e) != 0)
        d->failed = 1;
}

static int by_bytes(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The keys of both objects, sorted, each once; NULL when memory runs out.
 * The strings are the objects'. */
static const char **union_keys(json_t *a, json_t *b, size_t *count)
{
    size_t n = json_object_size(a) + json_object_size(b);
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys)
        return NULL;
    size_t k = 0;
    const char *key;
    json_t *value;
    json_object_foreach(a, key, value) keys[k++] = key;
    json_object_foreach(b, key, value) if (!json_object_get(a, key)) keys[k++] = key;
    qsort(keys, k, sizeof *keys, by_bytes);
    *count = k;
    return keys;
}

static void walk_object(differ *d, json_t *a, json_t *b)
{
    size_t count = 0, mark = d->len;
    const char **keys = union_keys(a, b, &count);
    if (!keys) {
        d->failed = 1;
        return;
    }
    for (size_t i = 0; i < count && !d->failed; i++) {
        push_key(d, keys[i]);
        walk(d, json_object_get(a, keys[i]), json_object_get(b, keys[i]));
        d->len = mark;
        if (d->path)
            d->path[mark] = '\0';
    }
    free(keys);
}

/* The string member `field` of element i, or NULL. */
static const char *member(json_t *array, size_t i, const char *field)
{
    return json_string_value(json_object_get(json_array_get(array, i), field));
}

/* `array`'s elements by their member `field` (borrowed into a new object),
 * when every element is an object with a distinct string one; else NULL. */
static json_t *keyed_by(json_t *array, const char *field)
{
    json_t *map = json_object();
    size_t n = json_array_size(array);
    for (size_t i = 0; map && i < n; i++) {
        const char *key = member(array, i, field);
        if (!key || json_object_get(map, key) ||
            json_object_set(map, key, json_array_get(array, i)))
            break;
    }
    if (map && json_object_size(map) == n)
        return map;
    json_decref(map);
    return NULL;
}

/* The keys of `array` that `other` (a map of keyed_by) holds too, in
 * `array`'s order. */
static json_t *shared_order(json_t *array, json_t *other, const char *field)
{
    json_t *order = json_array();
    for (size_t i = 0; order && i < json_array_size(array); i++)
        if (json_object_get(other, member(array, i, field)))
            json_array_append_new(order, json_string(member(array, i, field)));
    return order;
}

/* Elements matched by `field` (ka, kb: both sides' maps); the order of the
 * shared ones compared too. */
static void walk_keyed(differ *d, json_t *a, json_t *b, json_t *ka, json_t *kb, const char *field)
{
    json_t *oa = shared_order(a, kb, field), *ob = shared_order(b, ka, field);
    if (!oa || !ob)
        d->failed = 1;
    size_t mark = d->len;
    if (!d->failed && !json_equal(oa, ob)) {
        push(d, "[*].", 4);
        push(d, field, strlen(field));
        entry(d, oa, ob);
        d->len = mark;
        if (d->path)
            d->path[mark] = '\0';
    }
    if (!d->failed)
        walk_object(d, ka, kb);
    json_decref(oa);
    json_decref(ob);
}

static void walk_array(differ *d, json_t *a, json_t *b)
{
    static const char *const fields[] = {"name", "path"};
    for (size_t f = 0; f < sizeof fields / sizeof *fields; f++) {
        json_t *ka = keyed_by(a, fields[f]), *kb = ka ? keyed_by(b, fields[f]) : NULL;
        int keyed = ka && kb;
        if (keyed)
            walk_keyed(d, a, b, ka, kb, fields[f]);
        json_decref(ka);
        json_decref(kb);
        if (keyed)
            return;
    }
    size_t na = json_array_size(a), nb = json_array_size(b), mark = d->len;
    for (size_t i = 0; i < (na > nb ? na : nb) && !d->failed; i++) {
        push_index(d, i);
        walk(d, json_array_get(a, i), json_array_get(b, i));
        d->len = mark;
        if (d->path)
            d->path[mark] = '\0';
    }
}

static void walk(differ *d, json_t *a, json_t *b)
{
    if (d->failed || (a && b && json_equal(a, b)))
        return;
    if (a && b && json_typeof(a) == json_typeof(b) && json_is_object(a))
        walk_object(d, a, b);
    else if (a && b && json_typeof(a) == json_typeof(b) && json_is_array(a))
        walk_array(d, a, b);
    else
        entry(d, a, b);
}

static json_t *parse_object(const char *text, const char *side, ordo_status *status,
                            ordo_error *err)
{
    json_error_t jerr;
    json_t *value = text ? json_loads(text, 0, &jerr) : NULL;
    if (json_is_object(value))
        return value;
    json_decref(value);
    *status = ordo__error(err, ORDO_INVALID, "recipe %s is not a JSON object%s%s", side,
                          text ? ": " : "", text ? jerr.text : "");
    return NULL;
}

/* `value` as compact ASCII text with every real in the fewest digits (15,
 * 16 or 17) that read back as the same double; see recipe_diff.h. */
char *ordo__json_dumps_shortest(const json_t *value)
{
    for (int digits = 15; digits <= 17; digits++) {
        char *text = json_dumps(value, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY |
                                           JSON_REAL_PRECISION(digits));
        json_t *back = text && digits < 17 ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
        int same = digits == 17 || json_equal(back, (json_t *)value);
        json_decref(back);
        if (!text || same)
            return text;
        free(text);
    }
    return NULL;
}

/* How recipes a and b differ; see ordo.h. */
ordo_status ordo_recipe_diff(const char *a, const char *b, char **diff, ordo_error *err)
{
    *diff = NULL;
    ordo_status status = ORDO_OK;
    json_t *ja = parse_object(a, "a", &status, err);
    json_t *jb = status == ORDO_OK ? parse_object(b, "b", &status, err) : NULL;
    differ d = {.out = json_array()};
    if (status == ORDO_OK) {
        d.failed = !d.out;
        walk(&d, ja, jb);
        *diff = d.failed ? NULL : ordo__json_dumps_shortest(d.out);
        status =
            *diff ? ordo__ok(err) : ordo__error(err, ORDO_NOMEM, "out of memory comparing recipes");
    }
    free(d.path);
    json_decref(d.out);
    json_decref(ja);
    json_decref(jb);
    return status;
}
