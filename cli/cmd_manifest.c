/* ordo resume --manifest: a resume driven by a recovery manifest alone. */
#include <openssl/evp.h>
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
        return close(fd), fprintf(stderr, "ordo resume: cannot read manifest '%s'\n", where),
               NULL;
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

static unsigned char *unbase64(const char *text, size_t *len)
{
    size_t n = text ? strlen(text) : 0;
    unsigned char *out = n && n % 4 == 0 ? malloc(n) : NULL;
    int got = out ? EVP_DecodeBlock(out, (const unsigned char *)text, (int)n) : -1;
    if (got < 0) {
        free(out);
        return NULL;
    }
    *len = (size_t)got - (text[n - 1] == '=') - (text[n - 2] == '=');
    return out;
}

/* The expected digests, in step order from resume_at_step on. */
static int expected_digests(json_t *list, int64_t first, resume_source *src)
{
    size_t n = json_array_size(list);
    src->expected = malloc((n ? n : 1) * ORDO_DIGEST_SIZE);
    if (!src->expected)
        return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(list, i);
        ordo_error err;
        if (json_integer_value(json_object_get(e, "step")) != first + (int64_t)i ||
            ordo_digest_from_hex(json_string_value(json_object_get(e, "batch_digest")),
                                 src->expected + i * ORDO_DIGEST_SIZE, &err) != ORDO_OK)
            return (int)i + 1;
    }
    src->expected_count = n;
    return 0;
}

static int from_json(ordo_ledger *ledger, json_t *m, const char *data_root, resume_source *src)
{
    ordo_error err;
    const char *run = json_string_value(json_object_get(m, "run"));
    json_t *checkpoint = json_object_get(m, "checkpoint");
    const char *root = data_root ? data_root : json_string_value(json_object_get(m, "data_root"));
    if (!run || ordo_run_get(ledger, run, &src->run, &err) != ORDO_OK)
        return fprintf(stderr, "ordo resume: manifest: run '%s' is not in this ledger\n",
                       run ? run : ""), EXIT_FAILURE_;
    if (strcmp(src->run.recipe_id, json_string_value(json_object_get(m, "recipe_id"))
                                       ? json_string_value(json_object_get(m, "recipe_id"))
                                       : "") != 0)
        return fprintf(stderr, "ordo resume: manifest: recipe differs from run '%s''s\n", run),
               EXIT_FAILURE_;
    src->checkpoint.step = json_integer_value(json_object_get(checkpoint, "step"));
    src->checkpoint.lanes = (int)json_integer_value(json_object_get(checkpoint, "lanes"));
    src->checkpoint.state = unbase64(json_string_value(json_object_get(checkpoint, "state")),
                                     &src->checkpoint.state_size);
    src->world_size = (int)json_integer_value(json_object_get(m, "world_size"));
    if (!src->checkpoint.state || src->checkpoint.step < 1 || src->world_size < 1)
        return fprintf(stderr, "ordo resume: manifest: bad checkpoint or world size\n"),
               EXIT_FAILURE_;
    int bad = expected_digests(json_object_get(m, "expected"), src->checkpoint.step + 1, src);
    if (bad)
        return fprintf(stderr, "ordo resume: manifest: expected digest %d is malformed\n", bad),
               EXIT_FAILURE_;
    char *canonical = json_dumps(json_object_get(m, "recipe"), JSON_COMPACT | JSON_SORT_KEYS);
    ordo_status status = canonical ? ordo_recipe_parse_with(canonical, strlen(canonical),
                                                            root ? root : ".",
                                                            ORDO_RECIPE_VERIFY_SHARDS, ledger,
                                                            &src->recipe, &err)
                                   : ORDO_NOMEM;
    free(canonical);
    if (status == ORDO_OK)
        status = ordo_recipe_index(src->recipe, ledger, NULL, NULL, &err);
    if (status == ORDO_OK && strcmp(ordo_recipe_id(src->recipe), src->run.recipe_id) != 0)
        return fprintf(stderr, "ordo resume: manifest: its recipe does not hash to its "
                               "recipe_id\n"), EXIT_FAILURE_;
    if (status != ORDO_OK)
        return fprintf(stderr, "ordo resume: refused: %s\n", err.message), EXIT_FAILURE_;
    return EXIT_OK;
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
    if (ordo_recovery_manifest_check(text, len, &err) != ORDO_OK) {
        free(text);
        return fprintf(stderr, "ordo resume: refused: %s\n", err.message), EXIT_FAILURE_;
    }
    json_t *m = json_loadb(text, len, 0, NULL);
    free(text);
    int rc = from_json(ledger, m, data_root, src);
    json_decref(m);
    return rc;
}
