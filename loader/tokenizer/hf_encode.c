/* Encoding with a tokenizer.json, in the library's order (hf.h): repair
 * UTF-8, split around added tokens matched on the raw text, normalize
 * each stretch, split around added tokens matched on normalized text,
 * pre-tokenize, and run the model on each piece. */
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"

typedef struct encoding {
    const ordo__hf *hf;
    ordo__tokens *out;
    ordo__hf_scratch *scratch;
    const char *text;    /* the whole (repaired) text */
    const char *stretch; /* where the current stretch's normalized text begins */
    int first;           /* the current raw stretch begins the text */
    size_t stop;         /* nothing more is taken once out holds this many ids */
    int skipped;         /* something was left out for it */
} encoding;

/* Once out holds e->stop ids, every later piece, token and stretch is
 * left out (the ids so far are the whole text's first ones). */
static int stopped(encoding *e)
{
    if (e->out->count < e->stop)
        return 0;
    e->skipped = 1;
    return 1;
}

static ordo_status piece(void *context, const char *text, size_t len, ordo_error *err)
{
    encoding *e = context;
    if (stopped(e))
        return ORDO_OK;
    return ordo__hf_bpe_piece(e->hf->bpe, text, len, e->scratch, e->out, err);
}

static ordo_status normalized_stretch(void *context, const char *text, size_t len, uint32_t id,
                                      ordo_error *err)
{
    encoding *e = context;
    if (stopped(e))
        return ORDO_OK;
    if (id != ORDO__HF_NONE)
        return ordo__tokens_push(e->out, id, err);
    /* Metaspace's prepend_scheme "first" marks only what begins the text */
    int first = e->first && text == e->stretch;
    return ordo__hf_pretokenize_segment(e->hf->pretokenizer, text, len, first, piece, e, err);
}

static ordo_status raw_stretch(void *context, const char *text, size_t len, uint32_t id,
                               ordo_error *err)
{
    encoding *e = context;
    if (stopped(e))
        return ORDO_OK;
    if (id != ORDO__HF_NONE)
        return ordo__tokens_push(e->out, id, err);
    const ordo__hf *hf = e->hf;
    e->first = text == e->text;
    e->stretch = text;
    if (!hf->normalizer)
        return ordo__hf_added_split(&hf->added, hf->added.normalized, text, len, normalized_stretch,
                                    e, err);
    ordo__text *normal = &e->scratch->normal;
    ordo_status s = ordo__hf_normalize(hf->normalizer, text, len, normal, err);
    if (s != ORDO_OK || normal->len == 0)
        return s;
    /* nothing below normalizes again, so the text stays as it is */
    e->stretch = normal->data;
    return ordo__hf_added_split(&hf->added, hf->added.normalized, normal->data, normal->len,
                                normalized_stretch, e, err);
}

/* Encodes ordinary text; see hf.h. */
ordo_status ordo__hf_encode(const ordo__hf *hf, const char *text, size_t len, ordo__tokens *out,
                            ordo_error *err)
{
    return ordo__hf_encode_upto(hf, text, len, SIZE_MAX, out, NULL, err);
}

/* Encodes a prefix of ordinary text; see hf.h. */
ordo_status ordo__hf_encode_upto(const ordo__hf *hf, const char *text, size_t len, size_t stop,
                                 ordo__tokens *out, int *complete, ordo_error *err)
{
    char *repaired = NULL;
    size_t repaired_len = 0;
    ordo_status s = ordo__utf8_repair(text, len, &repaired, &repaired_len, err);
    if (s != ORDO_OK)
        return s;
    if (repaired) {
        text = repaired;
        len = repaired_len;
    }
    ordo__hf_scratch spare;
    encoding e = {hf, out, ordo__hf_scratch_take(&spare), text, text, 1, stop, 0};
    s = ordo__hf_added_split(&hf->added, hf->added.raw, text, len, raw_stretch, &e, err);
    ordo__hf_scratch_return(e.scratch, &spare);
    free(repaired);
    if (complete)
        *complete = !e.skipped;
    return s;
}

/* The id of a token's content; see hf.h. */
int ordo__hf_token_id(const ordo__hf *hf, const char *content, uint32_t *id)
{
    size_t n = strlen(content);
    for (size_t k = 0; k < hf->added.count; k++)
        if (hf->added.tokens[k].len == n && memcmp(hf->added.tokens[k].content, content, n) == 0) {
            *id = hf->added.tokens[k].id;
            return 1;
        }
    uint32_t found = ordo__hf_map_get(&hf->bpe->vocab, content, n);
    if (found == ORDO__HF_NONE)
        return 0;
    *id = found;
    return 1;
}

/* One more than the largest id; see hf.h. */
uint32_t ordo__hf_vocab_size(const ordo__hf *hf)
{
    return hf->size;
}
