/* Filters: the compiled tree's canonical JSON, its fields, exact ordering
 * of values, freeing (docs/recipe.md, "Filters"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"

const char *const ordo__filter_op_names[] = {"eq", "ne",     "lt",     "le",  "gt",  "ge",
                                             "in", "not_in", "exists", "all", "any", "not"};

void ordo__filter_node_free(ordo__filter_node *node)
{
    if (!node)
        return;
    free((char *)node->value.s);
    for (size_t i = 0; i < node->list_count; i++)
        free((char *)node->list[i].s);
    free(node->list);
    for (size_t i = 0; i < node->child_count; i++)
        ordo__filter_node_free(node->children[i]);
    free(node->children);
    free(node);
}

/* Frees a compiled filter (NULL is fine). */
void ordo__filter_free(ordo__filter *filter)
{
    if (!filter)
        return;
    ordo__filter_node_free(filter->root);
    for (uint32_t i = 0; i < filter->field_count; i++)
        free(filter->fields[i]);
    free(filter->fields);
    free(filter);
}

/* How many fields the filter reads; see shards.h. */
uint32_t ordo__filter_field_count(const ordo__filter *filter)
{
    return filter ? filter->field_count : 0;
}

/* Field number `index`'s dotted path, borrowed from the filter. */
const char *ordo__filter_field(const ordo__filter *filter, uint32_t index)
{
    return filter && index < filter->field_count ? filter->fields[index] : "";
}

const char *ordo__filter_kind_name(ordo__field_kind kind)
{
    switch (kind) {
    case ORDO__VALUE_MISSING: return "missing";
    case ORDO__VALUE_NULL: return "null";
    case ORDO__VALUE_BOOL: return "a boolean";
    case ORDO__VALUE_INT:
    case ORDO__VALUE_DOUBLE: return "a number";
    case ORDO__VALUE_STRING: return "a string";
    default: return "an object or an array";
    }
}

static int sign(int c)
{
    return (c > 0) - (c < 0);
}

/* An INT64 against a double, exactly: the double's integer part is exact
 * in an int64 whenever it lies in the int64 range, and its fraction then
 * decides a tie. */
static int cmp_int_double(int64_t i, double d)
{
    if (isnan(d))
        return 2;
    if (d >= 9223372036854775808.0) /* 2^63 */
        return -1;
    if (d < -9223372036854775808.0)
        return 1;
    double whole = trunc(d);
    int64_t w = (int64_t)whole;
    if (i != w)
        return i < w ? -1 : 1;
    double fraction = d - whole;
    return fraction > 0 ? -1 : fraction < 0 ? 1 : 0;
}

/* Orders two values of one kind; see filter.h. */
int ordo__filter_value_cmp(const ordo__field_value *a, const ordo__field_value *b)
{
    if (a->kind == ORDO__VALUE_INT && b->kind == ORDO__VALUE_INT)
        return a->i < b->i ? -1 : a->i > b->i;
    if (a->kind == ORDO__VALUE_INT && b->kind == ORDO__VALUE_DOUBLE)
        return cmp_int_double(a->i, b->d);
    if (a->kind == ORDO__VALUE_DOUBLE && b->kind == ORDO__VALUE_INT) {
        int c = cmp_int_double(b->i, a->d);
        return c == 2 ? 2 : -c;
    }
    if (a->kind == ORDO__VALUE_DOUBLE && b->kind == ORDO__VALUE_DOUBLE)
        return a->d < b->d ? -1 : a->d > b->d ? 1 : a->d == b->d ? 0 : 2;
    if (a->kind == ORDO__VALUE_STRING && b->kind == ORDO__VALUE_STRING) {
        size_t n = a->len < b->len ? a->len : b->len;
        int c = n ? memcmp(a->s, b->s, n) : 0;
        return c ? sign(c) : a->len < b->len ? -1 : a->len > b->len;
    }
    if (a->kind == ORDO__VALUE_BOOL && b->kind == ORDO__VALUE_BOOL)
        return (a->b > b->b) - (a->b < b->b);
    return 2;
}

static json_t *value_json(const ordo__field_value *v)
{
    switch (v->kind) {
    case ORDO__VALUE_BOOL: return json_boolean(v->b);
    case ORDO__VALUE_INT: return json_integer((json_int_t)v->i);
    case ORDO__VALUE_DOUBLE: return json_real(v->d);
    case ORDO__VALUE_STRING: return json_stringn(v->s, v->len);
    default: return json_null();
    }
}

/* Appends `item` (stolen) to `array`; on failure frees both, NULL. */
static json_t *append(json_t *array, json_t *item)
{
    if (array && item && json_array_append_new(array, item) == 0)
        return array;
    if (array && !item)
        json_decref(array);
    else if (!array)
        json_decref(item);
    else
        json_decref(array); /* append_new freed item */
    return NULL;
}

static json_t *node_json(const ordo__filter *filter, const ordo__filter_node *node)
{
    const char *op = ordo__filter_op_names[node->op];
    json_t *operand = NULL;
    if (node->op == ORDO__OP_ALL || node->op == ORDO__OP_ANY) {
        operand = json_array();
        for (size_t i = 0; operand && i < node->child_count; i++)
            operand = append(operand, node_json(filter, node->children[i]));
        return json_pack("{s:o}", op, operand);
    }
    if (node->op == ORDO__OP_NOT)
        return json_pack("{s:o}", op, node_json(filter, node->children[0]));
    if (node->op == ORDO__OP_EXISTS) {
        operand = json_boolean(node->value.b);
    } else if (node->op == ORDO__OP_IN || node->op == ORDO__OP_NOT_IN) {
        operand = json_array();
        for (size_t i = 0; operand && i < node->list_count; i++)
            operand = append(operand, value_json(&node->list[i]));
    } else {
        operand = value_json(&node->value);
    }
    const char *field = node->field == ORDO__FIELD_BYTES ? "$bytes" : filter->fields[node->field];
    return json_pack("{s:s, s:o}", "field", field, op, operand);
}

/* The canonical JSON (a new reference; NULL when out of memory): the tree
 * as compiled, so two spellings of one filter give one text. */
json_t *ordo__filter_canonical(const ordo__filter *filter)
{
    return filter ? node_json(filter, filter->root) : json_null();
}
