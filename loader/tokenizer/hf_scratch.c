/* The working memory of encoding with a tokenizer.json: one per thread,
 * kept across calls (allocating and freeing it for each text of a UDHR
 * paragraph's size cost Gemma 3 about 4% of its time there), trimmed
 * when a call grew it past what ordinary text needs. */
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"
#include "piece_cache.h"
#include "thread_state.h"

/* Symbols, or bytes of text, kept between calls; more is freed. */
#define KEPT_SYMBOLS 4096
#define KEPT_BYTES 65536

static ordo__hf_scratch *thread_scratch(void)
{
    ordo__thread_state *state = ordo__thread_state_get();
    if (!state)
        return NULL;
    if (!state->scratch)
        state->scratch = calloc(1, sizeof *state->scratch);
    return state->scratch;
}

/* Frees working memory; see hf_model.h. */
void ordo__hf_scratch_free(ordo__hf_scratch *s)
{
    free(s->ids), free(s->prev), free(s->next), free(s->ranks), free(s->heap);
    free(s->chars.data), free(s->symbol.data), free(s->normal.data), free(s->batch);
    memset(s, 0, sizeof *s);
}

/* The thread's scratch; see hf_model.h. */
ordo__hf_scratch *ordo__hf_scratch_take(ordo__hf_scratch *spare)
{
    ordo__hf_scratch *s = thread_scratch();
    if (!s) {
        memset(spare, 0, sizeof *spare);
        s = spare;
    }
    ordo__hf_batch_clear(s);
    s->cache = ordo__piece_cache_get();
    return s;
}

/* Ends a use; see hf_model.h. */
void ordo__hf_scratch_return(ordo__hf_scratch *s, ordo__hf_scratch *spare)
{
    if (s == spare || s->cap > KEPT_SYMBOLS || s->chars.cap > KEPT_BYTES ||
        s->symbol.cap > KEPT_BYTES || s->normal.cap > KEPT_BYTES)
        ordo__hf_scratch_free(s);
}

/* Room for n symbols; see hf_model.h. */
ordo_status ordo__hf_scratch_reserve(ordo__hf_scratch *s, size_t n, ordo_error *err)
{
    if (n <= s->cap)
        return ORDO_OK;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < n)
        cap *= 2;
    uint32_t *arrays[4] = {s->ids, s->prev, s->next, s->ranks};
    for (int k = 0; k < 4; k++) {
        uint32_t *grown = realloc(arrays[k], cap * sizeof *grown);
        if (!grown) {
            s->ids = arrays[0], s->prev = arrays[1], s->next = arrays[2], s->ranks = arrays[3];
            return ordo__error(err, ORDO_NOMEM, "out of memory merging a %zu-symbol word", n);
        }
        arrays[k] = grown;
    }
    s->ids = arrays[0], s->prev = arrays[1], s->next = arrays[2], s->ranks = arrays[3];
    s->cap = cap;
    return ORDO_OK;
}
