/* A minimal HTTP GET (internal to the CLI). */
#ifndef ORDO_CLI_HTTP_GET_H
#define ORDO_CLI_HTTP_GET_H

#include <stddef.h>

/* The body of a 200 answer to GET url (http:// only, at most `max`
 * bytes), NUL-terminated, owned by the caller; NULL with `why` filled
 * otherwise. */
char *http_get(const char *url, size_t max, size_t *len, char *why, size_t why_size);

#endif
