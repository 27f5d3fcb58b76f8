/* Filters: deciding one record (docs/recipe.md, "Filters"). Conditions
 * are evaluated left to right, all and any stopping at the first that
 * decides; a missing or null field makes every comparison false. */
#include "filter.h"

static int numeric(ordo__field_kind kind)
{
    return kind == ORDO__VALUE_INT || kind == ORDO__VALUE_DOUBLE;
}

static ordo_status type_error(const ordo__filter *filter, const ordo__filter_node *node,
                              const ordo__field_value *got, const ordo__field_value *want,
                              ordo_error *err)
{
    return ordo__error(err, ORDO_INVALID,
                       "field '%s' is %s, and the filter compares it ('%s') with %s",
                       ordo__filter_field(filter, node->field), ordo__filter_kind_name(got->kind),
                       ordo__filter_op_names[node->op], ordo__filter_kind_name(want->kind));
}

/* Whether `v` is in the node's sorted list. */
static int listed(const ordo__filter_node *node, const ordo__field_value *v)
{
    size_t lo = 0, hi = node->list_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = ordo__filter_value_cmp(v, &node->list[mid]);
        if (c == 0)
            return 1;
        if (c == 2)
            return 0; /* NaN: equal to nothing */
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return 0;
}

static ordo_status predicate(const ordo__filter *filter, const ordo__filter_node *node,
                             size_t text_bytes, ordo__field_fn get, void *context, int *pass,
                             ordo_error *err)
{
    ordo__field_value v = {.kind = ORDO__VALUE_INT, .i = (int64_t)text_bytes};
    if (node->field != ORDO__FIELD_BYTES) {
        ordo_status status = get(context, node->field, &v, err);
        if (status != ORDO_OK)
            return status;
    }
    int present = v.kind != ORDO__VALUE_MISSING && v.kind != ORDO__VALUE_NULL;
    *pass = 0;
    if (node->op == ORDO__OP_EXISTS) {
        *pass = present == node->value.b;
        return ORDO_OK;
    }
    if (!present)
        return ORDO_OK;
    const ordo__field_value *want = node->list ? &node->list[0] : &node->value;
    if (v.kind != want->kind && !(numeric(v.kind) && numeric(want->kind)))
        return type_error(filter, node, &v, want, err);
    if (node->list) {
        *pass = listed(node, &v) == (node->op == ORDO__OP_IN);
        return ORDO_OK;
    }
    int c = ordo__filter_value_cmp(&v, &node->value);
    switch (node->op) {
    case ORDO__OP_EQ: *pass = c == 0; break;
    case ORDO__OP_NE: *pass = c != 0; break;
    case ORDO__OP_LT: *pass = c == -1; break;
    case ORDO__OP_LE: *pass = c == -1 || c == 0; break;
    case ORDO__OP_GT: *pass = c == 1; break;
    case ORDO__OP_GE: *pass = c == 1 || c == 0; break;
    default: break;
    }
    return ORDO_OK;
}

static ordo_status eval_node(const ordo__filter *filter, const ordo__filter_node *node,
                             size_t text_bytes, ordo__field_fn get, void *context, int *pass,
                             ordo_error *err)
{
    if (node->op == ORDO__OP_NOT) {
        ordo_status status =
            eval_node(filter, node->children[0], text_bytes, get, context, pass, err);
        *pass = !*pass;
        return status;
    }
    if (node->op != ORDO__OP_ALL && node->op != ORDO__OP_ANY)
        return predicate(filter, node, text_bytes, get, context, pass, err);
    int decides = node->op == ORDO__OP_ANY; /* the result that stops the scan */
    for (size_t i = 0; i < node->child_count; i++) {
        ordo_status status =
            eval_node(filter, node->children[i], text_bytes, get, context, pass, err);
        if (status != ORDO_OK || *pass == decides)
            return status;
    }
    *pass = !decides;
    return ORDO_OK;
}

/* Decides one record; see shards.h. `get` is called once per predicate
 * evaluated, so a value it gives is used before the next call. */
ordo_status ordo__filter_eval(const ordo__filter *filter, size_t text_bytes, ordo__field_fn get,
                              void *context, int *pass, ordo_error *err)
{
    *pass = 1;
    if (!filter)
        return ORDO_OK;
    ordo_status status = eval_node(filter, filter->root, text_bytes, get, context, pass, err);
    if (status != ORDO_OK)
        *pass = 0;
    return status;
}
