/* A run's mixture: the target share of each of its recipe's sources at a
 * step (the recipe's weights or schedule, as the slot plan uses them)
 * against the share the step delivered (its per-source token counts), and
 * a summary over the steps added. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/sql.h"
#include "recipe/recipe.h"

struct ordo_mixture {
    ordo_recipe *recipe; /* the mixture alone (ordo__mixture_read); NULL: no targets */
    char why[ORDO_ERROR_MESSAGE_SIZE];
    int sources, global_batch;
    double *target, *delivered; /* scratch, sources each */
    int64_t steps, measured;
    double *target_all, *target_measured; /* sums over the steps added */
    int64_t *tokens;                      /* the measured steps' tokens per source */
    double *worst;                        /* signed deviation in samples */
    int64_t *worst_step;
};

/* Reads the mixture of a stored recipe; see ordo.h. */
ordo_status ordo_mixture_open(ordo_ledger *ledger, const char *recipe_id, ordo_mixture **out,
                              ordo_error *err)
{
    *out = NULL;
    char *canonical = NULL;
    ordo_status status = ordo_recipe_get(ledger, recipe_id, &canonical, err);
    if (status != ORDO_OK)
        return status;
    ordo_mixture *m = calloc(1, sizeof *m);
    if (!m) {
        free(canonical);
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    }
    ordo_error why;
    if (ordo__mixture_read(canonical, strlen(canonical), &m->recipe, &why) == ORDO_OK) {
        m->sources = (int)m->recipe->source_count;
        m->global_batch = m->recipe->global_batch;
    } else if (why.status == ORDO_NOMEM) {
        status = ordo__error(err, ORDO_NOMEM, "out of memory");
    } else {
        ordo__copy(m->why, sizeof m->why, why.message);
    }
    free(canonical);
    size_t n = (size_t)(m->sources ? m->sources : 1);
    m->target = calloc(n, sizeof(double)), m->delivered = calloc(n, sizeof(double));
    m->target_all = calloc(n, sizeof(double)), m->target_measured = calloc(n, sizeof(double));
    m->tokens = calloc(n, sizeof(int64_t)), m->worst = calloc(n, sizeof(double));
    m->worst_step = calloc(n, sizeof(int64_t));
    if (status == ORDO_OK && (!m->target || !m->delivered || !m->target_all ||
                              !m->target_measured || !m->tokens || !m->worst || !m->worst_step))
        status = ordo__error(err, ORDO_NOMEM, "out of memory");
    if (status != ORDO_OK) {
        ordo_mixture_free(m);
        return status;
    }
    *out = m;
    return ordo__ok(err);
}

/* Frees a mixture (NULL is fine). */
void ordo_mixture_free(ordo_mixture *m)
{
    if (!m)
        return;
    ordo_recipe_free(m->recipe);
    free(m->target);
    free(m->delivered);
    free(m->target_all);
    free(m->target_measured);
    free(m->tokens);
    free(m->worst);
    free(m->worst_step);
    free(m);
}

/* How many sources have targets: 0 when the recipe's mixture is unknown. */
int ordo_mixture_sources(const ordo_mixture *m)
{
    return m->sources;
}

/* The name of source `index` (owned by the mixture), NULL when out of range. */
const char *ordo_mixture_source_name(const ordo_mixture *m, int index)
{
    return m->recipe ? ordo_recipe_source_name(m->recipe, index) : NULL;
}

/* Why the mixture has no targets ("" when it has). */
const char *ordo_mixture_why(const ordo_mixture *m)
{
    return m->why;
}

/* The global batch B of the recipe, 0 when it has none. */
int ordo_mixture_global_batch(const ordo_mixture *m)
{
    return m->global_batch;
}

/* The shares of a step's own per-source tokens; 0 when it has none. */
static int own_shares(const ordo_step *s, double *shares)
{
    int64_t total = 0;
    for (int i = 0; s->source_tokens && i < s->source_count; i++) {
        if (s->source_tokens[i] < 0)
            return 0;
        total += s->source_tokens[i];
    }
    if (!s->source_tokens || s->source_count < 1 || total <= 0)
        return 0;
    for (int i = 0; i < s->source_count; i++)
        shares[i] = (double)s->source_tokens[i] / (double)total;
    return 1;
}

/* A step's target and delivered shares; see ordo.h. */
int ordo_mixture_step(const ordo_mixture *m, const ordo_step *step, double *target,
                      double *delivered)
{
    if (!m->sources || step->step < 1 || step->step > ORDO_STEP_MAX)
        return 0;
    ordo_recipe_step_weights(m->recipe, step->step, target, NULL);
    int known = step->source_count == m->sources && own_shares(step, delivered);
    return ORDO_MIXTURE_TARGET | (known ? ORDO_MIXTURE_DELIVERED : 0);
}

/* Adds a step to the summary; see ordo.h. */
void ordo_mixture_add(ordo_mixture *m, const ordo_step *step)
{
    int known = ordo_mixture_step(m, step, m->target, m->delivered);
    if (!(known & ORDO_MIXTURE_TARGET))
        return;
    m->steps++;
    int measured = (known & ORDO_MIXTURE_DELIVERED) != 0;
    m->measured += measured;
    for (int i = 0; i < m->sources; i++) {
        m->target_all[i] += m->target[i];
        if (!measured)
            continue;
        m->target_measured[i] += m->target[i];
        m->tokens[i] += step->source_tokens[i];
        double deviation = (m->delivered[i] - m->target[i]) * m->global_batch;
        if (m->measured == 1 || fabs(deviation) > fabs(m->worst[i])) {
            m->worst[i] = deviation;
            m->worst_step[i] = step->step;
        }
    }
}

static int add_scanned(const ordo_step *step, void *context)
{
    ordo_mixture_add(context, step);
    return 0;
}

/* Adds a run's recorded steps from..to to the summary; see ordo.h. */
ordo_status ordo_mixture_scan(ordo_ledger *ledger, ordo_mixture *m, int64_t run_id, int64_t from,
                              int64_t to, ordo_error *err)
{
    if (!m->sources)
        return ordo__ok(err);
    return ordo_steps_scan(ledger, run_id, from, to, add_scanned, m, err);
}

/* The summary of source `index` over the steps added; see ordo.h. */
ordo_status ordo_mixture_summary(const ordo_mixture *m, int index, ordo_mixture_source *out,
                                 ordo_error *err)
{
    if (index < 0 || index >= m->sources)
        return ordo__error(err, ORDO_INVALID, "source %d does not exist (%d sources)", index,
                           m->sources);
    int64_t total = 0;
    for (int i = 0; i < m->sources; i++)
        total += m->tokens[i];
    memset(out, 0, sizeof *out);
    out->name = ordo_mixture_source_name(m, index);
    out->steps = m->steps;
    out->measured_steps = m->measured;
    out->target_mean = m->measured ? m->target_measured[index] / (double)m->measured
                       : m->steps  ? m->target_all[index] / (double)m->steps
                                   : NAN;
    out->delivered = m->measured && total > 0 ? (double)m->tokens[index] / (double)total : NAN;
    out->worst_deviation = m->measured && m->global_batch ? m->worst[index] : NAN;
    out->worst_step = m->measured ? m->worst_step[index] : 0;
    return ordo__ok(err);
}
