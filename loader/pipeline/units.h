/* Work units (docs/recipe.md, "Units and lanes"), internal: the pieces of
 * a source that lanes own. A unit is a chunk, or a range of a chunk's
 * documents where the source has fewer chunks than lanes. A source's units
 * are partitioned among the L lanes, balanced by bytes; a pure function of
 * (recipe, source, lane). */
#ifndef ORDO_UNITS_H
#define ORDO_UNITS_H

#include "recipe/recipe.h"

typedef struct ordo__unit_ref {
    ordo__chunk_ref ref;
    uint32_t first, count; /* documents [first, first + count) of the chunk */
} ordo__unit_ref;

typedef struct ordo__unit_list {
    ordo__unit_ref *units; /* in the source's unit order */
    uint32_t count;
} ordo__unit_list;

/* The units of `source` that lanes first .. first+n-1 own, into lists[0..n)
 * (each freed with ordo__unit_list_free). Every lane owns at least one. */
ordo_status ordo__units_partition(const ordo_recipe *recipe, uint32_t source, uint32_t first,
                                  uint32_t n, ordo__unit_list *lists, ordo_error *err);

void ordo__unit_list_free(ordo__unit_list *list);

#endif
