/* Placeholder for the pre-tokenizers (replaced by hf_pretok*.c). */
#include "hf.h"

/* Only null for now. */
ordo_status ordo__hf_pretokenizer_parse(const json_t *json, const char *where,
                                        ordo__hf_pretokenizer **out, ordo_error *err)
{
    *out = NULL;
    if (!json || json_is_null(json))
        return ORDO_OK;
    return ordo__error(err, ORDO_INVALID, "%s: not supported yet", where);
}

void ordo__hf_pretokenizer_free(ordo__hf_pretokenizer *p)
{
    (void)p;
}

int ordo__hf_pretokenizer_byte_level(const ordo__hf_pretokenizer *p)
{
    (void)p;
    return 0;
}

/* The whole text as one piece. */
ordo_status ordo__hf_pretokenize(const ordo__hf_pretokenizer *p, const char *text, size_t len,
                                 ordo__hf_piece_fn fn, void *context, ordo_error *err)
{
    (void)p;
    return len ? fn(context, text, len, err) : ORDO_OK;
}
