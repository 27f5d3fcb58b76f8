/* Splitting a piece under a SplitDelimiterBehavior (the library's
 * NormalizedString::split), and the Split pre-tokenizer. */
#include <string.h>

#include "hf_pretok.h"

/* The behaviors as forward folds over the spans, holding at most one
 * span back. */
typedef struct emitter {
    ordo__hf_run *r;
    size_t next;
    const char *base;
    int at_start;
    ordo__hf_behavior behavior;
    int invert;
    int pending, pending_match, previous_match;
    size_t start, end;
} emitter;

static ordo_status emit(emitter *e, size_t start, size_t end, ordo_error *err)
{
    return ordo__hf_run_from(e->r, e->next, e->base + start, end - start, e->at_start && start == 0,
                             err);
}

static ordo_status flush(emitter *e, ordo_error *err)
{
    if (!e->pending)
        return ORDO_OK;
    e->pending = 0;
    return emit(e, e->start, e->end, err);
}

static ordo_status hold(emitter *e, size_t start, size_t end, int match, ordo_error *err)
{
    ordo_status status = flush(e, err);
    e->pending = 1, e->start = start, e->end = end, e->pending_match = match;
    return status;
}

static ordo_status on_span(void *context, size_t start, size_t end, int match, ordo_error *err)
{
    emitter *e = context;
    match = match != e->invert;
    ordo_status status = ORDO_OK;
    switch (e->behavior) {
    case ORDO__HF_ISOLATED: return emit(e, start, end, err);
    case ORDO__HF_REMOVED: return match ? ORDO_OK : emit(e, start, end, err);
    case ORDO__HF_CONTIGUOUS: /* runs of spans with one flag become one */
        if (e->pending && match == e->previous_match)
            e->end = end;
        else
            status = hold(e, start, end, match, err);
        break;
    case ORDO__HF_MERGED_WITH_PREVIOUS: /* a match after a non-match joins it */
        if (e->pending && match && !e->previous_match)
            e->end = end;
        else
            status = hold(e, start, end, match, err);
        break;
    case ORDO__HF_MERGED_WITH_NEXT: /* a match before a non-match joins it */
        if (!match && e->pending && e->pending_match) {
            e->pending = 0;
            status = emit(e, e->start, end, err);
        } else if (match) {
            status = hold(e, start, end, match, err);
        } else {
            status = flush(e, err);
            if (status == ORDO_OK)
                status = emit(e, start, end, err);
        }
        break;
    }
    e->previous_match = match;
    return status;
}

/* See hf_pretok.h. */
ordo_status ordo__hf_split_piece(ordo__hf_run *r, size_t step, const char *piece, size_t len,
                                 int at_start, ordo__hf_spans_fn spans, ordo__hf_behavior behavior,
                                 int invert, ordo_error *err)
{
    emitter e = {r, step + 1, piece, at_start, behavior, invert, 0, 0, 0, 0, 0};
    ordo_status status = spans(&r->p->steps[step], piece, len, on_span, &e, err);
    return status == ORDO_OK ? flush(&e, err) : status;
}

/* The Split pre-tokenizer's piece; see hf_pretok.h. */
ordo_status ordo__hf_split_step(ordo__hf_run *r, size_t step, const char *piece, size_t len,
                                int at_start, ordo_error *err)
{
    const ordo__hf_step *s = &r->p->steps[step];
    if (s->scan && s->behavior == ORDO__HF_ISOLATED) { /* every span a match: pass each on */
        const ordo__unicode_table *u = ordo__unicode();
        if (!u)
            return ordo__error(err, ORDO_NOMEM, "out of memory building the Unicode table");
        ordo_status status = ORDO_OK;
        for (size_t i = 0; status == ORDO_OK && i < len;) {
            size_t end = s->scan(u, (const unsigned char *)piece, len, i);
            status = ordo__hf_run_from(r, step + 1, piece + i, end - i, at_start && i == 0, err);
            i = end;
        }
        return status;
    }
    return ordo__hf_split_piece(r, step, piece, len, at_start, ordo__hf_regex_spans, s->behavior,
                                s->invert, err);
}

/* See hf_pretok.h. */
ordo_status ordo__hf_behavior_parse(const json_t *value, const char *where, ordo__hf_behavior *out,
                                    ordo_error *err)
{
    static const char *const names[] = {"Removed", "Isolated", "MergedWithPrevious",
                                        "MergedWithNext", "Contiguous"};
    const char *name = json_string_value(value);
    for (int k = 0; name && k < 5; k++)
        if (strcmp(name, names[k]) == 0) {
            *out = (ordo__hf_behavior)k;
            return ORDO_OK;
        }
    return ordo__error(err, ORDO_INVALID,
                       "%s: %s (Removed, Isolated, MergedWithPrevious, MergedWithNext or "
                       "Contiguous)",
                       where, value ? "unknown behavior" : "missing");
}

/* See hf_pretok.h. */
ordo_status ordo__hf_split_parse(const json_t *json, const char *where, int scanners,
                                 ordo__hf_step *step, ordo_error *err)
{
    step->kind = ORDO__HF_SPLIT;
    char member[600];
    snprintf(member, sizeof member, "%s.behavior", where);
    ordo_status status =
        ordo__hf_behavior_parse(json_object_get(json, "behavior"), member, &step->behavior, err);
    if (status == ORDO_OK)
        status = ordo__hf_member_bool(json, where, "invert", 1, 0, &step->invert, err);
    if (status != ORDO_OK)
        return status;
    const json_t *pattern = json_object_get(json, "pattern");
    const json_t *string = json_object_get(pattern, "String");
    const json_t *regex = json_object_get(pattern, "Regex");
    snprintf(member, sizeof member, "%s.pattern", where);
    if (!json_is_object(pattern) || json_object_size(pattern) != 1 ||
        !json_is_string(string ? string : regex))
        return ordo__error(err, ORDO_INVALID, "%s: must be {\"String\": s} or {\"Regex\": r}",
                           member);
    const json_t *text = string ? string : regex;
    const char *s = json_string_value(text);
    size_t n = json_string_length(text);
    if (memchr(s, '\0', n))
        return ordo__error(err, ORDO_INVALID, "%s: holds a NUL character", member);
    status = ordo__hf_split_regex_compile(s, n, string != NULL, member, &step->regex, err);
    if (status == ORDO_OK && scanners && regex)
        step->scan = ordo__hf_scanner_for(s, n);
    return status;
}
