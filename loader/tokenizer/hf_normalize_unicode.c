/* NFC, NFKC, NFD, NFKD as Hugging Face tokenizers computes them (its
 * `unicode-normalization-alignments` dependency, Unicode 9.0 tables), and
 * the character mappings of the other normalizers.
 *
 * Text is copied through untouched while each character is stable in the
 * form (ASCII, and every character that no neighbour can change: combining
 * class 0, unchanged by the form, never the second of a composition). At
 * the first other character the text is normalized from the stable
 * character just before it (which may compose with what follows) to the
 * next stable character: decomposition, canonical ordering, composition. */
#include <stdlib.h>
#include <string.h>

#include "hf_normalize.h"
#include "hf_normalize_tables.h"

#define HANGUL_S 0xAC00u
#define HANGUL_L 0x1100u
#define HANGUL_V 0x1161u
#define HANGUL_T 0x11A7u
#define HANGUL_L_COUNT 19u
#define HANGUL_V_COUNT 21u
#define HANGUL_T_COUNT 28u
#define HANGUL_COUNT (HANGUL_L_COUNT * HANGUL_V_COUNT * HANGUL_T_COUNT)

/* Runs of combining marks this long or longer are ordered by counting. */
#define SHORT_RUN 32

static const ordo_nf_record *record_of(uint32_t c)
{
    uint32_t block = ordo_nf_stage1[c >> ORDO_NF_SHIFT];
    return &ordo_nf_records[ordo_nf_stage2[(block << ORDO_NF_SHIFT) |
                                           (c & ((1u << ORDO_NF_SHIFT) - 1))]];
}

