/* Recipes, runs and segments. */
#include <stdlib.h>
#include <string.h>

#include "server.h"

#define LEDGER_OR_RETURN(ledger)                                                                   \
    ordo_error err;                                                                                \
    ordo_ledger *ledger = server_ledger(&err);                                                     \
    if (!ledger)                                                                                   \
    return status_error(&err)

/* POST /api/recipes: validate, canonicalize, store; returns the id. */
response api_recipe_post(request *req)
{
    response error;
    json_t *recipe = body_object(req, &error); /* the body's limits, then the library's rules */
    if (!recipe)
        return error;
    json_decref(recipe);
    LEDGER_OR_RETURN(ledger);
    char id[ORDO_DIGEST_HEX_SIZE];
    if (ordo_recipe_put(ledger, req->body, req->body_len, id, &err) != ORDO_OK)
        return status_error(&err);
    return json_ok(201, json_pack("{s:s}", "id", id));
}

/* GET /api/recipes/{id}: the canonical recipe. */
response api_recipe_get(const char *id)
{
    LEDGER_OR_RETURN(ledger);
    char *canonical = NULL;
    if (ordo_recipe_get(ledger, id, &canonical, &err) != ORDO_OK)
        return status_error(&err);
    json_t *recipe = json_loads(canonical, 0, NULL);
    ordo_free(canonical);
    return json_ok(200, json_pack("{s:s, s:o}", "id", id, "recipe", recipe ? recipe : json_null()));
}

/* The lane plan of a body as JSON text (the caller's, free), or NULL
 * without one; *bad when it cannot be written. */
