/* Placeholder for the tokenizer.json loader and model (replaced by
 * hf_load.c, hf_encode.c, hf_added.c, hf_bpe*.c). */
#include <stdlib.h>
#include <string.h>

#include "hf.h"

/* Appends bytes; see hf.h. */
ordo_status ordo__text_append(ordo__text *t, const void *p, size_t n, ordo_error *err)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *grown = realloc(t->data, cap);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory");
        t->data = grown;
        t->cap = cap;
    }
    memcpy(t->data + t->len, p, n);
    t->len += n;
    t->data[t->len] = '\0';
    return ORDO_OK;
}

/* Not yet: refuses. */
ordo_status ordo__hf_load(const char *path, ordo__hf **hf, ordo_error *err)
{
    *hf = NULL;
    return ordo__error(err, ORDO_INVALID, "tokenizer.json '%s': not supported yet", path);
}

/* Not yet: refuses. */
ordo_status ordo__hf_parse(const char *json, size_t len, const char *what, ordo__hf **hf,
                           ordo_error *err)
{
    (void)json, (void)len;
    *hf = NULL;
    return ordo__error(err, ORDO_INVALID, "tokenizer.json '%s': not supported yet", what);
}

void ordo__hf_free(ordo__hf *hf)
{
    (void)hf;
}

/* Not yet: refuses. */
ordo_status ordo__hf_encode(const ordo__hf *hf, const char *text, size_t len, ordo__tokens *out,
                            ordo_error *err)
{
    (void)hf, (void)text, (void)len, (void)out;
    return ordo__error(err, ORDO_INVALID, "tokenizer.json: not supported yet");
}

/* Not yet: refuses. */
ordo_status ordo__hf_decode(const ordo__hf *hf, uint32_t id, char **buffer, size_t *len,
                            size_t *capacity, ordo_error *err)
{
    (void)hf, (void)buffer, (void)len, (void)capacity;
    return ordo__error(err, ORDO_INVALID, "token %u: not supported yet", (unsigned)id);
}

/* Not yet: none. */
int ordo__hf_token_id(const ordo__hf *hf, const char *content, uint32_t *id)
{
    (void)hf, (void)content, (void)id;
    return 0;
}

uint32_t ordo__hf_vocab_size(const ordo__hf *hf)
{
    (void)hf;
    return 0;
}