/* Decodes one code point of valid UTF-8; see hf_normalize.h. */
size_t ordo__hf_utf8_decode(const unsigned char *p, uint32_t *c)
{
    if (p[0] < 0x80) {
        *c = p[0];
        return 1;
    }
    if (p[0] < 0xE0) {
        *c = ((uint32_t)(p[0] & 0x1F) << 6) | (p[1] & 0x3F);
        return 2;
    }
    if (p[0] < 0xF0) {
        *c = ((uint32_t)(p[0] & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
        return 3;
    }
    *c = ((uint32_t)(p[0] & 0x07) << 18) | ((uint32_t)(p[1] & 0x3F) << 12) |
         ((uint32_t)(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
    return 4;
}

/* Encodes one code point; see hf_normalize.h. */
size_t ordo__hf_utf8_encode(uint32_t c, unsigned char *out)
{
    if (c < 0x80) {
        out[0] = (unsigned char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (unsigned char)(0xC0 | (c >> 6));
        out[1] = (unsigned char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (c >> 12));
        out[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (c >> 18));
    out[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (c & 0x3F));
    return 4;
}

/* The code points of one segment being normalized, with their classes. */
typedef struct segment {
    uint32_t *cp;
    uint8_t *ccc;
    size_t n, cap;
} segment;

static ordo_status push(segment *s, uint32_t c, ordo_error *err)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        uint32_t *cp = realloc(s->cp, cap * sizeof *cp);
        if (cp)
            s->cp = cp;
        uint8_t *ccc = cp ? realloc(s->ccc, cap) : NULL;
        if (!ccc)
            return ordo__error(err, ORDO_NOMEM, "out of memory normalizing text");
        s->ccc = ccc;
        s->cap = cap;
    }
    s->cp[s->n] = c;
    s->ccc[s->n] = record_of(c)->ccc;
    s->n++;
    return ORDO_OK;
}

/* Appends the full decomposition of c (canonical, or compatibility when
 * `compat`). */
static ordo_status push_decomposed(segment *s, uint32_t c, int compat, ordo_error *err)
{
    if (c - HANGUL_S < HANGUL_COUNT) {
        uint32_t i = c - HANGUL_S, t = i % HANGUL_T_COUNT;
        ordo_status st = push(s, HANGUL_L + i / (HANGUL_V_COUNT * HANGUL_T_COUNT), err);
        if (st == ORDO_OK)
            st = push(s, HANGUL_V + (i % (HANGUL_V_COUNT * HANGUL_T_COUNT)) / HANGUL_T_COUNT, err);
        if (st == ORDO_OK && t)
            st = push(s, HANGUL_T + t, err);
        return st;
    }
    const ordo_nf_record *r = record_of(c);
    size_t len = compat ? r->compat_len : r->canon_len;
    if (!len)
        return push(s, c, err);
    const uint32_t *seq = ordo_nf_sequences + (compat ? r->compat : r->canon);
    for (size_t i = 0; i < len; i++) {
        ordo_status st = push(s, seq[i], err);
        if (st != ORDO_OK)
            return st;
    }
    return ORDO_OK;
}

/* Stable sort of a long run of marks by class (counting sort). */
static ordo_status sort_long_run(segment *s, size_t from, size_t to, ordo_error *err)
{
    size_t n = to - from, start[257] = {0};
    uint32_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return ordo__error(err, ORDO_NOMEM, "out of memory normalizing text");
    for (size_t i = from; i < to; i++)
        start[s->ccc[i] + 1]++;
    for (size_t k = 1; k < 257; k++)
        start[k] += start[k - 1];
    for (size_t i = from; i < to; i++)
        tmp[start[s->ccc[i]]++] = s->cp[i];
    for (size_t i = 0; i < n; i++) {
        s->cp[from + i] = tmp[i];
        s->ccc[from + i] = record_of(tmp[i])->ccc;
    }
    free(tmp);
    return ORDO_OK;
}

/* Canonical ordering: each run of non-starters stably sorted by class. */
static ordo_status reorder(segment *s, ordo_error *err)
{
    for (size_t i = 0; i < s->n;) {
        if (!s->ccc[i]) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < s->n && s->ccc[j])
            j++;
        if (j - i >= SHORT_RUN) {
            ordo_status st = sort_long_run(s, i, j, err);
            if (st != ORDO_OK)
                return st;
        } else {
            for (size_t k = i + 1; k < j; k++) { /* insertion sort: stable */
                uint32_t c = s->cp[k];
                uint8_t cc = s->ccc[k];
                size_t m = k;
                for (; m > i && s->ccc[m - 1] > cc; m--) {
                    s->cp[m] = s->cp[m - 1];
                    s->ccc[m] = s->ccc[m - 1];
                }
                s->cp[m] = c;
                s->ccc[m] = cc;
            }
        }
        i = j;
    }
    return ORDO_OK;
}

/* The primary composite of a and b, or 0. */
static uint32_t compose_pair(uint32_t a, uint32_t b)
{
    if (a - HANGUL_L < HANGUL_L_COUNT && b - HANGUL_V < HANGUL_V_COUNT)
        return HANGUL_S + ((a - HANGUL_L) * HANGUL_V_COUNT + (b - HANGUL_V)) * HANGUL_T_COUNT;
    if (a - HANGUL_S < HANGUL_COUNT && (a - HANGUL_S) % HANGUL_T_COUNT == 0 && b > HANGUL_T &&
        b - HANGUL_T < HANGUL_T_COUNT)
        return a + (b - HANGUL_T);
    size_t lo = 0, hi = sizeof ordo_nf_pairs / sizeof ordo_nf_pairs[0];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const uint32_t *p = ordo_nf_pairs[mid];
        if (p[0] < a || (p[0] == a && p[1] < b))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < sizeof ordo_nf_pairs / sizeof ordo_nf_pairs[0] && ordo_nf_pairs[lo][0] == a &&
        ordo_nf_pairs[lo][1] == b)
        return ordo_nf_pairs[lo][2];
    return 0;
}

/* Canonical composition in place: each character composes with the last
 * starter unless a character between them has a class 0 or >= its own. */
static void compose(segment *s)
{
    if (!s->n)
        return;
    size_t starter = 0, out = 1;
    int has_starter = s->ccc[0] == 0, last = s->ccc[0];
    for (size_t i = 1; i < s->n; i++) {
        uint32_t c = s->cp[i], composite;
        int cc = s->ccc[i];
        if (has_starter && (last == 0 || last < cc) &&
            (composite = compose_pair(s->cp[starter], c))) {
            s->cp[starter] = composite;
            continue;
        }
        if (cc == 0) {
            starter = out;
            has_starter = 1;
        }
        last = cc;
        s->cp[out] = c;
        s->ccc[out] = (uint8_t)cc;
        out++;
    }
    s->n = out;
}

static ordo_status emit(const segment *s, ordo__text *out, ordo_error *err)
{
    unsigned char buf[512];
    size_t used = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (used + 4 > sizeof buf) {
            ordo_status st = ordo__text_append(out, buf, used, err);
            if (st != ORDO_OK)
                return st;
            used = 0;
        }
        used += ordo__hf_utf8_encode(s->cp[i], buf + used);
    }
    return ordo__text_append(out, buf, used, err);
}

/* Normalizes from `start` (a stable character, or the unstable one at
 * `unstable`) up to the next stable character after `unstable`; *end is
 * where the segment stopped. */
static ordo_status normalize_segment(ordo__nf_form form, const unsigned char *s, size_t len,
                                     size_t start, size_t unstable, segment *seg, size_t *end,
                                     ordo__text *out, ordo_error *err)
{
    int compat = form == ORDO__NFKC || form == ORDO__NFKD;
    uint8_t flag = (uint8_t)(1u << form);
    size_t i = start;
    ordo_status st = ORDO_OK;
    seg->n = 0;
    while (st == ORDO_OK && i < len) {
        uint32_t c;
        size_t n = ordo__hf_utf8_decode(s + i, &c);
        if (i > unstable && (c < 0x80 || (record_of(c)->flags & flag)))
            break;
        st = push_decomposed(seg, c, compat, err);
        i += n;
    }
    if (st == ORDO_OK)
        st = reorder(seg, err);
    if (st == ORDO_OK && (form == ORDO__NFC || form == ORDO__NFKC))
        compose(seg);
    if (st == ORDO_OK)
        st = emit(seg, out, err);
    *end = i;
    return st;
}

/* Normalizes valid UTF-8; see hf_normalize.h. */
ordo_status ordo__hf_unicode_normalize(ordo__nf_form form, const char *text, size_t len,
                                       ordo__text *out, ordo_error *err)
{
    const unsigned char *s = (const unsigned char *)text;
    uint8_t flag = (uint8_t)(1u << form);
    segment seg = {0};
    size_t run = 0, i = 0;
    ordo_status st = ORDO_OK;
    while (st == ORDO_OK && i < len) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t c;
        size_t n = ordo__hf_utf8_decode(s + i, &c);
        if (record_of(c)->flags & flag) {
            i += n;
            continue;
        }
        size_t start = i; /* back to the stable character before, if any */
        if (i > run)
            for (start = i - 1; (s[start] & 0xC0) == 0x80; start--)
                ;
        st = ordo__text_append(out, s + run, start - run, err);
        if (st == ORDO_OK)
            st = normalize_segment(form, s, len, start, i, &seg, &i, out, err);
        run = i;
    }
    if (st == ORDO_OK)
        st = ordo__text_append(out, s + run, len - run, err);
    free(seg.cp);
    free(seg.ccc);
    return st;
}

