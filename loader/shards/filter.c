/* Filters: not yet read (every filter is refused). */
#include "shards.h"

ordo_status ordo__filter_compile(const json_t *spec, const char *source, ordo__filter **out,
                                 ordo_error *err)
{
    (void)spec;
    *out = NULL;
    return ordo__error(err, ORDO_INVALID, "recipe: source '%s': filters are not supported yet",
                       source);
}

void ordo__filter_free(ordo__filter *filter)
{
    (void)filter;
}

json_t *ordo__filter_canonical(const ordo__filter *filter)
{
    (void)filter;
    return json_null();
}

uint32_t ordo__filter_field_count(const ordo__filter *filter)
{
    (void)filter;
    return 0;
}

const char *ordo__filter_field(const ordo__filter *filter, uint32_t index)
{
    (void)filter, (void)index;
    return "";
}

ordo_status ordo__filter_eval(const ordo__filter *filter, size_t text_bytes, ordo__field_fn get,
                              void *context, int *pass, ordo_error *err)
{
    (void)filter, (void)text_bytes, (void)get, (void)context, (void)err;
    *pass = 1;
    return ORDO_OK;
}
