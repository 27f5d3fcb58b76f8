/* Downsampled views for the dashboard: comparison strips and run series. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

static int range_args(const request *req, int64_t *from, int64_t *to, int64_t *buckets)
{
    *from = 0, *to = 0, *buckets = 1000;
    return (query(req, "from") && parse_int64(query(req, "from"), 1, ORDO_STEP_MAX, from)) ||
           (query(req, "to") && parse_int64(query(req, "to"), 1, ORDO_STEP_MAX, to)) ||
           (query(req, "buckets") && parse_int64(query(req, "buckets"), 1, 100000, buckets));
}

/* GET /api/compare/strip?a=&b=[&buckets=&from=&to=] */
response api_compare_strip(request *req)
{
    const char *a = query(req, "a"), *b = query(req, "b");
    int64_t from, to, buckets;
    if (!a || !b || range_args(req, &from, &to, &buckets))
        return json_error(400, "invalid",
                          "strip needs ?a=RUN&b=RUN and optionally buckets (1 to "
                          "100000), from and to (steps)");
    ordo_error err;
    ordo_ledger *ledger = server_ledger(&err);
    ordo_compare_buckets_result r;
    ordo_run_info ra, rb;
    if (!ledger || ordo_run_get(ledger, a, &ra, &err) != ORDO_OK ||
        ordo_run_get(ledger, b, &rb, &err) != ORDO_OK ||
        ordo_compare_buckets(ledger, ra.id, rb.id, from, to, (int)buckets, &r, &err) != ORDO_OK)
        return status_error(&err);
    json_t *list = json_array();
    int lane_bytes = (r.lanes + 7) / 8;
    for (size_t i = 0; i < r.count; i++) {
        const ordo_compare_bucket *k = &r.buckets[i];
        json_t *lanes = json_array();
        const unsigned char *row = r.lane_map + i * (size_t)lane_bytes;
        for (int l = 0; k->diverged && l < r.lanes; l += 8) /* whole empty bytes skipped */
            for (int bit = 0; row[l / 8] && bit < 8 && l + bit < r.lanes; bit++)
                if (row[l / 8] >> bit & 1)
                    json_array_append_new(lanes, json_integer(l + bit));
        json_array_append_new(list,
                              json_pack("[I, I, I, I, I, o]", (json_int_t)k->from,
                                        (json_int_t)k->to, (json_int_t)k->matched,
                                        (json_int_t)k->diverged, (json_int_t)k->missing, lanes));
    }
    json_t *body =
        json_pack("{s:s, s:s, s:I, s:i, s:s, s:o}", "a", a, "b", b, "width", (json_int_t)r.width,
                  "lanes", r.lanes, "columns",
                  "from, to, matched, diverged, missing, lanes that differ", "buckets", list);
    ordo_compare_buckets_result_free(&r);
    return json_ok(200, body);
}

/* `count` shares of row `row`, null where one is not known. */
static json_t *share_row(const double *shares, size_t row, int count)
{
    json_t *list = json_array();
    for (int s = 0; s < count; s++) {
        double x = shares[row * (size_t)count + (size_t)s];
        json_array_append_new(list, isfinite(x) ? json_real(x) : json_null());
    }
    return list;
}

static json_t *bucket_json(const ordo_series_result *r, size_t i)
{
    const ordo_series_bucket *k = &r->buckets[i];
    int count = r->sources;
    json_t *tokens = json_array();
    for (int s = 0; s < count; s++)
        json_array_append_new(tokens,
                              json_integer(r->source_tokens[i * (size_t)count + (size_t)s]));
    double mean = k->loss_steps ? k->loss_sum / (double)k->loss_steps : NAN;
    int finite = k->loss_steps && isfinite(mean) && isfinite(k->loss_min) && isfinite(k->loss_max);
    return json_pack("{s:I, s:I, s:I, s:o, s:o, s:o, s:I, s:o, s:o, s:o}", "from",
                     (json_int_t)k->from, "to", (json_int_t)k->to, "steps", (json_int_t)k->steps,
                     "loss", finite ? json_real(mean) : json_null(), "loss_min",
                     finite ? json_real(k->loss_min) : json_null(), "loss_max",
                     finite ? json_real(k->loss_max) : json_null(), "tokens", (json_int_t)k->tokens,
                     "source_tokens", tokens, "target_shares",
                     share_row(r->target_shares, i, count), "delivered_shares",
                     share_row(r->delivered_shares, i, count));
}

/* GET /api/runs/{run}/series[?buckets=&from=&to=]: buckets of the run's
 * steps with their target and delivered shares, and the mixture's summary
 * over the same steps. */
response api_run_series(request *req, const char *name)
{
    int64_t from, to, buckets;
    if (range_args(req, &from, &to, &buckets))
        return json_error(400, "invalid", "series takes buckets (1 to 100000), from and to");
    ordo_error err;
    ordo_ledger *ledger = server_ledger(&err);
    ordo_run_info run;
    ordo_mixture *mixture = NULL;
    ordo_series_result r;
    if (!ledger || ordo_run_get(ledger, name, &run, &err) != ORDO_OK ||
        ordo_mixture_open(ledger, run.recipe_id, &mixture, &err) != ORDO_OK)
        return status_error(&err);
    if (ordo_run_series(ledger, run.id, from, to, (int)buckets, mixture, &r, &err) != ORDO_OK) {
        ordo_mixture_free(mixture);
        return status_error(&err);
    }
    json_t *list = json_array(), *sources = json_array();
    for (size_t i = 0; i < r.count; i++)
        if (r.buckets[i].steps)
            json_array_append_new(list, bucket_json(&r, i));
    for (int s = 0; s < ordo_mixture_sources(mixture); s++)
        json_array_append_new(sources, json_string(ordo_mixture_source_name(mixture, s)));
    json_t *body =
        json_pack("{s:s, s:I, s:o, s:o, s:o}", "run", name, "width", (json_int_t)r.width, "sources",
                  sources, "mixture", view_json(ordo_mixture_json(mixture)), "buckets", list);
    ordo_series_result_free(&r);
    ordo_mixture_free(mixture);
    return json_ok(200, body);
}
