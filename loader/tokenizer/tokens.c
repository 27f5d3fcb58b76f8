/* Growable token buffers. */
#include <stdlib.h>

#include "tokenizer.h"

/* Makes room for `more` ids; see tokenizer.h. */
ordo_status ordo__tokens_reserve(ordo__tokens *t, size_t more, ordo_error *err)
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
    ordo_status status = ordo__tokens_reserve(t, 1, err);
    if (status == ORDO_OK)
        t->ids[t->count++] = id;
    return status;
}
