/* Matching added tokens in text as the library does: a byte trie, the
 * leftmost match first and the longest one there (its LeftmostLongest
 * automaton), then lstrip/rstrip widen a match over White_Space. */
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"
#include "unicode_table.h"

typedef struct trie_node {
    uint32_t child, sibling, token;
    unsigned char byte;
} trie_node;

struct ordo__hf_trie {
    uint32_t root[256]; /* node of each first byte, ORDO__HF_NONE */
    trie_node *nodes;
    size_t count, cap;
};

/* An empty trie; NULL when out of memory. */
ordo__hf_trie *ordo__hf_trie_new(void)
{
    ordo__hf_trie *t = calloc(1, sizeof *t);
    if (t)
        memset(t->root, 0xff, sizeof t->root);
    return t;
}

/* Frees a trie (NULL is fine). */
void ordo__hf_trie_free(ordo__hf_trie *t)
{
    if (t)
        free(t->nodes);
    free(t);
}

static uint32_t new_node(ordo__hf_trie *t, unsigned char byte, uint32_t sibling)
{
    if (t->count == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        trie_node *grown = realloc(t->nodes, cap * sizeof *grown);
        if (!grown)
            return ORDO__HF_NONE;
        t->nodes = grown;
        t->cap = cap;
    }
    t->nodes[t->count] = (trie_node){ORDO__HF_NONE, sibling, ORDO__HF_NONE, byte};
    return (uint32_t)t->count++;
}

/* Adds a non-empty pattern for token index `token`: ORDO__HF_NONE when
 * added, the index of the token already there, or token itself when out
 * of memory (*nomem set). */
uint32_t ordo__hf_trie_add(ordo__hf_trie *t, const char *pattern, size_t len, uint32_t token,
                           int *nomem)
{
    const unsigned char *p = (const unsigned char *)pattern;
    *nomem = 0;
    uint32_t node = t->root[p[0]];
    if (node == ORDO__HF_NONE &&
        (node = t->root[p[0]] = new_node(t, p[0], ORDO__HF_NONE)) == ORDO__HF_NONE) {
        *nomem = 1;
        return token;
    }
    for (size_t i = 1; i < len; i++) {
        uint32_t c = t->nodes[node].child;
        while (c != ORDO__HF_NONE && t->nodes[c].byte != p[i])
            c = t->nodes[c].sibling;
        if (c == ORDO__HF_NONE) {
            c = new_node(t, p[i], t->nodes[node].child);
            if (c == ORDO__HF_NONE) {
                *nomem = 1;
                return token;
            }
            t->nodes[node].child = c;
        }
        node = c;
    }
    if (t->nodes[node].token != ORDO__HF_NONE)
        return t->nodes[node].token;
    t->nodes[node].token = token;
    return ORDO__HF_NONE;
}

/* The longest pattern starting at text[i]: its end in *end, its token
 * index (ORDO__HF_NONE when none). */
static uint32_t longest_at(const ordo__hf_trie *t, const unsigned char *text, size_t len, size_t i,
                           size_t *end)
{
    uint32_t node = t->root[text[i]], found = ORDO__HF_NONE;
    for (size_t k = i + 1;; k++) {
        if (t->nodes[node].token != ORDO__HF_NONE) {
            found = t->nodes[node].token;
            *end = k;
        }
        if (k >= len)
            break;
        uint32_t c = t->nodes[node].child;
        while (c != ORDO__HF_NONE && t->nodes[c].byte != text[k])
            c = t->nodes[c].sibling;
        if (c == ORDO__HF_NONE)
            break;
        node = c;
    }
    return found;
}

static int white_space_at(const ordo__unicode_table *u, const unsigned char *s, size_t *clen)
{
    uint32_t cp;
    *clen = ordo__hf_utf8(s, &cp);
    return (ordo__unicode_class(u, cp) & ORDO__U_WS) != 0;
}

/* Where the White_Space run ending at `end` starts (regex \s*$). */
static size_t trailing_space_start(const ordo__unicode_table *u, const unsigned char *s, size_t end)
{
    while (end > 0) {
        size_t start = end - 1, clen;
        while (start > 0 && (s[start] & 0xC0) == 0x80)
            start--;
        if (!white_space_at(u, s + start, &clen))
            break;
        end = start;
    }
    return end;
}

/* Where the White_Space run starting at `start` ends (regex ^\s*). */
static size_t leading_space_end(const ordo__unicode_table *u, const unsigned char *s, size_t len,
                                size_t start)
{
    size_t clen;
    while (start < len && white_space_at(u, s + start, &clen))
        start += clen;
    return start;
}

/* Splits around added tokens; see hf_model.h. */
ordo_status ordo__hf_added_split(const ordo__hf_added *a, const ordo__hf_trie *t, const char *text,
                                 size_t len, ordo__hf_split_fn fn, void *context, ordo_error *err)
{
    if (!t)
        return len ? fn(context, text, len, ORDO__HF_NONE, err) : ORDO_OK;
    const unsigned char *s = (const unsigned char *)text;
    const ordo__unicode_table *u = NULL;
    size_t from = 0; /* the library's start_offset */
    ordo_status status = ORDO_OK;
    for (size_t i = 0; i < len && status == ORDO_OK;) {
        size_t end = 0;
        uint32_t k =
            t->root[s[i]] == ORDO__HF_NONE ? ORDO__HF_NONE : longest_at(t, s, len, i, &end);
        if (k == ORDO__HF_NONE) {
            i++;
            continue;
        }
        const ordo__hf_added_token *token = &a->tokens[k];
        size_t start = i, stop = end;
        if ((token->lstrip || token->rstrip) && !u && !(u = ordo__unicode()))
            return ordo__error(err, ORDO_NOMEM, "out of memory");
        if (token->lstrip) {
            size_t wide = trailing_space_start(u, s, start);
            start = wide > from ? wide : from;
        }
        if (token->rstrip)
            stop = leading_space_end(u, s, len, stop);
        if (from < start)
            status = fn(context, text + from, start - from, ORDO__HF_NONE, err);
        if (status == ORDO_OK)
            status = fn(context, text + start, stop - start, token->id, err);
        from = stop;
        i = end;
    }
    if (status == ORDO_OK && from < len)
        status = fn(context, text + from, len - from, ORDO__HF_NONE, err);
    return status;
}
