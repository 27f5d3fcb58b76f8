/* A compiled filter's tree (filter.c, filter_parse.c, filter_eval.c only;
 * docs/recipe.md, "Filters"). */
#ifndef ORDO_FILTER_H
#define ORDO_FILTER_H

#include "shards.h"

/* What a node does: a predicate on one field, or a combinator. */
enum ordo__filter_op {
    ORDO__OP_EQ,
    ORDO__OP_NE,
    ORDO__OP_LT,
    ORDO__OP_LE,
    ORDO__OP_GT,
    ORDO__OP_GE,
    ORDO__OP_IN,
    ORDO__OP_NOT_IN,
    ORDO__OP_EXISTS,
    ORDO__OP_ALL,
    ORDO__OP_ANY,
    ORDO__OP_NOT
};

/* The operators' names, by enum value ("eq", ..., "not"). */
extern const char *const ordo__filter_op_names[];

/* The field number of "$bytes" (the record's text length in bytes). */
#define ORDO__FIELD_BYTES UINT32_MAX

/* The limits of a filter (docs/recipe.md): nesting, nodes, fields. */
#define ORDO__FILTER_MAX_DEPTH 32
#define ORDO__FILTER_MAX_NODES 1024
#define ORDO__FILTER_MAX_FIELDS 64
#define ORDO__FILTER_MAX_LIST 65536

typedef struct ordo__filter_node {
    enum ordo__filter_op op;
    uint32_t field;          /* predicates: field number or ORDO__FIELD_BYTES */
    ordo__field_value value; /* eq ... ge: BOOL, INT, DOUBLE or STRING (s owned);
                                * exists: b */
    ordo__field_value *list; /* in, not_in: sorted, no duplicates, one kind of
                                * scalar (INT and DOUBLE are both numbers) */
    size_t list_count;
    struct ordo__filter_node **children; /* all, any: several; not: one */
    size_t child_count;
} ordo__filter_node;

struct ordo__filter {
    ordo__filter_node *root;
    char **fields; /* dotted paths, in first-use order */
    uint32_t field_count;
};

/* Frees a node and everything below it (NULL is fine). */
void ordo__filter_node_free(ordo__filter_node *node);

/* Orders two scalars of one kind of value (numbers exactly, an INT64
 * against a double without rounding; strings bytewise; false < true):
 * -1, 0 or 1, and 2 when a NaN makes them unordered. */
int ordo__filter_value_cmp(const ordo__field_value *a, const ordo__field_value *b);

/* "number", "string", "boolean", "null", ... for messages. */
const char *ordo__filter_kind_name(ordo__field_kind kind);

#endif
