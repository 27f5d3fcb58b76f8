/* Filters: compiling a source's "filter" JSON into a tree, normalised so
 * that one filter written two ways compiles to one tree (docs/recipe.md,
 * "Filters"). Errors name the filter's path in the recipe. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"

typedef struct {
    ordo__filter *filter;
    const char *source;
    size_t nodes;
    ordo_error *err;
} parse_ctx;

/* Child paths are built in buffers of this size (cut short past it, which
 * only shortens a message). */
#define PATH_SIZE 480

/* `path` + ".key" (index < 0) or "key[index]" / ".key[index]" into `out`
 * (PATH_SIZE bytes). */
static void sub_path(char *out, const char *path, const char *key, long index)
{
    const char *dot = *key ? "." : "";
    int n = index < 0 ? snprintf(out, PATH_SIZE, "%s%s%s", path, dot, key)
                      : snprintf(out, PATH_SIZE, "%s%s%s[%ld]", path, dot, key, index);
    if (n < 0)
        out[0] = '\0';
}

static ordo_status fail(parse_ctx *c, const char *path, const char *fmt, ...) ORDO_PRINTF(3, 4);

static ordo_status fail(parse_ctx *c, const char *path, const char *fmt, ...)
{
    char detail[ORDO_ERROR_MESSAGE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (!c->source) /* a filter given alone (ordo_shard_read) */
        return ordo__error(c->err, ORDO_INVALID, "filter%s: %s", path, detail);
    return ordo__error(c->err, ORDO_INVALID, "recipe: sources.%s.filter%s: %s", c->source, path,
                       detail);
}

static ordo_status no_memory(parse_ctx *c)
{
    return ordo__error(c->err, ORDO_NOMEM, "out of memory compiling the filter of source '%s'",
                       c->source ? c->source : "(none)");
}

static int op_of(const char *key)
{
    for (int op = ORDO__OP_EQ; op <= ORDO__OP_NOT; op++)
        if (strcmp(key, ordo__filter_op_names[op]) == 0)
            return op;
    return -1;
}

static int combinator(int op)
{
    return op == ORDO__OP_ALL || op == ORDO__OP_ANY || op == ORDO__OP_NOT;
}

/* The field's number, registering it on first use. */
static ordo_status field_number(parse_ctx *c, const char *path, const char *name, uint32_t *out)
{
    ordo__filter *f = c->filter;
    for (uint32_t i = 0; i < f->field_count; i++)
        if (strcmp(f->fields[i], name) == 0) {
            *out = i;
            return ORDO_OK;
        }
    if (f->field_count == ORDO__FILTER_MAX_FIELDS)
        return fail(c, path, "more than %d different fields in one filter",
                    ORDO__FILTER_MAX_FIELDS);
    char **grown = realloc(f->fields, (f->field_count + 1) * sizeof *grown);
    if (!grown)
        return no_memory(c);
    f->fields = grown;
    if (!(f->fields[f->field_count] = ordo__strdup(name)))
        return no_memory(c);
    *out = f->field_count++;
    return ORDO_OK;
}

static ordo_status parse_field(parse_ctx *c, const json_t *json, const char *path, uint32_t *out)
{
    const char *name = json_string_value(json);
    if (!name || strlen(name) != json_string_length(json) || !ordo__dotted_path(name))
        return fail(c, path,
                    "must be a field name or a dotted path of them (\"meta.quality.score\": "
                    "each dot one object deeper), or \"$bytes\"");
    if (strcmp(name, "$bytes") == 0) {
        *out = ORDO__FIELD_BYTES;
        return ORDO_OK;
    }
    if (name[0] == '$')
        return fail(c, path,
                    "unknown special field '%s' (names starting with '$' are reserved; "
                    "\"$bytes\" is the text's length in bytes)",
                    name);
    return field_number(c, path, name, out);
}

/* A JSON scalar as a value: integral reals in the int64 range become
 * integers (200.0 is the threshold 200), so they compare, sort and print
 * as one. */
static ordo_status parse_scalar(parse_ctx *c, const json_t *json, ordo__field_value *out)
{
    *out = (ordo__field_value){.kind = ORDO__VALUE_MISSING};
    if (json_is_integer(json)) {
        *out = (ordo__field_value){.kind = ORDO__VALUE_INT, .i = json_integer_value(json)};
    } else if (json_is_real(json)) {
        double d = json_real_value(json);
        if (d == trunc(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0)
            *out = (ordo__field_value){.kind = ORDO__VALUE_INT, .i = (int64_t)d};
        else
            *out = (ordo__field_value){.kind = ORDO__VALUE_DOUBLE, .d = d};
    } else if (json_is_boolean(json)) {
        *out = (ordo__field_value){.kind = ORDO__VALUE_BOOL, .b = json_is_true(json)};
    } else if (json_is_string(json)) {
        size_t len = json_string_length(json);
        char *s = malloc(len + 1);
        if (!s)
            return no_memory(c);
        memcpy(s, json_string_value(json), len + 1);
        *out = (ordo__field_value){.kind = ORDO__VALUE_STRING, .s = s, .len = len};
    }
    return ORDO_OK;
}

static int numeric(ordo__field_kind kind)
{
    return kind == ORDO__VALUE_INT || kind == ORDO__VALUE_DOUBLE;
}

static int same_kind(ordo__field_kind a, ordo__field_kind b)
{
    return a == b || (numeric(a) && numeric(b));
}

static ordo_status scalar_operand(parse_ctx *c, ordo__filter_node *node, const json_t *json,
                                  const char *path)
{
    if (json_is_null(json))
        return fail(c, path, "null is not a value to compare with (use {\"exists\": false})");
    if (node->op >= ORDO__OP_LT && node->op <= ORDO__OP_GE && !json_is_number(json))
        return fail(c, path, "must be a number (lt, le, gt and ge compare numbers)");
    if (!json_is_number(json) && !json_is_string(json) && !json_is_boolean(json))
        return fail(c, path, "must be a string, a number or a boolean");
    if (node->field == ORDO__FIELD_BYTES && !json_is_number(json))
        return fail(c, path, "\"$bytes\" is a number: compare it with numbers");
    return parse_scalar(c, json, &node->value);
}

static int value_order(const void *a, const void *b)
{
    return ordo__filter_value_cmp(a, b);
}

/* in / not_in: a non-empty array of one kind of scalar, kept sorted and
 * without duplicates; a list of one is eq / ne. */
static ordo_status list_operand(parse_ctx *c, ordo__filter_node *node, const json_t *json,
                                const char *path)
{
    size_t n = json_array_size(json);
    if (!json_is_array(json) || n == 0)
        return fail(c, path, "must be a non-empty array of strings, of numbers or of booleans");
    if (n > ORDO__FILTER_MAX_LIST)
        return fail(c, path, "has more than %d values", ORDO__FILTER_MAX_LIST);
    if (!(node->list = calloc(n, sizeof *node->list)))
        return no_memory(c);
    for (size_t i = 0; i < n; i++) {
        char at[PATH_SIZE];
        sub_path(at, path, "", (long)i);
        const json_t *item = json_array_get(json, i);
        if (!json_is_number(item) && !json_is_string(item) && !json_is_boolean(item))
            return fail(c, at, "must be a string, a number or a boolean");
        ordo_status status = parse_scalar(c, item, &node->list[i]);
        node->list_count = i + 1;
        if (status != ORDO_OK)
            return status;
        if (!same_kind(node->list[i].kind, node->list[0].kind))
            return fail(c, at, "is %s, and %s[0] %s: the values of a list are of one type",
                        ordo__filter_kind_name(node->list[i].kind), path,
                        ordo__filter_kind_name(node->list[0].kind));
        if (node->field == ORDO__FIELD_BYTES && !numeric(node->list[i].kind))
            return fail(c, at, "\"$bytes\" is a number: compare it with numbers");
    }
    qsort(node->list, n, sizeof *node->list, value_order);
    size_t kept = 1;
    for (size_t i = 1; i < n; i++) {
        if (ordo__filter_value_cmp(&node->list[kept - 1], &node->list[i]) == 0)
            free((char *)node->list[i].s);
        else
            node->list[kept++] = node->list[i];
    }
    node->list_count = kept;
    if (kept == 1) {
        node->op = node->op == ORDO__OP_IN ? ORDO__OP_EQ : ORDO__OP_NE;
        node->value = node->list[0];
        free(node->list);
        node->list = NULL;
        node->list_count = 0;
    }
    return ORDO_OK;
}

static ordo_status parse_predicate(parse_ctx *c, ordo__filter_node *node, const json_t *json,
                                   const char *path)
{
    char at[PATH_SIZE];
    sub_path(at, path, "field", -1);
    ordo_status status = parse_field(c, json_object_get(json, "field"), at, &node->field);
    if (status != ORDO_OK)
        return status;
    const json_t *operand = json_object_get(json, ordo__filter_op_names[node->op]);
    sub_path(at, path, ordo__filter_op_names[node->op], -1);
    if (node->op == ORDO__OP_EXISTS) {
        if (!json_is_boolean(operand))
            return fail(c, at, "must be true or false");
        if (node->field == ORDO__FIELD_BYTES)
            return fail(c, at, "\"$bytes\" always exists");
        node->value = (ordo__field_value){.kind = ORDO__VALUE_BOOL, .b = json_is_true(operand)};
        return ORDO_OK;
    }
    if (node->op == ORDO__OP_IN || node->op == ORDO__OP_NOT_IN)
        return list_operand(c, node, operand, at);
    return scalar_operand(c, node, operand, at);
}

static ordo_status parse_node(parse_ctx *c, const json_t *json, const char *path, int depth,
                              ordo__filter_node **out);

static ordo_status add_child(parse_ctx *c, ordo__filter_node *node, ordo__filter_node *child)
{
    size_t more = child->op == node->op ? child->child_count : 1; /* all in all: one all */
    ordo__filter_node **grown = realloc(node->children, (node->child_count + more) * sizeof *grown);
    if (!grown) {
        ordo__filter_node_free(child);
        return no_memory(c);
    }
    node->children = grown;
    if (child->op != node->op) {
        node->children[node->child_count++] = child;
        return ORDO_OK;
    }
    memcpy(node->children + node->child_count, child->children, more * sizeof *grown);
    node->child_count += more;
    child->child_count = 0;
    ordo__filter_node_free(child);
    return ORDO_OK;
}

static ordo_status parse_combinator(parse_ctx *c, ordo__filter_node *node, const json_t *json,
                                    const char *path, int depth)
{
    const char *name = ordo__filter_op_names[node->op];
    const json_t *operand = json_object_get(json, name);
    char at[PATH_SIZE];
    if (node->op == ORDO__OP_NOT) {
        sub_path(at, path, "not", -1);
        if (!(node->children = calloc(1, sizeof *node->children)))
            return no_memory(c);
        node->child_count = 1;
        return parse_node(c, operand, at, depth + 1, &node->children[0]);
    }
    if (!json_is_array(operand) || json_array_size(operand) == 0) {
        sub_path(at, path, name, -1);
        return fail(c, at, "must be a non-empty array of conditions");
    }
    for (size_t i = 0; i < json_array_size(operand); i++) {
        sub_path(at, path, name, (long)i);
        ordo__filter_node *child = NULL;
        ordo_status status = parse_node(c, json_array_get(operand, i), at, depth + 1, &child);
        if (status == ORDO_OK)
            status = add_child(c, node, child);
        else
            ordo__filter_node_free(child);
        if (status != ORDO_OK)
            return status;
    }
    return ORDO_OK;
}

/* Which operator a condition names, refusing unknown keys, two operators
 * or none, and a field on a combinator. */
static ordo_status operator_of(parse_ctx *c, const json_t *json, const char *path, int *op)
{
    *op = -1;
    int has_field = 0;
    const char *key, *first = NULL;
    json_t *value;
    json_object_foreach((json_t *)json, key, value)
    {
        (void)value;
        int found = op_of(key);
        if (strcmp(key, "field") == 0) {
            has_field = 1;
        } else if (found < 0) {
            char at[PATH_SIZE];
            sub_path(at, path, key, -1);
            return fail(c, at,
                        "unknown key (a condition is {\"field\": ..., OP: ...} with OP one of eq, "
                        "ne, lt, le, gt, ge, in, not_in, exists; or {\"all\": [...]}, "
                        "{\"any\": [...]}, {\"not\": ...})");
        } else if (first) {
            return fail(c, path, "has both '%s' and '%s': one operator per condition", first, key);
        } else {
            first = key;
            *op = found;
        }
    }
    if (*op < 0)
        return fail(c, path,
                    has_field ? "a 'field' needs one operator: eq, ne, lt, le, gt, ge, in, "
                                "not_in or exists"
                              : "an empty condition: give a field and an operator, or all, any "
                                "or not");
    if (combinator(*op) && has_field)
        return fail(c, path, "'field' belongs to a predicate, not to '%s'", first);
    if (!combinator(*op) && !has_field)
        return fail(c, path, "'%s' needs a 'field'", first);
    return ORDO_OK;
}

/* One condition at `path` (".all[1]"), `depth` deep (1: the filter). */
static ordo_status parse_node(parse_ctx *c, const json_t *json, const char *path, int depth,
                              ordo__filter_node **out)
{
    *out = NULL;
    if (depth > ORDO__FILTER_MAX_DEPTH)
        return fail(c, path, "conditions nest more than %d deep", ORDO__FILTER_MAX_DEPTH);
    if (++c->nodes > ORDO__FILTER_MAX_NODES)
        return fail(c, path, "more than %d conditions in one filter", ORDO__FILTER_MAX_NODES);
    if (!json_is_object(json))
        return fail(c, path,
                    "must be an object: {\"field\": ..., OP: ...}, {\"all\": [...]}, "
                    "{\"any\": [...]} or {\"not\": ...}");
    int op = -1;
    ordo_status status = operator_of(c, json, path, &op);
    if (status != ORDO_OK)
        return status;
    ordo__filter_node *node = calloc(1, sizeof *node);
    if (!node)
        return no_memory(c);
    node->op = (enum ordo__filter_op)op;
    status = combinator(op) ? parse_combinator(c, node, json, path, depth)
                            : parse_predicate(c, node, json, path);
    if (status != ORDO_OK) {
        ordo__filter_node_free(node);
        return status;
    }
    /* all/any of one condition is that condition; not of not is nothing */
    ordo__filter_node *inner = node->child_count == 1 ? node->children[0] : NULL;
    if (inner && (op != ORDO__OP_NOT || inner->op == ORDO__OP_NOT)) {
        node->child_count = 0;
        ordo__filter_node_free(node);
        node = inner;
        if (op == ORDO__OP_NOT) {
            node = inner->children[0];
            inner->child_count = 0;
            ordo__filter_node_free(inner);
        }
    }
    *out = node;
    return ORDO_OK;
}

/* Compiles a source's filter; see shards.h. */
ordo_status ordo__filter_compile(const json_t *spec, const char *source, ordo__filter **out,
                                 ordo_error *err)
{
    *out = NULL;
    parse_ctx c = {.filter = calloc(1, sizeof(ordo__filter)), .source = source, .err = err};
    if (!c.filter)
        return no_memory(&c);
    ordo_status status = parse_node(&c, spec, "", 1, &c.filter->root);
    if (status != ORDO_OK) {
        ordo__filter_free(c.filter);
        return status;
    }
    *out = c.filter;
    return ordo__ok(err);
}
