/* The library's internal declarations, for tests/, fuzz/ and bench/ only:
 * they exercise internal decoders and state codecs directly. cli/, server/,
 * examples/ and python/ use ordo.h alone (scripts/includes.sh checks it). */
#ifndef ORDO_TESTING_H
#define ORDO_TESTING_H

#include "core/core.h"
#include "ledger/sql.h"
#include "pipeline/pipeline.h"
#include "recipe/recipe.h"
#include "shards/parquet.h"
#include "shards/gzip.h"
#include "shards/shards.h"
#include "tokenizer/hf_pretok.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/hf.h"

#endif
