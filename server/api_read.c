/* Compare, audit, recovery manifests, metrics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server.h"

/* GET /api/compare?a=RUN&b=RUN */
response api_compare(request *req)
{
    const char *a = query(req, "a"), *b = query(req, "b");
    if (!a || !b)
        return json_error(400, "invalid", "compare needs ?a=RUN&b=RUN");
    ordo_error err;
    ordo_ledger *ledger = server_ledger(&err);
    ordo_compare_result r;
    ordo_run_info ra, rb;
    if (!ledger || ordo_run_get(ledger, a, &ra, &err) != ORDO_OK ||
        ordo_run_get(ledger, b, &rb, &err) != ORDO_OK ||
        ordo_compare_runs(ledger, ra.id, rb.id, &r, &err) != ORDO_OK)
        return status_error(&err);
    /* the library's view holds how the recipes differ (recipe_diff) */
    json_t *body = view_json(ordo_compare_result_json(a, b, &r));
    ordo_compare_result_free(&r);
    return json_ok(200, body);
}

static json_t *world_sizes(ordo_ledger *ledger, int64_t run_id)
{
    ordo_segment_list *segments = NULL;
    ordo_error err;
    json_t *list = json_array();
    if (ordo_segments_list(ledger, run_id, &segments, &err) != ORDO_OK)
        return list;
    for (size_t i = 0; i < segments->count; i++) {
        const ordo_segment_info *s = &segments->items[i];
        json_array_append_new(list, json_pack("{s:i, s:I, s:s}", "world_size", s->world_size,
                                              "from_step", (json_int_t)s->start_step, "binding",
                                              ordo_lane_binding_name(s->lane_binding)));
    }
    ordo_segment_list_free(segments);
    return list;
}

/* How often each source of the recipe repeats over `horizon` steps (the
 * longest run's), from the plan the ledger holds: {"horizon", "sources":
 * [ordo_source_plan_json...]} or {"horizon", "sources": null, "why"}
 * when it cannot be planned (not indexed here, no steps yet). */
static json_t *recipe_passes(ordo_ledger *ledger, const char *id, int64_t horizon,
                             const char *data_root)
{
    json_t *out = json_pack("{s:I}", "horizon", (json_int_t)horizon);
    ordo_recipe *recipe = NULL;
    ordo_error err = {ORDO_INVALID, "no run of this recipe has recorded a step"};
    ordo_source_plan *plans = NULL;
    int count = 0;
    if (horizon >= 1 && ordo_recipe_open_stored(ledger, id, data_root[0] ? data_root : NULL,
                                                &recipe, &err) == ORDO_OK) {
        ordo_recipe_info info;
        ordo_recipe_describe(recipe, &info);
        count = info.source_count;
        plans = calloc((size_t)count, sizeof *plans);
        if (!plans)
            snprintf(err.message, sizeof err.message, "out of memory");
        else if (ordo_recipe_passes(recipe, horizon, plans, &err) != ORDO_OK)
            count = 0;
    }
    json_t *sources = plans && count ? json_array() : NULL;
    for (int i = 0; sources && i < count; i++)
        json_array_append_new(sources, view_json(ordo_source_plan_json(&plans[i])));
    json_object_set_new(out, "sources", sources ? sources : json_null());
    if (!sources)
        json_object_set_new(out, "why", json_string(err.message));
    free(plans);
    ordo_recipe_free(recipe);
    return out;
}

/* GET /api/audit?recipe=ID: every run of a recipe against its baseline,
 * and how often each of its sources repeats over its longest run. */
response api_audit(request *req)
{
    const char *recipe = query(req, "recipe");
    if (!recipe)
        return json_error(400, "invalid", "audit needs ?recipe=ID");
    ordo_error err;
    ordo_ledger *ledger = server_ledger(&err);
    ordo_run_list *runs = NULL;
    if (!ledger || ordo_runs_list(ledger, &runs, &err) != ORDO_OK)
        return status_error(&err);
    json_t *list = json_array();
    const ordo_run_info *longest = NULL;
    for (size_t i = 0; i < runs->count; i++) {
        const ordo_run_info *run = &runs->items[i];
        if (strcmp(run->recipe_id, recipe) != 0)
            continue;
        if (!longest || run->last_step > longest->last_step)
            longest = run;
        json_t *item =
            json_pack("{s:s, s:o, s:o, s:I}", "run", run->name, "baseline",
                      run->baseline[0] ? json_string(run->baseline) : json_null(), "world_sizes",
                      world_sizes(ledger, run->id), "steps", (json_int_t)run->steps);
        ordo_compare_result r;
        ordo_run_info base;
        if (run->baseline[0] && ordo_run_get(ledger, run->baseline, &base, &err) == ORDO_OK &&
            ordo_compare_runs(ledger, base.id, run->id, &r, &err) == ORDO_OK) {
            json_object_set_new(item, "steps_compared", json_integer(r.steps_compared));
            json_object_set_new(item, "matched", json_integer(r.matched));
            json_object_set_new(item, "agreement",
                                r.steps_compared
                                    ? json_real((double)r.matched / (double)r.steps_compared)
                                    : json_null());
            json_object_set_new(item, "first_divergent_step",
                                r.first_divergent_step ? json_integer(r.first_divergent_step)
                                                       : json_null());
            ordo_compare_result_free(&r);
        }
        json_array_append_new(list, item);
    }
    json_t *passes = longest ? recipe_passes(ledger, recipe, longest->last_step, longest->data_root)
                             : json_null();
    ordo_run_list_free(runs);
    return json_ok(200,
                   json_pack("{s:s, s:o, s:o}", "recipe", recipe, "runs", list, "passes", passes));
}