/* Writes the full lowercase mapping of c (a non-ASCII code point) at buf;
 * returns its length. */
static size_t lowercase_of(uint32_t c, unsigned char *buf)
{
    const size_t count = sizeof ordo_lowercase / sizeof ordo_lowercase[0];
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ordo_lowercase[mid][0] < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == count || ordo_lowercase[lo][0] != c)
        return ordo__hf_utf8_encode(c, buf);
    size_t used = ordo__hf_utf8_encode(ordo_lowercase[lo][2], buf);
    if (ordo_lowercase[lo][1] > 1)
        used += ordo__hf_utf8_encode(ordo_lowercase[lo][3], buf + used);
    return used;
}

/* Appends the lowercase of valid UTF-8 (through a local buffer); see
 * hf_normalize.h. */
ordo_status ordo__hf_lowercase(const char *text, size_t len, ordo__text *out, ordo_error *err)
{
    const unsigned char *s = (const unsigned char *)text;
    unsigned char buf[4096];
    size_t used = 0;
    for (size_t i = 0; i < len;) {
        if (used + 8 > sizeof buf) {
            ordo_status st = ordo__text_append(out, buf, used, err);
            if (st != ORDO_OK)
                return st;
            used = 0;
        }
        if (s[i] < 0x80) {
            buf[used++] = (unsigned char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
            i++;
            continue;
        }
        uint32_t c;
        i += ordo__hf_utf8_decode(s + i, &c);
        used += lowercase_of(c, buf + used);
    }
    return ordo__text_append(out, buf, used, err);
}

/* White_Space; see hf_normalize.h. */
int ordo__hf_white_space(uint32_t c)
{
    for (size_t i = 0; i < sizeof ordo_white_space / sizeof ordo_white_space[0]; i++)
        if (ordo_white_space[i] == c)
            return 1;
    return 0;
}
