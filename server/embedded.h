/* The dashboard's files compiled into the binary by scripts/embed.c (the
 * layout it emits; the library's migrations use the same one). */
#ifndef ORDO_SERVER_EMBEDDED_H
#define ORDO_SERVER_EMBEDDED_H

#include <stddef.h>

struct ordo__embedded {
    const char *name; /* base name of the source file */
    const char *data; /* its bytes, NUL-terminated */
    size_t size;      /* length without the terminating NUL */
};

/* web/ and uPlot, by base name. */
extern const struct ordo__embedded ordo__web_files[];
extern const size_t ordo__web_files_count;

#endif
