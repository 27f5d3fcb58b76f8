/* ordo resume --manifest: a resume driven by a recovery manifest alone. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_get.h"
#include "job.h"

#define MANIFEST_MAX ((size_t)64 << 20)

static char *read_source(const char *where, size_t *len)
{
    char why[512];
    if (strncmp(where, "http://", 7) == 0) {
        char *body = http_get(where, MANIFEST_MAX, len, why, sizeof why);
        if (!body)
            fprintf(stderr, "ordo resume: manifest: %s\n", why);
        return body;
    }
    int fd = -1;
    ordo_error err;
    if (ordo_open_regular(where, "manifest", &fd, &err) != ORDO_OK)
        return fprintf(stderr, "ordo resume: %s\n", err.message), NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f)
        return close(fd), fprintf(stderr, "ordo resume: cannot read manifest '%s'\n", where), NULL;
    char *data = malloc(MANIFEST_MAX + 1);
    *len = data ? fread(data, 1, MANIFEST_MAX + 1, f) : 0;
    fclose(f);
    if (!data || *len > MANIFEST_MAX) {
        free(data);
        return fprintf(stderr, "ordo resume: manifest '%s' is too large\n", where), NULL;
    }
    data[*len] = '\0';
    return data;
}

/* Fills a resume source from a manifest; see job.h. */
int manifest_source(ordo_ledger *ledger, const char *where, const char *data_root,
                    resume_source *src)
{
    size_t len = 0;
    char *text = read_source(where, &len);
    if (!text)
        return EXIT_FAILURE_;
    ordo_error err;
    ordo_manifest *m = NULL;
    ordo_status status = ordo_recovery_manifest_read(ledger, text, len, data_root, &m, &err);
    free(text);
    if (status != ORDO_OK)
        return fprintf(stderr, "ordo resume: %s\n", err.message), EXIT_FAILURE_;
    /* the source takes what the manifest owns */
    src->run = m->run;
    src->recipe = m->recipe;
    src->checkpoint = m->checkpoint;
    src->world_size = m->world_size;
    src->expected = m->expected;
    src->expected_count = m->expected_count;
    *m = (ordo_manifest){0};
    ordo_manifest_free(m);
    return EXIT_OK;
}
