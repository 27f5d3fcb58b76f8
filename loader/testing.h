/* The library's internal declarations, for tests/, fuzz/ and bench/ only:
 * they exercise internal decoders and state codecs directly. cli/, server/,
 * examples/ and python/ use ordo.h alone (a check in `make test`). */
#ifndef ORDO_TESTING_H
#define ORDO_TESTING_H

#include "internal.h"
#include "bpe.h"
#include "lane_state.h"
#include "permute.h"
#include "recipe_model.h"
#include "record.h"
#include "shard_index.h"

#endif
