/* Steps and checkpoints: ingest and read back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

typedef struct {
    ordo_step *steps;
    unsigned char *lanes; /* lane digests of every step, back to back */
    int64_t *sources;
    char **metrics;
    unsigned char **lane_states; /* each step's decoded lane_state, or NULL (ordo_free) */
    size_t count;
    char why[256]; /* what is wrong with the item refused */
} step_batch;

static void batch_free(step_batch *b)
{
    for (size_t i = 0; b->metrics && i < b->count; i++)
        free(b->metrics[i]);
    for (size_t i = 0; b->lane_states && i < b->count; i++)
        ordo_free(b->lane_states[i]);
    free(b->lane_states);
    free(b->steps);
    free(b->lanes);
    free(b->sources);
    free(b->metrics);
}

static int hex_digest(json_t *v, unsigned char out[ORDO_DIGEST_SIZE])
{
    const char *hex = json_string_value(v);
    ordo_error err;
    return hex && ordo_digest_from_hex(hex, out, &err) == ORDO_OK ? 0 : -1;
}

static int64_t int_or(json_t *v, int64_t fallback, int *bad)
{
    if (!v || json_is_null(v))
        return fallback;
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        *bad = 1;
        return fallback;
    }
    return json_integer_value(v);
}

static const char *const step_keys[] = {
    "step",          "batch_digest", "lane_digests", "tokens",     "pad_tokens",
    "source_tokens", "loss",         "metrics",      "lane_state", NULL};

/* An item's unknown key as the reason it is refused, or NULL. */
static const char *unknown_in(json_t *item, const char *const *known, char *why, size_t size)
{
    const char *key = unknown_key(item, known);
    if (!key)
        return NULL;
    snprintf(why, size, "has an unknown key '%.100s'", key);
    return why;
}

/* One whole step's digests from JSON; returns an error text or NULL. */
static const char *parse_digests(json_t *item, step_batch *b, ordo_step *s, size_t lane_offset)
{
    json_t *lanes = json_object_get(item, "lane_digests");
    if (lanes && !json_is_null(lanes)) {
        if (!json_is_array(lanes) || json_array_size(lanes) == 0 || json_array_size(lanes) > 65536)
            return "lane_digests must be an array of 1 to 65536 digests";
        for (size_t l = 0; l < json_array_size(lanes); l++)
            if (hex_digest(json_array_get(lanes, l), b->lanes + (lane_offset + l) * 32))
                return "lane_digests must be 64 hex characters each";
        s->lane_digests = b->lanes + lane_offset * 32;
        s->lane_count = (int)json_array_size(lanes);
    }
    json_t *digest = json_object_get(item, "batch_digest");
    if (digest && hex_digest(digest, s->batch_digest))
        return "batch_digest must be 64 hex characters";
    if (!digest && !s->lane_digests)
        return "needs a batch_digest or lane_digests";
    if (!digest)
        ordo_batch_digest(s->lane_digests, s->lane_count, s->batch_digest);
    return NULL;
}

/* A step's lane_state: padded base64 of 1 to SERVER_MAX_LANE_STATE bytes,
 * decoded into b->lane_states[i] (freed with the batch); whether it is a
 * state of that step and its lanes is the library's rule. Returns an error
 * text or NULL. */
static const char *parse_lane_state(json_t *item, step_batch *b, ordo_step *s, size_t i)
{
    json_t *value = json_object_get(item, "lane_state");
    if (!value || json_is_null(value))
        return NULL;
    const char *text = json_string_value(value);
    size_t len = text ? json_string_length(value) : 0;
    ordo_error err = {0};
    if (text && len && len <= (SERVER_MAX_LANE_STATE + 2) / 3 * 4 &&
        ordo_base64_decode(text, len, &b->lane_states[i], &s->lane_state_size, &err) == ORDO_OK &&
        s->lane_state_size <= SERVER_MAX_LANE_STATE) {
        s->lane_state = b->lane_states[i];
        return NULL;
    }
    if (err.status == ORDO_NOMEM)
        return "lane_state could not be read (out of memory)";
    snprintf(b->why, sizeof b->why,
             "lane_state must be padded base64 of 1 to %zu bytes (every lane's state, as a "
             "checkpoint's)",
             SERVER_MAX_LANE_STATE);
    return b->why;
}