static char *plan_text(json_t *body, int *bad)
{
    json_t *plan = json_object_get(body, "lane_plan");
    char *text = plan ? json_dumps(plan, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    if (plan && !text)
        *bad = 1;
    return text;
}

/* A body's "lane_binding": absent or null is logical; 0, or -1 when it is
 * neither 'logical' nor 'rank' (a string not known, or not a string). */
static int read_binding(json_t *body, ordo_lane_binding *binding)
{
    json_t *v = json_object_get(body, "lane_binding");
    *binding = ORDO_BINDING_LOGICAL;
    if (!v || json_is_null(v))
        return 0;
    return json_is_string(v) &&
                   ordo_lane_binding_parse(json_string_value(v), binding, NULL) == ORDO_OK
               ? 0
               : -1;
}

/* The body's lane plan (its "lane_plan" as JSON text, or the default
 * without one) read and checked by the library: *ranks (ordo_free) holds
 * each lane's rank, or NULL with the refusal in *error. */
static int *plan_ranks(json_t *body, int lanes, int world, ordo_lane_binding binding,
                       int *plan_lanes, response *error)
{
    int no_memory = 0;
    char *text = plan_text(body, &no_memory);
    int *ranks = NULL;
    ordo_error err;
    if (no_memory)
        *error = json_error(503, "out_of_memory", "out of memory");
    else if (ordo_lane_plan_parse(lanes, world, binding, text, text ? strlen(text) : 0, &ranks,
                                  plan_lanes, &err) != ORDO_OK)
        *error = status_error(&err);
    free(text);
    return ranks;
}

static const char *opt_string(json_t *body, const char *key, int *bad)
{
    json_t *v = json_object_get(body, key);
    if (!v || json_is_null(v))
        return NULL;
    if (!json_is_string(v))
        *bad = 1;
    return json_string_value(v);
}

/* Adds a segment from a JSON body (a resume), its plan read by the library. */
static response add_segment(ordo_ledger *ledger, int64_t run_id, int lanes, json_t *body,
                            int64_t start_step, int created)
{
    json_t *world = json_object_get(body, "world_size");
    if (!json_is_integer(world) || json_integer_value(world) < 1 ||
        json_integer_value(world) > 65536)
        return json_error(400, "invalid", "world_size must be a whole number from 1 to 65536");
    int w = (int)json_integer_value(world), bad = 0, plan_lanes = 0;
    json_t *binding_value = json_object_get(body, "lane_binding");
    ordo_lane_binding binding;
    if (binding_value && !json_is_null(binding_value) && !json_is_string(binding_value))
        bad = 1; /* refused below, as before */
    else if (read_binding(body, &binding) != 0)
        return json_error(400, "invalid", "lane_binding must be 'logical' or 'rank'");
    if (bad)
        binding = ORDO_BINDING_LOGICAL;
    response error;
    int *ranks = plan_ranks(body, lanes, w, binding, &plan_lanes, &error);
    if (!ranks)
        return error;
    json_t *resumed = json_object_get(body, "resumed_from");
    json_t *replace = json_object_get(body, "replace_crashed");
    if (replace && !json_is_boolean(replace)) {
        ordo_free(ranks);
        return json_error(400, "invalid", "replace_crashed must be true or false");
    }
    ordo_segment_spec spec = {.world_size = w,
                              .start_step = start_step,
                              .lanes = plan_lanes,
                              .lane_ranks = ranks,
                              .lane_binding = binding,
                              .host = opt_string(body, "host", &bad),
                              .resumed_from =
                                  json_is_integer(resumed) ? json_integer_value(resumed) : 0,
                              .replace_crashed = json_is_true(replace)};
    if (bad) {
        ordo_free(ranks);
        return json_error(400, "invalid", "lane_binding and host must be strings");
    }
    int64_t id = 0;
    ordo_error err;
    ordo_status status = ordo_segment_add(ledger, run_id, &spec, &id, &err);
    ordo_free(ranks);
    if (status != ORDO_OK)
        return status_error(&err);
    return json_ok(created ? 201 : 200, json_pack("{s:I, s:I}", "segment_id", (json_int_t)id,
                                                  "start_step", (json_int_t)start_step));
}

static const char *const run_keys[] = {
    "name",         "recipe_id", "group", "baseline",     "digest_kind", "world_size",
    "lane_binding", "lane_plan", "host",  "resumed_from", NULL};
static const char *const segment_keys[] = {"start_step",      "world_size", "lane_binding",
                                           "lane_plan",       "host",       "resumed_from",
                                           "replace_crashed", NULL};

/* POST /api/runs: a run and its first segment (world size, lane plan),
 * made and checked by ordo_run_start. */
response api_runs_post(request *req)
{
    response error;
    json_t *body = body_object(req, &error);
    if (!body)
        return error;
    if (body_keys(body, run_keys, "a run", &error) != 0) {
        json_decref(body);
        return error;
    }
    LEDGER_OR_RETURN(ledger);
    int bad = 0, bad_host = 0, no_memory = 0;
    json_t *world = json_object_get(body, "world_size"),
           *resumed = json_object_get(body, "resumed_from");
    ordo_run_start_spec spec = {.run = {.name = opt_string(body, "name", &bad),
                                        .recipe_id = opt_string(body, "recipe_id", &bad),
                                        .group_tag = opt_string(body, "group", &bad),
                                        .baseline = opt_string(body, "baseline", &bad),
                                        .digest_kind = opt_string(body, "digest_kind", &bad)},
                                .world_size = (int)json_integer_value(world),
                                .lane_plan = plan_text(body, &no_memory),
                                .host = opt_string(body, "host", &bad_host),
                                .resumed_from =
                                    json_is_integer(resumed) ? json_integer_value(resumed) : 0};
    spec.lane_plan_len = spec.lane_plan ? strlen(spec.lane_plan) : 0;
    ordo_run_started started;
    response out;
    if (bad || !spec.run.name || !spec.run.recipe_id)
        out = json_error(400, "invalid",
                         "a run needs string fields name and recipe_id (group, "
                         "baseline and digest_kind are optional strings)");
    else if (ordo_run_name_check(spec.run.name, &err) != ORDO_OK)
        out = status_error(&err);
    else if (!json_is_integer(world) || json_integer_value(world) < 1 ||
             json_integer_value(world) > 65536)
        out = json_error(400, "invalid", "world_size must be a whole number from 1 to 65536");
    else if (no_memory)
        out = json_error(503, "out_of_memory", "out of memory");
    else if (bad_host)
        out = json_error(400, "invalid", "lane_binding and host must be strings");
    else if (read_binding(body, &spec.lane_binding) != 0)
        out = json_error(400, "invalid", "lane_binding must be 'logical' or 'rank'");
    else if (ordo_run_start(ledger, &spec, &started, &err) != ORDO_OK)
        out = status_error(&err);
    else if (!started.created)
        out = json_ok(200, json_pack("{s:I, s:s, s:b}", "id", (json_int_t)started.run_id, "name",
                                     spec.run.name, "created", 0));
    else
        out = json_ok(201,
                      json_pack("{s:I, s:I, s:I, s:s, s:b}", "segment_id",
                                (json_int_t)started.segment_id, "start_step", (json_int_t)1, "id",
                                (json_int_t)started.run_id, "name", spec.run.name, "created", 1));
    free((char *)spec.lane_plan);
    json_decref(body);
    return out;
}

/* GET /api/runs[?recipe=ID&group=TAG] */
response api_runs_list(request *req)
{
    LEDGER_OR_RETURN(ledger);
    ordo_run_list *runs = NULL;
    if (ordo_runs_list(ledger, &runs, &err) != ORDO_OK)
        return status_error(&err);
    const char *recipe = query(req, "recipe"), *group = query(req, "group");
    json_text list = {0};
    json_text_raw(&list, "{\"runs\":[");
    for (size_t i = 0; i < runs->count; i++)
        if ((!recipe || strcmp(recipe, runs->items[i].recipe_id) == 0) &&
            (!group || strcmp(group, runs->items[i].group_tag) == 0))
            json_text_item(&list, ordo_run_info_json(&runs->items[i]));
    ordo_run_list_free(runs);
    json_text_raw(&list, "]}");
    return json_text_ok(&list, 200);
}

/* GET /api/runs/{run}: the run, its segments and events. */
response api_run_get(const char *name)
{
    LEDGER_OR_RETURN(ledger);
    ordo_run_info run;
    ordo_segment_list *segments = NULL;
    if (ordo_run_get(ledger, name, &run, &err) != ORDO_OK ||
        ordo_segments_list(ledger, run.id, &segments, &err) != ORDO_OK)
        return status_error(&err);
    json_t *body = view_json(ordo_run_info_json(&run)), *list = json_array();
    for (size_t i = 0; i < segments->count; i++)
        json_array_append_new(list, view_json(ordo_segment_info_json(&segments->items[i])));
    ordo_segment_list_free(segments);
    json_object_set_new(body, "segments", list);
    ordo_event_list *events = NULL;
    if (ordo_events_list(ledger, run.id, ORDO_EVENT_ANY, &events, &err) == ORDO_OK) {
        json_t *evs = json_array();
        size_t count = events->count;
        size_t first = count > SERVER_MAX_EVENTS ? count - SERVER_MAX_EVENTS : 0;
        for (size_t i = first; i < count; i++) /* the latest ones */
            json_array_append_new(evs, view_json(ordo_event_json(&events->items[i])));
        ordo_event_list_free(events);
        json_object_set_new(body, "events", evs);
        json_object_set_new(body, "events_total", json_integer((json_int_t)count));
    }
    return json_ok(200, body);
}

/* POST /api/runs/{run}/segments: a resume at a new world size. */
response api_segments_post(request *req, const char *name)
{
    response error;
    json_t *body = body_object(req, &error);
    if (!body)
        return error;
    if (body_keys(body, segment_keys, "a segment", &error) != 0) {
        json_decref(body);
        return error;
    }
    LEDGER_OR_RETURN(ledger);
    ordo_run_info run;
    response out;
    json_t *start = json_object_get(body, "start_step");
    if (ordo_run_get(ledger, name, &run, &err) != ORDO_OK)
        out = status_error(&err);
    else if (!json_is_integer(start) || json_integer_value(start) < 1 ||
             json_integer_value(start) > ORDO_STEP_MAX)
        out = json_error(400, "invalid", "start_step must be a whole number from 1 to %lld",
                         (long long)ORDO_STEP_MAX);
    else
        out = add_segment(ledger, run.id, run.lanes, body, json_integer_value(start), 1);
    json_decref(body);
    return out;
}
