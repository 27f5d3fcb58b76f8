/* The library's version, from the numbers ordo.h defines. */
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
