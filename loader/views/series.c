/* A run's steps downsampled for display: loss, tokens and the mixture's
 * target and delivered shares by bucket. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/sql.h"

typedef struct {
    ordo_series_result *r;
    int64_t from;
    ordo_mixture *mixture;
    double *target, *delivered; /* scratch, r->sources each */
    int64_t *bucket_steps;      /* per bucket: steps with a target */
} series_scan;

/* The step's target shares into its bucket's sums (means at the end). */
static void add_shares(series_scan *c, const ordo_step *s, size_t i)
{
    ordo_series_result *r = c->r;
    if (!c->mixture ||
        !(ordo_mixture_step(c->mixture, s, c->target, c->delivered) & ORDO_MIXTURE_TARGET))
        return;
    c->bucket_steps[i]++;
    for (int k = 0; k < r->sources; k++)
        r->target_shares[i * (size_t)r->sources + (size_t)k] += c->target[k];
    ordo_mixture_add(c->mixture, s);
}

static int add(const ordo_step *s, void *context)
{
    series_scan *c = context;
    ordo_series_result *r = c->r;
    size_t i = (size_t)((s->step - c->from) / r->width);
    if (i >= r->count)
        return 0;
    ordo_series_bucket *b = &r->buckets[i];
    b->steps++;
    if (s->has_loss && isfinite(s->loss)) {
        b->loss_sum += s->loss;
        b->loss_steps++;
        b->loss_min = b->loss_steps == 1 || s->loss < b->loss_min ? s->loss : b->loss_min;
        b->loss_max = b->loss_steps == 1 || s->loss > b->loss_max ? s->loss : b->loss_max;
    }
    if (s->tokens > 0)
        b->tokens += s->tokens;
    if (s->source_count == r->sources)
        for (int k = 0; k < r->sources; k++)
            r->source_tokens[i * (size_t)r->sources + (size_t)k] += s->source_tokens[k];
    add_shares(c, s, i);
    return 0;
}

/* Means of the targets, shares of the tokens; NAN where not known. */
static void finish_shares(series_scan *c)
{
    ordo_series_result *r = c->r;
    for (size_t i = 0; i < r->count; i++) {
        int64_t total = 0;
        for (int k = 0; k < r->sources; k++)
            total += r->source_tokens[i * (size_t)r->sources + (size_t)k];
        for (int k = 0; k < r->sources; k++) {
            size_t at = i * (size_t)r->sources + (size_t)k;
            r->target_shares[at] =
                c->bucket_steps[i] ? r->target_shares[at] / (double)c->bucket_steps[i] : NAN;
            r->delivered_shares[at] =
                total > 0 ? (double)r->source_tokens[at] / (double)total : NAN;
        }
    }
}

/* Downsamples a run's steps; see ordo.h. */
ordo_status ordo_run_series(ordo_ledger *ledger, int64_t run_id, int64_t from, int64_t to,
                            int buckets, ordo_mixture *mixture, ordo_series_result *out,
                            ordo_error *err)
{
    int sources = mixture ? ordo_mixture_sources(mixture) : 0;
    memset(out, 0, sizeof *out);
    ordo_run_info info;
    ordo_status status = ordo__run_get_id(ledger, run_id, &info, err);
    if (status != ORDO_OK)
        return status;
    if (buckets < 1 || buckets > 100000)
        return ordo__error(err, ORDO_INVALID, "buckets (%d) must be 1 to 100000", buckets);
    from = from > 0 ? from : 1;
    to = to > 0 ? to : (info.last_step > 0 ? info.last_step : 1);
    if (to < from)
        to = from;
    int64_t width = (to - from + buckets) / buckets;
    size_t count = (size_t)((to - from + width) / width);
    out->buckets = calloc(count, sizeof *out->buckets);
    size_t cells = count * (size_t)(sources ? sources : 1);
    out->source_tokens = calloc(cells, sizeof(int64_t));
    out->target_shares = calloc(cells, sizeof(double));
    out->delivered_shares = calloc(cells, sizeof(double));
    series_scan c = {out,
                     from,
                     mixture,
                     calloc((size_t)sources + 1, sizeof(double)),
                     calloc((size_t)sources + 1, sizeof(double)),
                     calloc(count, sizeof(int64_t))};
    if (!out->buckets || !out->source_tokens || !out->target_shares || !out->delivered_shares ||
        !c.target || !c.delivered || !c.bucket_steps) {
        free(c.target), free(c.delivered), free(c.bucket_steps);
        ordo_series_result_free(out);
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    }
    out->count = count;
    out->width = width;
    out->sources = sources;
    for (size_t i = 0; i < count; i++) {
        out->buckets[i].from = from + (int64_t)i * width;
        out->buckets[i].to =
            out->buckets[i].from + width - 1 < to ? out->buckets[i].from + width - 1 : to;
    }
    status = ordo_steps_scan(ledger, info.id, from, to, add, &c, err);
    if (status == ORDO_OK)
        finish_shares(&c);
    free(c.target), free(c.delivered), free(c.bucket_steps);
    if (status != ORDO_OK)
        ordo_series_result_free(out);
    return status;
}

/* Frees what ordo_run_series returned. */
void ordo_series_result_free(ordo_series_result *result)
{
    if (!result)
        return;
    free(result->buckets);
    free(result->source_tokens);
    free(result->target_shares);
    free(result->delivered_shares);
    memset(result, 0, sizeof *result);
}
