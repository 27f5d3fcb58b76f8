/* JSON views of a run's mixture: a step with its target and delivered
 * shares, and the summary per source, for `ordo show --json` and the
 * service alike. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "core/core.h"

#define VIEW_FLAGS (JSON_COMPACT | JSON_ENSURE_ASCII)

static json_t *real_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* `count` shares, or null without them. */
static json_t *shares_json(const double *shares, int count, int known)
{
    if (!known)
        return json_null();
    json_t *array = json_array();
    for (int i = 0; array && i < count; i++)
        json_array_append_new(array, json_real(shares[i]));
    return array;
}

/* A step with "target_shares" and "delivered_shares"; see ordo.h. */
char *ordo_step_mixture_json(const ordo_step *step, const ordo_mixture *mixture)
{
    char *text = ordo_step_json(step);
    json_t *object = text ? json_loads(text, 0, NULL) : NULL;
    ordo_free(text);
    int n = mixture ? ordo_mixture_sources(mixture) : 0;
    double *target = calloc((size_t)(n ? n : 1), sizeof *target);
    double *delivered = calloc((size_t)(n ? n : 1), sizeof *delivered);
    int known =
        target && delivered && mixture ? ordo_mixture_step(mixture, step, target, delivered) : 0;
    char *out = NULL;
    if (object && target && delivered) {
        json_object_set_new(object, "target_shares",
                            shares_json(target, n, known & ORDO_MIXTURE_TARGET));
        json_object_set_new(object, "delivered_shares",
                            shares_json(delivered, n, known & ORDO_MIXTURE_DELIVERED));
        out = json_dumps(object, VIEW_FLAGS | JSON_PRESERVE_ORDER);
    }
    json_decref(object);
    free(target);
    free(delivered);
    return out;
}

/* The summary of a mixture; see ordo.h. */
char *ordo_mixture_json(const ordo_mixture *m)
{
    json_t *sources = json_array();
    int64_t steps = 0, measured = 0;
    for (int i = 0; sources && i < ordo_mixture_sources(m); i++) {
        ordo_mixture_source s;
        ordo_mixture_summary(m, i, &s, NULL);
        steps = s.steps, measured = s.measured_steps;
        json_array_append_new(sources,
                              json_pack("{s:s, s:o, s:o, s:o, s:o}", "name", s.name, "target_mean",
                                        real_or_null(s.target_mean), "delivered",
                                        real_or_null(s.delivered), "worst_deviation_samples",
                                        real_or_null(s.worst_deviation), "worst_step",
                                        s.worst_step ? json_integer(s.worst_step) : json_null()));
    }
    int batch = ordo_mixture_global_batch(m);
    const char *why = ordo_mixture_why(m);
    json_t *root = json_pack("{s:o, s:I, s:I, s:o, s:o}", "global_batch",
                             batch ? json_integer(batch) : json_null(), "steps", (json_int_t)steps,
                             "measured_steps", (json_int_t)measured, "by_source", sources,
                             "unavailable", *why ? json_string(why) : json_null());
    char *text = root ? json_dumps(root, VIEW_FLAGS | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    return text;
}
