/* Tokenizing a recipe's documents: the byte tokenizer or the recipe's BPE. */
#include <stdlib.h>

#include "recipe.h"

/* The recipe's tokenizer: BPE, or one id per byte. */
ordo_status ordo__tokenize(const ordo_recipe *recipe, const char *text, size_t len,
                           ordo__tokens *out, ordo_error *err)
{
    if (recipe->bpe)
        return ordo__bpe_encode(recipe->bpe, text, len, out, err);
    ordo_status status = ordo__tokens_reserve(out, len, err);
    if (status != ORDO_OK)
        return status;
    const unsigned char *bytes = (const unsigned char *)text;
    for (size_t i = 0; i < len; i++)
        out->ids[out->count++] = bytes[i];
    return ORDO_OK;
}

/* End-of-text: the encoding's <|endoftext|>, or 256 for bytes. */
uint32_t ordo__eot_id(const ordo_recipe *recipe)
{
    return recipe->bpe ? ordo__bpe_encoding(recipe->bpe)->eot : ORDO_BYTES_EOT;
}

/* Pad: the tiktoken encodings have no pad token, so end-of-text pads
 * (samples mark padding by position; see docs/recipe.md); 257 for bytes. */
uint32_t ordo__pad_id(const ordo_recipe *recipe)
{
    return recipe->bpe ? ordo__bpe_encoding(recipe->bpe)->eot : ORDO_BYTES_PAD;
}