/* One whole step from JSON; returns an error text or NULL. */
static const char *parse_step(json_t *item, step_batch *b, size_t i, size_t lane_offset,
                              size_t source_offset)
{
    ordo_step *s = &b->steps[i];
    json_t *step = json_object_get(item, "step");
    if (!json_is_object(item))
        return "is not an object";
    const char *why = unknown_in(item, step_keys, b->why, sizeof b->why);
    if (why)
        return why;
    if (!json_is_integer(step) || json_integer_value(step) < 1 ||
        json_integer_value(step) > ORDO_STEP_MAX)
        return "needs a step from 1 to 1000000000000";
    ordo_step_init(s, json_integer_value(step));
    if ((why = parse_digests(item, b, s, lane_offset)))
        return why;
    int bad = 0;
    s->tokens = int_or(json_object_get(item, "tokens"), -1, &bad);
    s->pad_tokens = int_or(json_object_get(item, "pad_tokens"), -1, &bad);
    if (bad)
        return "tokens and pad_tokens must be whole numbers >= 0";
    json_t *sources = json_object_get(item, "source_tokens");
    if (sources && !json_is_null(sources)) {
        if (!json_is_array(sources) || json_array_size(sources) > 4096)
            return "source_tokens must be an array of whole numbers";
        for (size_t k = 0; k < json_array_size(sources); k++) {
            b->sources[source_offset + k] = int_or(json_array_get(sources, k), -1, &bad);
            if (bad || b->sources[source_offset + k] < 0)
                return "source_tokens must be an array of whole numbers";
        }
        s->source_tokens = b->sources + source_offset;
        s->source_count = (int)json_array_size(sources);
    }
    json_t *loss = json_object_get(item, "loss");
    if (loss && !json_is_null(loss)) {
        if (!json_is_number(loss))
            return "loss must be a number";
        s->has_loss = 1;
        s->loss = json_number_value(loss);
    }
    json_t *metrics_value = json_object_get(item, "metrics");
    if (metrics_value && !json_is_null(metrics_value)) {
        if (!json_is_object(metrics_value))
            return "metrics must be an object of scalars";
        /* which values it may hold is the library's rule */
        b->metrics[i] = json_dumps(metrics_value, JSON_COMPACT | JSON_SORT_KEYS);
        s->metrics = b->metrics[i];
        if (!s->metrics)
            return "metrics could not be read (out of memory)";
    }
    return parse_lane_state(item, b, s, i);
}

static response parse_steps(json_t *items, step_batch *b)
{
    size_t n = json_array_size(items), lanes = 0, sources = 0;
    for (size_t i = 0; i < n; i++) {
        lanes += json_array_size(json_object_get(json_array_get(items, i), "lane_digests"));
        sources += json_array_size(json_object_get(json_array_get(items, i), "source_tokens"));
    }
    b->steps = calloc(n, sizeof *b->steps);
    b->lanes = malloc((lanes ? lanes : 1) * 32);
    b->sources = malloc((sources ? sources : 1) * sizeof *b->sources);
    b->metrics = calloc(n, sizeof *b->metrics);
    b->lane_states = calloc(n, sizeof *b->lane_states);
    b->count = n;
    if (!b->steps || !b->lanes || !b->sources || !b->metrics || !b->lane_states)
        return json_error(503, "out_of_memory", "out of memory");
    lanes = sources = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *item = json_array_get(items, i);
        const char *why = parse_step(item, b, i, lanes, sources);
        if (why)
            return json_error(400, "invalid", "steps[%zu] %s", i, why);
        lanes += (size_t)b->steps[i].lane_count;
        sources += (size_t)b->steps[i].source_count;
    }
    return (response){0};
}

/* The answer to an ingest: what the library took, and the divergences
 * from the baseline it found (and recorded with the steps). */
static response answered(const ordo_record_result *result, const char *count_key, size_t count)
{
    json_t *divergences = json_array();
    for (size_t i = 0; i < result->listed; i++) {
        char ours[ORDO_DIGEST_HEX_SIZE], theirs[ORDO_DIGEST_HEX_SIZE];
        ordo_digest_to_hex(result->divergences[i].digest, ours);
        ordo_digest_to_hex(result->divergences[i].baseline_digest, theirs);
        json_array_append_new(divergences, json_pack("{s:I, s:s, s:s}", "step",
                                                     (json_int_t)result->divergences[i].step,
                                                     "digest", ours, "baseline_digest", theirs));
    }
    atomic_fetch_add(&metrics.steps_ingested, (long long)result->inserted);
    atomic_fetch_add(&metrics.conflicts, (long long)result->conflicts);
    atomic_fetch_add(&metrics.divergences, (long long)result->diverged);
    return json_ok(
        200, json_pack("{s:I, s:I, s:I, s:o, s:I, s:o}", count_key, (json_int_t)count, "unchanged",
                       (json_int_t)result->unchanged, "conflicts", (json_int_t)result->conflicts,
                       "first_conflict_step",
                       result->conflicts ? json_integer(result->first_conflict_step) : json_null(),
                       "diverged", (json_int_t)result->diverged, "divergences", divergences));
}

