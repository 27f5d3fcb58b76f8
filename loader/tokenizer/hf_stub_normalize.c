/* Placeholder for the normalizers (replaced by hf_normalize*.c). */
#include "hf.h"

/* Only null for now. */
ordo_status ordo__hf_normalizer_parse(const json_t *json, const char *where,
                                      ordo__hf_normalizer **out, ordo_error *err)
{
    *out = NULL;
    if (!json || json_is_null(json))
        return ORDO_OK;
    return ordo__error(err, ORDO_INVALID, "%s: not supported yet", where);
}

void ordo__hf_normalizer_free(ordo__hf_normalizer *n)
{
    (void)n;
}

/* The identity. */
ordo_status ordo__hf_normalize(const ordo__hf_normalizer *n, const char *text, size_t len,
                               ordo__text *out, ordo_error *err)
{
    (void)n;
    out->len = 0;
    return ordo__text_append(out, text, len, err);
}
