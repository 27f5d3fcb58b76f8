/* Recipes, runs and segments. */
#include <stdlib.h>
#include <string.h>

#include "server.h"

#define LEDGER_OR_RETURN(ledger)                  \
    ordo_error err;                               \
    ordo_ledger *ledger = server_ledger(&err);    \
    if (!ledger)                                  \
        return status_error(&err)

/* A recipe's positive whole-number field, 0 when absent, -1 when bad. */
static json_int_t recipe_number(json_t *recipe, const char *key)
{
    json_t *v = json_object_get(recipe, key);
    if (!v)
        return 0;
    return json_is_integer(v) && json_integer_value(v) > 0 ? json_integer_value(v) : -1;
}

/* POST /api/recipes: validate, canonicalize, store; returns the id. */
response api_recipe_post(request *req)
{
    response error;
    json_t *recipe = body_object(req, &error);
    if (!recipe)
        return error;
    json_int_t lanes = recipe_number(recipe, "lanes"), batch = recipe_number(recipe, "global_batch");
    json_decref(recipe);
    if (lanes < 0 || batch < 0)
        return json_error(400, "invalid", "recipe: 'lanes' and 'global_batch' must be positive "
                                          "whole numbers");
    if (lanes > 0 && batch > 0 && batch % lanes != 0)
        return json_error(400, "invalid", "global_batch (%lld) must be divisible by lanes (%lld)",
                          (long long)batch, (long long)lanes);
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

/* rank -> lane assignment from JSON [[lanes of rank 0], ...], or the
 * logical default when plan is NULL. Returns lanes owned by each lane's
 * rank in `ranks` (malloc'd) or NULL with *error. */
static int *lane_ranks(json_t *plan, int lanes, int world, response *error)
{
    int *ranks = malloc((size_t)(lanes > 0 ? lanes : 1) * sizeof *ranks);
    if (!ranks) {
        *error = json_error(503, "out_of_memory", "out of memory");
        return NULL;
    }
    for (int l = 0; l < lanes; l++)
        ranks[l] = plan ? -1 : ordo_lane_rank(lanes, world, l);
    if (!plan)
        return ranks;
    if (!json_is_array(plan) || (int)json_array_size(plan) != world) {
        free(ranks);
        *error = json_error(400, "invalid", "lane_plan must be an array of %d arrays (one per "
                                            "rank)", world);
        return NULL;
    }
    size_t r;
    json_t *owned;
    json_array_foreach(plan, r, owned) {
        size_t i;
        json_t *lane;
        json_array_foreach(owned, i, lane) {
            json_int_t l = json_integer_value(lane);
            if (!json_is_integer(lane) || l < 0 || l >= lanes || ranks[l] != -1) {
                free(ranks);
                *error = json_error(400, "invalid", "lane_plan: rank %zu lists lane %lld, which "
                                                    "is not one of the %d lanes or is listed "
                                                    "twice", r, (long long)l, lanes);
                return NULL;
            }
            ranks[l] = (int)r;
        }
    }
    for (int l = 0; l < lanes; l++)
        if (ranks[l] < 0) {
            free(ranks);
            *error = json_error(400, "invalid", "lane_plan leaves lane %d without a rank", l);
            return NULL;
        }
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

/* Adds a segment from a JSON body (shared by run creation and resumes). */
static response add_segment(ordo_ledger *ledger, int64_t run_id, int lanes, json_t *body,
                            int64_t start_step, int created)
{
    json_t *world = json_object_get(body, "world_size");
    if (!json_is_integer(world) || json_integer_value(world) < 1 ||
        json_integer_value(world) > 65536)
        return json_error(400, "invalid", "world_size must be a whole number from 1 to 65536");
    int w = (int)json_integer_value(world), bad = 0;
    const char *binding = opt_string(body, "lane_binding", &bad);
    int rank_bound = binding && strcmp(binding, "rank") == 0;
    int plan_lanes = rank_bound ? w : lanes;
    if (!rank_bound && lanes % w != 0)
        return json_error(400, "invalid", "lanes (%d) must be divisible by world size (%d)",
                          lanes, w);
    response error;
    int *ranks = lane_ranks(json_object_get(body, "lane_plan"), plan_lanes, w, &error);
    if (!ranks)
        return error;
    json_t *resumed = json_object_get(body, "resumed_from");
    json_t *replace = json_object_get(body, "replace_crashed");
    if (replace && !json_is_boolean(replace)) {
        free(ranks);
        return json_error(400, "invalid", "replace_crashed must be true or false");
    }
    ordo_segment_spec spec = {.world_size = w, .start_step = start_step, .lanes = plan_lanes,
                              .lane_ranks = ranks,
                              .host = opt_string(body, "host", &bad),
                              .resumed_from = json_is_integer(resumed)
                                                  ? json_integer_value(resumed) : 0,
                              .replace_crashed = json_is_true(replace)};
    if (bad) {
        free(ranks);
        return json_error(400, "invalid", "lane_binding and host must be strings");
    }
    int64_t id = 0;
    ordo_error err;
    ordo_status status = binding ? ordo_lane_binding_parse(binding, &spec.lane_binding, &err)
                                 : ORDO_OK;
    if (status == ORDO_OK)
        status = ordo_segment_add(ledger, run_id, &spec, &id, &err);
    free(ranks);
    if (status != ORDO_OK)
        return status_error(&err);
    return json_ok(created ? 201 : 200, json_pack("{s:I, s:I}", "segment_id", (json_int_t)id,
                                                  "start_step", (json_int_t)start_step));
}

/* The first segment's fields, checked before the run is created (so a
 * refused request records nothing); out.status 0 when they are good. */
static response check_segment(json_t *body, int lanes)
{
    int w = (int)json_integer_value(json_object_get(body, "world_size")), bad = 0;
    const char *binding = opt_string(body, "lane_binding", &bad);
    int rank_bound = binding && strcmp(binding, "rank") == 0;
    if (bad || (binding && !rank_bound && strcmp(binding, "logical") != 0))
        return json_error(400, "invalid", "lane_binding must be 'logical' or 'rank'");
    if (!rank_bound && lanes % w != 0)
        return json_error(400, "invalid", "lanes (%d) must be divisible by world size (%d)",
                          lanes, w);
    response error;
    int *ranks = lane_ranks(json_object_get(body, "lane_plan"), rank_bound ? w : lanes, w, &error);
    if (!ranks)
        return error;
    int per = rank_bound ? 1 : lanes / w, *owned = calloc((size_t)w, sizeof *owned);
    for (int l = 0; owned && l < (rank_bound ? w : lanes); l++)
        owned[ranks[l]]++;
    response out = {0};
    for (int r = 0; owned && r < w && !out.status; r++)
        if (owned[r] != per)
            out = json_error(400, "invalid", "lane_plan gives rank %d %d lanes; every rank "
                                             "owns %d", r, owned[r], per);
    free(owned);
    free(ranks);
    return out;
}

/* The recipe's lane count, or 0 when it has none. */
static int recipe_lanes(ordo_ledger *ledger, const char *id, ordo_error *err)
{
    char *canonical = NULL;
    if (ordo_recipe_get(ledger, id, &canonical, err) != ORDO_OK)
        return -1;
    json_t *recipe = json_loads(canonical, 0, NULL);
    ordo_free(canonical);
    json_int_t lanes = recipe_number(recipe, "lanes");
    json_decref(recipe);
    return lanes > 0 && lanes <= 65536 ? (int)lanes : 0;
}

static const char *const run_keys[] = {"name", "recipe_id", "group", "baseline",
                                       "digest_kind", "world_size", "lane_binding", "lane_plan",
                                       "host", "resumed_from", NULL};
static const char *const segment_keys[] = {"start_step", "world_size", "lane_binding",
                                           "lane_plan", "host", "resumed_from",
                                           "replace_crashed", NULL};

/* POST /api/runs: a run and its first segment (world size, lane plan). */
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
    int bad = 0;
    ordo_run_spec spec = {.name = opt_string(body, "name", &bad),
                          .recipe_id = opt_string(body, "recipe_id", &bad),
                          .group_tag = opt_string(body, "group", &bad),
                          .baseline = opt_string(body, "baseline", &bad),
                          .digest_kind = opt_string(body, "digest_kind", &bad)};
    response out;
    json_t *world = json_object_get(body, "world_size");
    if (bad || !spec.name || !spec.recipe_id)
        out = json_error(400, "invalid", "a run needs string fields name and recipe_id (group, "
                                         "baseline and digest_kind are optional strings)");
    else if (strchr(spec.name, '/'))
        out = json_error(400, "invalid", "run names may not contain '/' (they are URL path "
                                         "segments)");
    else if (!json_is_integer(world) || json_integer_value(world) < 1 ||
             json_integer_value(world) > 65536)
        out = json_error(400, "invalid", "world_size must be a whole number from 1 to 65536");
    else if ((spec.lanes = recipe_lanes(ledger, spec.recipe_id, &err)) < 0)
        out = status_error(&err);
    else if (spec.lanes == 0)
        out = json_error(400, "invalid", "recipe %s has no 'lanes'", spec.recipe_id);
    else if ((out = check_segment(body, spec.lanes)).status)
        ; /* refused before anything is recorded */
    else {
        int64_t run_id = 0;
        ordo_run_info existing;
        int exists = ordo_run_get(ledger, spec.name, &existing, &err) == ORDO_OK;
        int want = (int)json_integer_value(world);
        if (exists && existing.segments > 0 && existing.world_size != want)
            out = json_error(409, "conflict", "run '%s' exists at world size %d, not %d (a new "
                                              "world size is a segment: POST .../segments)",
                             spec.name, existing.world_size, want);
        else if (ordo_run_create(ledger, &spec, &run_id, &err) != ORDO_OK)
            out = status_error(&err);
        else if (exists && existing.segments > 0)
            out = json_ok(200, json_pack("{s:I, s:s, s:b}", "id", (json_int_t)run_id, "name",
                                         spec.name, "created", 0));
        else {
            out = add_segment(ledger, run_id, spec.lanes, body, 1, 1);
            json_t *about = json_pack("{s:I, s:s, s:b}", "id", (json_int_t)run_id, "name",
                                      spec.name, "created", 1);
            if (out.status < 300)
                json_object_update(out.body, about);
            json_decref(about);
        }
    }
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