static const char *const lane_keys[] = {"step", "lane", "digest", NULL};

/* Lane reports of `rank` from JSON; out.status is 0 when they all parse. */
static response parse_lanes(json_t *items, int rank, ordo_lane_report *reports)
{
    response out = {0};
    size_t n = json_array_size(items);
    for (size_t i = 0; i < n && !out.status; i++) {
        json_t *item = json_array_get(items, i), *step = json_object_get(item, "step"),
               *lane = json_object_get(item, "lane");
        const char *key = json_is_object(item) ? unknown_key(item, lane_keys) : NULL;
        if (!json_is_object(item))
            out = json_error(400, "invalid", "lanes[%zu] is not an object", i);
        else if (key)
            out = json_error(400, "invalid",
                             "lanes[%zu] has an unknown key '%.100s' (known: "
                             "step, lane, digest)",
                             i, key);
        else if (!json_is_integer(step) || json_integer_value(step) < 1 ||
                 json_integer_value(step) > ORDO_STEP_MAX)
            out = json_error(400, "invalid", "lanes[%zu] needs a step from 1 to %lld", i,
                             (long long)ORDO_STEP_MAX);
        else if (!json_is_integer(lane) || json_integer_value(lane) < 0 ||
                 json_integer_value(lane) > 65535)
            out = json_error(400, "invalid", "lanes[%zu] needs a lane from 0 to 65535", i);
        else if (hex_digest(json_object_get(item, "digest"), reports[i].digest))
            out = json_error(400, "invalid", "lanes[%zu] digest must be 64 hex characters", i);
        reports[i].step = json_integer_value(step);
        reports[i].lane = (int)json_integer_value(lane);
        reports[i].rank = rank;
    }
    return out;
}

/* The reporting rank of a lanes body: a whole number 0 to 65535. */
static int body_rank(json_t *body, response *error)
{
    json_t *rank = json_object_get(body, "rank");
    if (!json_is_integer(rank) || json_integer_value(rank) < 0 ||
        json_integer_value(rank) > 65535) {
        *error = json_error(400, "invalid",
                            "a lanes body needs 'rank', the reporting rank (a "
                            "whole number from 0 to 65535)");
        return -1;
    }
    return (int)json_integer_value(rank);
}

/* {"rank": r, "lanes": [{step, lane, digest}, ...]}: one rank's lane
 * digests (the body is released once they are read). */
static response post_lanes(json_t *body, const char *name)
{
    json_t *items = json_object_get(body, "lanes");
    size_t n = json_array_size(items);
    response out = {0};
    int rank = body_rank(body, &out);
    if (rank < 0)
        return out;
    if (!json_is_array(items) || n == 0)
        return json_error(400, "invalid", "'lanes' must be a non-empty array");
    if (n > SERVER_MAX_LANE_REPORTS)
        return json_error(400, "too_many_items", "%zu lane reports in one request; at most %d", n,
                          SERVER_MAX_LANE_REPORTS);
    ordo_lane_report *reports = calloc(n, sizeof *reports);
    if (!reports)
        return json_error(503, "out_of_memory", "out of memory");
    out = parse_lanes(items, rank, reports);
    ordo_error err;
    ordo_ledger *ledger = out.status ? NULL : server_ledger(&err);
    ordo_run_info run;
    ordo_record_result *result = malloc(sizeof *result);
    size_t completed = 0;
    if (out.status)
        ;
    else if (!result)
        out = json_error(503, "out_of_memory", "out of memory");
    else if (!ledger || ordo_run_get(ledger, name, &run, &err) != ORDO_OK ||
             ordo_lanes_record(ledger, run.id, reports, n, result, &completed, &err) != ORDO_OK)
        out = status_error(&err);
    else
        out = answered(result, "completed_steps", completed);
    free(result);
    free(reports);
    return out;
}

