/* Files compiled into the binary by scripts/embed.c (internal). */
#ifndef ORDO_EMBEDDED_H
#define ORDO_EMBEDDED_H

#include <stddef.h>

struct ordo__embedded {
    const char *name; /* base name of the source file */
    const char *data; /* its bytes, NUL-terminated */
    size_t size;      /* length without the terminating NUL */
};

/* The migrations/NNNN_*.sql files in version order. */
extern const struct ordo__embedded ordo__migrations[];
extern const size_t ordo__migrations_count;

#endif
