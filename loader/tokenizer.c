/* Tokenizers: the byte tokenizer. */
#include <stdlib.h>

#include "bpe.h"
#include "tokenizer.h"

static ordo_status reserve(ordo__tokens *t, size_t more, ordo_error *err)
{
    if (t->count + more <= t->capacity)
        return ORDO_OK;
    size_t capacity = t->capacity ? t->capacity : 256;
    while (capacity < t->count + more)
        capacity *= 2;
    uint32_t *grown = realloc(t->ids, capacity * sizeof *grown);
    if (!grown)
        return ordo__error(err, ORDO_NOMEM, "out of memory tokenizing");
    t->ids = grown;
    t->capacity = capacity;
    return ORDO_OK;
}

/* Appends one id. */
ordo_status ordo__tokens_push(ordo__tokens *t, uint32_t id, ordo_error *err)
{
    ordo_status status = reserve(t, 1, err);
    if (status == ORDO_OK)
        t->ids[t->count++] = id;
    return status;
}

/* The recipe's tokenizer: BPE, or one id per byte. */
ordo_status ordo__tokenize(const ordo_recipe *recipe, const char *text, size_t len,
                           ordo__tokens *out, ordo_error *err)
{
    if (recipe->bpe)
        return ordo__bpe_encode(recipe->bpe, text, len, out, err);
    ordo_status status = reserve(out, len, err);
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
