/* Tokenizing a recipe's documents: the byte tokenizer or the recipe's BPE
 * (a tiktoken encoding or a tokenizer.json), and the special tokens a
 * document is packed with: [bos] tokens eos. */
#include <stdlib.h>

#include "recipe.h"

/* The recipe's tokenizer: BPE, or one id per byte. */
ordo_status ordo__tokenize(const ordo_recipe *recipe, const char *text, size_t len,
                           ordo__tokens *out, ordo_error *err)
{
    return ordo__tokenize_upto(recipe, text, len, SIZE_MAX, out, NULL, err);
}

/* A prefix of the recipe's tokens of `text`; see recipe.h. */
ordo_status ordo__tokenize_upto(const ordo_recipe *recipe, const char *text, size_t len,
                                size_t stop, ordo__tokens *out, int *complete, ordo_error *err)
{
    if (recipe->tokenizer)
        return ordo__tokenizer_append_upto(recipe->tokenizer, text, len, stop, out, complete, err);
    size_t room = stop > out->count ? stop - out->count : 0, n = len < room ? len : room;
    ordo_status status = ordo__tokens_reserve(out, n, err);
    if (status != ORDO_OK)
        return status;
    const unsigned char *bytes = (const unsigned char *)text;
    for (size_t i = 0; i < n; i++)
        out->ids[out->count++] = bytes[i];
    if (complete)
        *complete = n == len;
    return ORDO_OK;
}

/* End-of-text, the recipe's eos: a tiktoken encoding's own unless the
 * recipe names one, the one a tokenizer.json recipe names, or 256 for
 * bytes. */
uint32_t ordo__eot_id(const ordo_recipe *recipe)
{
    return recipe->eos_id;
}

/* The recipe's bos, or ORDO__NO_TOKEN. */
uint32_t ordo__bos_id(const ordo_recipe *recipe)
{
    return recipe->bos_id;
}

/* Special tokens per document: eos, and bos when there is one. */
uint32_t ordo__doc_specials(const ordo_recipe *recipe)
{
    return recipe->bos_id == ORDO__NO_TOKEN ? 1u : 2u;
}

/* Pad: neither BPE kind has a pad token ordo could trust, so eos pads
 * (samples mark padding by position; see docs/recipe.md); 257 for bytes. */
uint32_t ordo__pad_id(const ordo_recipe *recipe)
{
    return recipe->tokenizer ? recipe->eos_id : ORDO_BYTES_PAD;
}
