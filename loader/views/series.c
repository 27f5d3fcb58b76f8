/* A run's steps downsampled for display: loss and token shares by bucket. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/sql.h"

typedef struct {
    ordo_series_result *r;
    int64_t from;
} series_scan;

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
    for (int k = 0; k < s->source_count && k < r->sources; k++)
        r->source_tokens[i * (size_t)r->sources + (size_t)k] += s->source_tokens[k];
    return 0;
}

/* Downsamples a run's steps; see ordo.h. */
ordo_status ordo_run_series(ordo_ledger *ledger, int64_t run_id, int64_t from, int64_t to,
                            int buckets, int sources, ordo_series_result *out, ordo_error *err)
{
    memset(out, 0, sizeof *out);
    ordo_run_info info;
    ordo_status status = ordo__run_get_id(ledger, run_id, &info, err);
    if (status != ORDO_OK)
        return status;
    if (buckets < 1 || buckets > 100000 || sources < 0 || sources > 4096)
        return ordo__error(err, ORDO_INVALID, "buckets (%d) must be 1 to 100000", buckets);
    from = from > 0 ? from : 1;
    to = to > 0 ? to : (info.last_step > 0 ? info.last_step : 1);
    if (to < from)
        to = from;
    int64_t width = (to - from + buckets) / buckets;
    size_t count = (size_t)((to - from + width) / width);
    out->buckets = calloc(count, sizeof *out->buckets);
    out->source_tokens = calloc(count * (size_t)(sources ? sources : 1), sizeof(int64_t));
    if (!out->buckets || !out->source_tokens) {
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
    series_scan c = {out, from};
    status = ordo_steps_scan(ledger, info.id, from, to, add, &c, err);
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
    memset(result, 0, sizeof *result);
}
