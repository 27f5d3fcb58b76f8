/* Token estimation (internal). */
#ifndef ORDO_ESTIMATE_H
#define ORDO_ESTIMATE_H

#include "recipe.h"

/* Fills sample_records, sample_bytes and sample_tokens of source `index`
 * (its chunk list must be built). Tokens per byte = tokens / bytes, where
 * tokens count one end-of-text per document and bytes are record bytes. */
ordo_status ordo__estimate_source(const ordo_recipe *recipe, uint32_t index, ordo_error *err);

#endif
