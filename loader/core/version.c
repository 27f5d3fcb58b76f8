/* The library's version, from the numbers ordo.h defines. */
#include <string.h>

#include "core.h"

/* MAJOR*10000 + MINOR*100 + PATCH of the library running. */
unsigned ordo_version(void)
{
    return ORDO_VERSION_NUMBER;
}

/* "MAJOR.MINOR.PATCH" of the library running; static string. */
const char *ordo_version_string(void)
{
    return ORDO_VERSION_STRING;
}

/* sizeof of a public struct by name, 0 for an unknown name; see ordo.h. */
size_t ordo_struct_size(const char *name)
{
    static const struct {
        const char *name;
        size_t size;
    } structs[] = {{"ordo_error", sizeof(ordo_error)},
                   {"ordo_recipe_info", sizeof(ordo_recipe_info)},
                   {"ordo_loader_options", sizeof(ordo_loader_options)},
                   {"ordo_batch", sizeof(ordo_batch)},
                   {"ordo_run_info", sizeof(ordo_run_info)}};
    for (size_t i = 0; name && i < sizeof structs / sizeof structs[0]; i++)
        if (strcmp(structs[i].name, name) == 0)
            return structs[i].size;
    return 0;
}