/* {"steps": [...]}: whole steps, stored whole or not at all. */
static response post_steps(json_t *body, const char *name)
{
    json_t *items = json_object_get(body, "steps");
    if (!json_is_array(items) || json_array_size(items) == 0)
        return json_error(400, "invalid",
                          "the body needs a non-empty array 'steps' (or "
                          "'lanes' with 'rank')");
    if (json_array_size(items) > SERVER_MAX_ITEMS)
        return json_error(400, "too_many_items", "%zu steps in one request; at most %d",
                          json_array_size(items), SERVER_MAX_ITEMS);
    ordo_error err;
    ordo_ledger *ledger = server_ledger(&err);
    ordo_run_info run;
    step_batch b = {0};
    ordo_record_result *result = malloc(sizeof *result);
    response out;
    if (!result)
        out = json_error(503, "out_of_memory", "out of memory");
    else if (!ledger || ordo_run_get(ledger, name, &run, &err) != ORDO_OK)
        out = status_error(&err);
    else if ((out = parse_steps(items, &b)).status == 0) {
        ordo_status status = ordo_steps_record(ledger, run.id, b.steps, b.count, result, &err);
        out = status != ORDO_OK && status != ORDO_CONFLICT
                  ? status_error(&err)
                  : answered(result, "inserted", result->inserted);
    }
    free(result);
    batch_free(&b);
    return out;
}

static const char *const steps_body_keys[] = {"steps", "lanes", "rank", NULL};

/* The body's shape: whole steps or one rank's lanes, never both. */
static int body_shape(json_t *body, response *error)
{
    if (body_keys(body, steps_body_keys, "a steps body", error) != 0)
        return -1;
    int steps = json_object_get(body, "steps") != NULL;
    int lanes = json_object_get(body, "lanes") != NULL || json_object_get(body, "rank") != NULL;
    if (steps && lanes) {
        *error = json_error(400, "invalid",
                            "a body has either 'steps' (whole steps) or 'lanes' "
                            "and 'rank' (one rank's lanes), not both");
        return -1;
    }
    return lanes;
}

/* POST /api/runs/{run}/steps: {"steps": [...]} whole steps, or {"rank":
 * r, "lanes": [...]} one rank's lane digests; stored whole or not at all. */
response api_steps_post(request *req, const char *name)
{
    response out;
    json_t *body = body_object(req, &out);
    if (!body)
        return out;
    int lanes = body_shape(body, &out);
    if (lanes >= 0)
        out = lanes ? post_lanes(body, name) : post_steps(body, name);
    json_decref(body);
    return out;
}

typedef struct {
    json_text list;
    int64_t limit, next;
    const ordo_mixture *mixture;
} page;

static int add_step(const ordo_step *s, void *context)
{
    page *p = context;
    if (p->list.items == p->limit) {
        p->next = s->step;
        return 1;
    }
    json_text_item(&p->list, ordo_step_mixture_json(s, p->mixture));
    return 0;
}

/* GET /api/runs/{run}/steps?from=&to=&limit= (pages of at most 10,000),
 * each step with its target and delivered shares. */
response api_steps_get(request *req, const char *name)
{
    int64_t from = 1, to = ORDO_STEP_MAX, limit = 1000;
    if ((query(req, "from") && parse_int64(query(req, "from"), 1, ORDO_STEP_MAX, &from)) ||
        (query(req, "to") && parse_int64(query(req, "to"), 1, ORDO_STEP_MAX, &to)) ||
        (query(req, "limit") && parse_int64(query(req, "limit"), 1, SERVER_MAX_ITEMS, &limit)))
        return json_error(400, "invalid",
                          "from and to must be steps from 1 to %lld, limit 1 to "
                          "%d",
                          (long long)ORDO_STEP_MAX, SERVER_MAX_ITEMS);
    ordo_error err;
    ordo_ledger *ledger = server_ledger(&err);
    ordo_run_info run;
    ordo_mixture *mixture = NULL;
    if (!ledger || ordo_run_get(ledger, name, &run, &err) != ORDO_OK ||
        ordo_mixture_open(ledger, run.recipe_id, &mixture, &err) != ORDO_OK)
        return status_error(&err);
    page p = {{0}, limit, 0, mixture};
    json_text_raw(&p.list, "{\"steps\":[");
    ordo_status status = ordo_steps_scan(ledger, run.id, from, to, add_step, &p, &err);
    ordo_mixture_free(mixture);
    if (status != ORDO_OK) {
        free(p.list.data);
        return status_error(&err);
    }
    char next[32] = "null";
    if (p.next)
        snprintf(next, sizeof next, "%lld", (long long)p.next);
    json_text_raw(&p.list, "],\"next\":");
    json_text_raw(&p.list, next);
    json_text_raw(&p.list, "}");
    return json_text_ok(&p.list, 200);
}

/* 201 for a checkpoint of a complete step; 202 with "held" for one whose
 * step still has lanes pending (resumes skip it until they are in). */