/* GET /api/runs/{run}/recovery?world_size=W[&step=S] */
response api_recovery(request *req, const char *name)
{
    int64_t world = 0, step = 0;
    if (parse_int64(query(req, "world_size"), 1, 65536, &world) ||
        (query(req, "step") && parse_int64(query(req, "step"), 1, ORDO_STEP_MAX, &step)))
        return json_error(400, "invalid",
                          "recovery needs ?world_size=W (1 to 65536) and "
                          "optionally &step=S");
    ordo_error err;
    ordo_ledger *ledger = server_ledger(&err);
    char *json = NULL;
    ordo_run_info run;
    if (!ledger || ordo_run_get(ledger, name, &run, &err) != ORDO_OK ||
        ordo_recovery_manifest(ledger, run.id, (int)world, step, SERVER_MANIFEST_STEPS, &json,
                               &err) != ORDO_OK)
        return status_error(&err);
    json_t *m = json_loads(json, 0, NULL);
    ordo_free(json);
    return json_ok(200, m);
}

/* GET /metrics: Prometheus text format. */
response api_metrics(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return json_error(503, "out_of_memory", "out of memory");
    fprintf(out, "# HELP ordo_requests_total HTTP requests by route and status class.\n"
                 "# TYPE ordo_requests_total counter\n");
    for (int r = 0; r < 16; r++)
        for (int c = 1; c <= 5; c++) {
            long long n = atomic_load(&metrics.requests[r][c]);
            if (n)
                fprintf(out, "ordo_requests_total{route=\"%s\",status=\"%dxx\"} %lld\n",
                        server_route_names[r], c, n);
        }
    fprintf(out, "# HELP ordo_request_seconds_total Time spent answering, by route.\n"
                 "# TYPE ordo_request_seconds_total counter\n");
    for (int r = 0; r < 16; r++) {
        long long us = atomic_load(&metrics.micros[r]);
        if (us)
            fprintf(out, "ordo_request_seconds_total{route=\"%s\"} %.6f\n", server_route_names[r],
                    (double)us / 1e6);
    }
    struct stat st;
    long long db_bytes = stat(server->db, &st) == 0 ? (long long)st.st_size : 0;
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", server->db);
    if (stat(wal, &st) == 0)
        db_bytes += (long long)st.st_size;
    fprintf(out,
            "# HELP ordo_steps_ingested_total Steps newly recorded through the API.\n"
            "# TYPE ordo_steps_ingested_total counter\nordo_steps_ingested_total %lld\n"
            "# HELP ordo_conflicts_total Steps re-reported with another digest.\n"
            "# TYPE ordo_conflicts_total counter\nordo_conflicts_total %lld\n"
            "# HELP ordo_divergences_total Ingested steps that differ from their baseline.\n"
            "# TYPE ordo_divergences_total counter\nordo_divergences_total %lld\n"
            "# HELP ordo_connections_dropped_total Connections shut for sending headers too "
            "slowly or to make room for their address.\n"
            "# TYPE ordo_connections_dropped_total counter\nordo_connections_dropped_total %lld\n"
            "# HELP ordo_database_bytes Ledger file and WAL size.\n"
            "# TYPE ordo_database_bytes gauge\nordo_database_bytes %lld\n",
            atomic_load(&metrics.steps_ingested), atomic_load(&metrics.conflicts),
            atomic_load(&metrics.divergences), guard_dropped(), db_bytes);
    fclose(out);
    return (response){
        .status = 200, .owned_text = text, .content_type = "text/plain; version=0.0.4"};
}
