/* Tokenizers (internal). The byte tokenizer maps each byte of the UTF-8
 * text to its value (0-255); end-of-text is 256, pad is 257. */
#ifndef ORDO_TOKENIZER_H
#define ORDO_TOKENIZER_H

#include "recipe_model.h"

#define ORDO_BYTES_EOT 256u
#define ORDO_BYTES_PAD 257u

/* A growable token buffer. */
typedef struct ordo__tokens {
    uint32_t *ids;
    size_t count, capacity;
} ordo__tokens;

/* Appends the tokens of `text` (no end-of-text) to `out`. */
ordo_status ordo__tokenize(const ordo_recipe *recipe, const char *text, size_t len,
                           ordo__tokens *out, ordo_error *err);

/* Appends one id. */
ordo_status ordo__tokens_push(ordo__tokens *tokens, uint32_t id, ordo_error *err);

/* End-of-text and pad ids of the recipe's tokenizer. */
uint32_t ordo__eot_id(const ordo_recipe *recipe);
uint32_t ordo__pad_id(const ordo_recipe *recipe);

#endif