static response checkpoint_recorded(ordo_ledger *ledger, int64_t run_id, int64_t step)
{
    ordo_checkpoint c;
    ordo_error err;
    int held = ordo_checkpoint_get(ledger, run_id, step, &c, &err) != ORDO_OK;
    if (!held)
        ordo_checkpoint_free(&c);
    return json_ok(held ? 202 : 201,
                   json_pack("{s:I, s:b}", "step", (json_int_t)step, "held", held));
}

/* POST /api/runs/{run}/checkpoints: {step, lanes, state (base64)}. */
static const char *const checkpoint_keys[] = {"step", "lanes", "state", NULL};

response api_checkpoints_post(request *req, const char *name)
{
    response error;
    json_t *body = body_object(req, &error);
    if (!body)
        return error;
    if (body_keys(body, checkpoint_keys, "a checkpoint", &error) != 0) {
        json_decref(body);
        return error;
    }
    json_t *step = json_object_get(body, "step"), *lanes = json_object_get(body, "lanes");
    const char *state = json_string_value(json_object_get(body, "state"));
    unsigned char *raw = NULL;
    size_t n = 0;
    ordo_error err;
    if (state && ordo_base64_decode(state, strlen(state), &raw, &n, &err) != ORDO_OK)
        n = 0; /* the library's decoder: padded, no blanks */
    response out;
    ordo_ledger *ledger = NULL;
    ordo_run_info run;
    int state_lanes = 0;
    int64_t state_step = 0;
    if (!json_is_integer(step) || !json_is_integer(lanes) || json_integer_value(lanes) < 1 ||
        json_integer_value(lanes) > 65536)
        out = json_error(400, "invalid",
                         "a checkpoint needs whole numbers step and lanes (1 to "
                         "65536)");
    else if (n == 0)
        out = json_error(400, "invalid", "state must be non-empty base64");
    else if (ordo_checkpoint_describe(raw, n, &state_lanes, &state_step, &err) != ORDO_OK)
        out = json_error(400, "invalid", "state: %s", err.message);
    else if (state_lanes != json_integer_value(lanes) || state_step != json_integer_value(step))
        out = json_error(400, "invalid",
                         "the state is of step %lld with %d lanes, not step %lld "
                         "with %lld",
                         (long long)state_step, state_lanes, (long long)json_integer_value(step),
                         (long long)json_integer_value(lanes));
    else if (!(ledger = server_ledger(&err)) || ordo_run_get(ledger, name, &run, &err) != ORDO_OK)
        out = status_error(&err);
    else {
        ordo_status status = ordo_checkpoint_record(ledger, run.id, json_integer_value(step),
                                                    (int)json_integer_value(lanes), raw, n, &err);
        out = status == ORDO_OK ? checkpoint_recorded(ledger, run.id, json_integer_value(step))
                                : status_error(&err);
    }
    ordo_free(raw);
    json_decref(body);
    return out;
}

/* GET /api/runs/{run}/checkpoints */
response api_checkpoints_get(const char *name)
{
    ordo_error err;
    ordo_ledger *ledger = server_ledger(&err);
    ordo_run_info run;
    ordo_checkpoint_list *list = NULL;
    if (!ledger || ordo_run_get(ledger, name, &run, &err) != ORDO_OK ||
        ordo_checkpoints_list(ledger, run.id, &list, &err) != ORDO_OK)
        return status_error(&err);
    json_t *out = json_array();
    for (size_t i = 0; i < list->count; i++)
        json_array_append_new(out, view_json(ordo_checkpoint_json(&list->items[i])));
    ordo_checkpoint_list_free(list);
    return json_ok(200, json_pack("{s:o}", "checkpoints", out));
}

/* Every body parser of this file, without a ledger (the fuzzer's entry):
 * the bytes go through the same limits and checks as a request's. */
void server_fuzz_bodies(const char *bytes, size_t size)
{
    request req = {.body = (char *)bytes, .body_len = size};
    response out = {0};
    json_t *body = body_object(&req, &out);
    int lanes = body ? body_shape(body, &out) : -1;
    json_t *items = json_object_get(body, lanes ? "lanes" : "steps");
    size_t n = json_array_size(items);
    if (lanes == 0 && n && n <= SERVER_MAX_ITEMS) {
        step_batch b = {0};
        out = parse_steps(items, &b);
        batch_free(&b);
    } else if (lanes == 1 && n && n <= SERVER_MAX_LANE_REPORTS) {
        ordo_lane_report *reports = calloc(n, sizeof *reports);
        response rank = {0};
        if (reports && body_rank(body, &rank) >= 0)
            out = parse_lanes(items, 0, reports);
        json_decref(rank.body);
        free(reports);
    }
    json_decref(out.body);
    json_decref(body);
    body_release(&req);
}
