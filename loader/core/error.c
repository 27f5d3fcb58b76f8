/* Status names, error messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

static const char *const status_names[] = {
#define NAME(name, short_name, text) short_name,
    ORDO_STATUS_MAP(NAME)
#undef NAME
};

static const char *const status_texts[] = {
#define TEXT(name, short_name, text) text,
    ORDO_STATUS_MAP(TEXT)
#undef TEXT
};

#define STATUS_COUNT (sizeof status_names / sizeof status_names[0])

/* Short machine name of a status; "unknown" outside the table. */
const char *ordo_status_name(ordo_status status)
{
    return (unsigned)status < STATUS_COUNT ? status_names[status] : "unknown";
}

/* One-line description of a status; "unknown status" outside the table. */
const char *ordo_status_text(ordo_status status)
{
    return (unsigned)status < STATUS_COUNT ? status_texts[status] : "unknown status";
}

/* Releases a buffer libordo allocated for the caller. */
void ordo_free(void *ptr)
{
    free(ptr);
}

/* Fills `err` (when not NULL) with status and formatted message. */
ordo_status ordo__error(ordo_error *err, ordo_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = status;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* Prefixes err's message; see core.h. */
void ordo__error_prefix(ordo_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char was[sizeof err->message];
    memcpy(was, err->message, sizeof was);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof err->message)
        snprintf(err->message + n, sizeof err->message - (size_t)n, "%s", was);
}

/* Clears `err`. */
ordo_status ordo__ok(ordo_error *err)
{
    if (err) {
        err->status = ORDO_OK;
        err->message[0] = '\0';
    }
    return ORDO_OK;
}

/* Copies a string into a fixed buffer, truncating. */
void ordo__copy(char *dst, size_t size, const char *src)
{
    if (size == 0)
        return;
    if (!src)
        src = "";
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* strdup that passes NULL through. */
char *ordo__strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *copy = malloc(n);
    if (copy)
        memcpy(copy, s, n);
    return copy;
}

/* Describes an errno value into the caller's buffer; see core.h. */
const char *ordo__errno_text(int errnum, char buf[ORDO__ERRNO_TEXT_SIZE])
{
    if (strerror_r(errnum, buf, ORDO__ERRNO_TEXT_SIZE) != 0)
        snprintf(buf, ORDO__ERRNO_TEXT_SIZE, "error %d", errnum);
    return buf;
}
