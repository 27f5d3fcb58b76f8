/* JSON views of what the ledger reads back (runs, segments, checkpoints,
 * events, steps, comparisons): the one rendering `ordo show --json`,
 * `ordo compare --json` and the service's API all print. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "recipe_diff.h"

/* Compact, non-ASCII escaped: the text can be embedded in any JSON
 * document, and parsing it back yields the same values. */
#define VIEW_FLAGS (JSON_COMPACT | JSON_ENSURE_ASCII)

/* Renders `value` (stolen) as text; NULL when it is NULL or cannot be. */
static char *render(json_t *value)
{
    char *text = value ? json_dumps(value, VIEW_FLAGS) : NULL;
    json_decref(value);
    return text;
}

static json_t *string_or_null(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

/* A run as a JSON object. */
char *ordo_run_info_json(const ordo_run_info *run)
{
    return render(json_pack(
        "{s:I, s:s, s:s, s:o, s:o, s:o, s:i, s:i, s:s, s:I, s:I, s:o, s:o, s:I, s:I, s:I, s:s}",
        "id", (json_int_t)run->id, "name", run->name, "recipe_id", run->recipe_id, "recipe_name",
        string_or_null(run->recipe_name), "group", string_or_null(run->group_tag), "baseline",
        string_or_null(run->baseline), "lanes", run->lanes, "world_size", run->world_size,
        "digest_kind", run->digest_kind, "segments", (json_int_t)run->segments, "steps",
        (json_int_t)run->steps, "first_step",
        run->steps ? json_integer(run->first_step) : json_null(), "last_step",
        run->steps ? json_integer(run->last_step) : json_null(), "checkpoints",
        (json_int_t)run->checkpoints, "conflicts", (json_int_t)run->conflicts, "lane_states",
        (json_int_t)run->lane_states, "created_at", run->created_at));
}

/* A segment; its lane plan and workers are embedded as JSON, not strings. */
char *ordo_segment_info_json(const ordo_segment_info *s)
{
    json_t *plan = json_loads(s->lane_plan, 0, NULL);
    json_t *workers = s->workers ? json_loads(s->workers, 0, NULL) : NULL;
    return render(json_pack(
        "{s:I, s:i, s:i, s:i, s:s, s:I, s:I, s:b, s:o, s:o, s:o, s:o, s:s}", "id",
        (json_int_t)s->id, "ordinal", s->ordinal, "world_size", s->world_size, "lanes", s->lanes,
        "lane_binding", ordo_lane_binding_name(s->lane_binding), "start_step",
        (json_int_t)s->start_step, "end_step", (json_int_t)s->end_step, "open", s->open,
        "resumed_from", s->resumed_from ? json_integer(s->resumed_from) : json_null(), "lane_plan",
        plan ? plan : json_null(), "workers", workers ? workers : json_null(), "host",
        string_or_null(s->host), "created_at", s->created_at));
}

/* A checkpoint, without its state. */
char *ordo_checkpoint_json(const ordo_checkpoint *c)
{
    return render(json_pack("{s:I, s:i, s:I, s:s, s:b}", "step", (json_int_t)c->step, "lanes",
                            c->lanes, "state_bytes", (json_int_t)c->state_size, "created_at",
                            c->created_at, "held", c->held));
}

/* An event; its detail is embedded as JSON. */
char *ordo_event_json(const ordo_event *e)
{
    json_t *detail = json_loads(e->detail, 0, NULL);
    return render(json_pack("{s:I, s:o, s:s, s:o, s:s}", "id", (json_int_t)e->id, "step",
                            e->step ? json_integer(e->step) : json_null(), "kind",
                            ordo_event_kind_name(e->kind), "detail",
                            detail ? detail : json_object(), "created_at", e->created_at));
}

static json_t *hex_array(const unsigned char *digests, int count)
{
    json_t *array = json_array();
    for (int i = 0; array && i < count; i++) {
        char hex[ORDO_DIGEST_HEX_SIZE];
        ordo_digest_to_hex(digests + (size_t)i * ORDO_DIGEST_SIZE, hex);
        json_array_append_new(array, json_string(hex));
    }
    return array;
}

/* A step; absent values are null. */
char *ordo_step_json(const ordo_step *s)
{
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(s->batch_digest, hex);
    json_t *sources = json_null();
    if (s->source_count > 0) {
        sources = json_array();
        for (int i = 0; i < s->source_count; i++)
            json_array_append_new(sources, json_integer(s->source_tokens[i]));
    }
    json_t *metrics = s->metrics ? json_loads(s->metrics, 0, NULL) : NULL;
    return render(
        json_pack("{s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "step", (json_int_t)s->step,
                  "batch_digest", hex, "lane_digests",
                  s->lane_digests ? hex_array(s->lane_digests, s->lane_count) : json_null(),
                  "tokens", s->tokens >= 0 ? json_integer(s->tokens) : json_null(), "pad_tokens",
                  s->pad_tokens >= 0 ? json_integer(s->pad_tokens) : json_null(), "source_tokens",
                  sources, "loss", s->has_loss ? json_real(s->loss) : json_null(), "metrics",
                  metrics ? metrics : json_null()));
}

/* The comparison of runs `a` and `b`. */
char *ordo_compare_result_json(const char *a, const char *b, const ordo_compare_result *r)
{
    json_t *ranges = json_array(), *lanes = json_array();
    for (size_t i = 0; i < r->range_count; i++)
        json_array_append_new(
            ranges, json_pack("[I, I]", (json_int_t)r->ranges[i][0], (json_int_t)r->ranges[i][1]));
    for (size_t i = 0; i < r->lane_count; i++)
        json_array_append_new(lanes, json_integer(r->lanes[i]));
    json_t *diff = r->recipe_diff ? json_loads(r->recipe_diff, 0, NULL) : NULL;
    json_t *recipes = json_pack("{s:o, s:o, s:b}", "a", string_or_null(r->recipe_a), "b",
                                string_or_null(r->recipe_b), "same",
                                r->recipe_a[0] && strcmp(r->recipe_a, r->recipe_b) == 0);
    json_t *view = json_pack(
        "{s:s, s:s, s:b, s:I, s:I, s:I, s:o, s:I, s:I, s:o, s:o, s:I, s:I, s:o, s:o, s:o}", "a", a,
        "b", b, "comparable", r->comparable, "steps_compared", (json_int_t)r->steps_compared,
        "matched", (json_int_t)r->matched, "diverged", (json_int_t)r->diverged,
        "first_divergent_step",
        r->first_divergent_step ? json_integer(r->first_divergent_step) : json_null(), "only_a",
        (json_int_t)r->only_a, "only_b", (json_int_t)r->only_b, "divergent_ranges", ranges,
        "lanes_differ", lanes, "conflicts_a", (json_int_t)r->conflicts_a, "conflicts_b",
        (json_int_t)r->conflicts_b, "first_conflict_step",
        r->first_conflict_step ? json_integer(r->first_conflict_step) : json_null(), "recipes",
        recipes ? recipes : json_null(), "recipe_diff", diff ? diff : json_null());
    char *text =
        view ? ordo__json_dumps_shortest(view) : NULL; /* the recipe's numbers as written */
    json_decref(view);
    return text;
}
