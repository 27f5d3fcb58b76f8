/* views: the recipe diff's text, shared with the JSON views (json.c). */
#ifndef ORDO_VIEWS_RECIPE_DIFF_H
#define ORDO_VIEWS_RECIPE_DIFF_H

#include <jansson.h>

#include "core/core.h"

/* `value` as compact text, non-ASCII escaped, each real written in the
 * fewest digits that read back as the same double (0.7, not
 * 0.69999999999999996), so a recipe's numbers read as they were written.
 * The caller owns the text (free); NULL when memory runs out. */
char *ordo__json_dumps_shortest(const json_t *value);

#endif
