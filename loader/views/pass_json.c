/* The JSON view of a source's passes (ordo_source_plan): the one that
 * `ordo index --json` and the service's audit both print. */
#include <jansson.h>
#include <stdlib.h>

#include "core/core.h"

static json_t *step_or_null(int64_t step)
{
    return step ? json_integer(step) : json_null();
}

/* A source's passes as one line of JSON; see ordo.h. */
char *ordo_source_plan_json(const ordo_source_plan *p)
{
    json_t *starts = json_array();
    for (int64_t k = 1; starts && k <= p->pass_count && k <= ORDO_PASS_STARTS; k++)
        json_array_append_new(starts, json_integer(p->pass_start[k - 1]));
    json_t *value = json_pack(
        "{s:s, s:f, s:I, s:I, s:I, s:f, s:I, s:I, s:f, s:I, s:o, s:o, s:I, s:I, s:o, s:o}",
        "source", p->name, "tokens_per_byte", p->tokens_per_byte, "bytes", (json_int_t)p->bytes,
        "documents", (json_int_t)p->documents, "tokens_per_pass", (json_int_t)p->tokens_per_pass,
        "samples_per_pass", p->samples_per_pass, "steps", (json_int_t)p->steps, "samples",
        (json_int_t)p->samples, "passes", p->passes, "pass_count", (json_int_t)p->pass_count,
        "pass_starts", starts, "last_pass_start", step_or_null(p->last_pass_start),
        "lane_bytes_min", (json_int_t)p->lane_bytes_min, "lane_bytes_max",
        (json_int_t)p->lane_bytes_max, "lane_pass2_first", step_or_null(p->lane_pass2_first),
        "lane_pass2_last", step_or_null(p->lane_pass2_last));
    if (value)
        json_object_set_new(value, "records",
                            json_pack("{s:I, s:I, s:I, s:I}", "read", (json_int_t)p->records.read,
                                      "passed", (json_int_t)p->records.passed, "filtered",
                                      (json_int_t)p->records.filtered, "empty",
                                      (json_int_t)p->records.empty));
    char *text = value ? json_dumps(value, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    json_decref(value);
    return text;
}
