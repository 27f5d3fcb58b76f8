/* Pre-tokenizers of tokenizer.json (internal): the compiled steps shared
 * by hf_pretok*.c, the regex translation (hf_regex.c), the hand-written
 * scanners (hf_scan.c) and the library's Unicode classes (hf_unicode.c).
 * docs/tokenizer.md, "tokenizer.json pre-tokenizers". */
#ifndef ORDO_HF_PRETOK_H
#define ORDO_HF_PRETOK_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "hf.h"
#include "unicode_table.h"

/* SplitDelimiterBehavior. */
typedef enum {
    ORDO__HF_REMOVED,
    ORDO__HF_ISOLATED,
    ORDO__HF_MERGED_WITH_PREVIOUS,
    ORDO__HF_MERGED_WITH_NEXT,
    ORDO__HF_CONTIGUOUS,
} ordo__hf_behavior;

typedef enum {
    ORDO__HF_SPLIT,
    ORDO__HF_BYTE_LEVEL,
    ORDO__HF_METASPACE,
    ORDO__HF_DIGITS,
    ORDO__HF_PUNCTUATION,
    ORDO__HF_WHITESPACE,
    ORDO__HF_WHITESPACE_SPLIT,
} ordo__hf_step_kind;

/* Where the match starting at byte i of s[0..n) ends (a hand-written
 * scanner of a pattern whose every match is non-empty and that matches at
 * every position). */
typedef size_t (*ordo__hf_scan_fn)(const ordo__unicode_table *u, const unsigned char *s, size_t n,
                                   size_t i);

typedef struct ordo__hf_step {
    ordo__hf_step_kind kind;
    ordo__hf_behavior behavior;
    int invert;
    pcre2_code *regex;               /* Split, ByteLevel with use_regex: the pattern */
    ordo__hf_scan_fn scan;           /* the same by hand, when the pattern is a known one */
    int add_prefix_space, use_regex; /* ByteLevel */
    char replacement[5];             /* Metaspace: UTF-8 of one character */
    size_t replacement_len;
    uint32_t replacement_cp;
    int prepend; /* Metaspace: 0 never, 1 first, 2 always */
    int split;   /* Metaspace */
    int individual_digits;
} ordo__hf_step;

struct ordo__hf_pretokenizer {
    ordo__hf_step *steps;
    size_t count;
    int byte_level_last; /* the last step is ByteLevel: pieces stay bytes */
};

/* As ordo__hf_pretokenizer_parse; scanners 0 runs every regex through
 * PCRE2 even where a scanner exists (to test one against the other). */
ordo_status ordo__hf_pretokenizer_parse_with(const json_t *json, const char *where, int scanners,
                                             ordo__hf_pretokenizer **out, ordo_error *err);

/* Compiles one step (not a Sequence) from its JSON object. */
ordo_status ordo__hf_step_parse(const json_t *json, const char *where, int scanners,
                                ordo__hf_step *step, ordo_error *err);

/* Parses a "behavior" string ("Isolated" ...); `where` names the member. */
ordo_status ordo__hf_behavior_parse(const json_t *value, const char *where, ordo__hf_behavior *out,
                                    ordo_error *err);

/* Receives one span of a split: [start, end) of the piece, and whether the
 * pattern matched it. */
typedef ordo_status (*ordo__hf_span_fn)(void *context, size_t start, size_t end, int match,
                                        ordo_error *err);

/* ---- running the steps (hf_pretok.c) ---- */

/* One run of ordo__hf_pretokenize: pieces flow from step to step; each
 * step has two scratch buffers of its own for what it rewrites. */
typedef struct ordo__hf_run {
    const ordo__hf_pretokenizer *p;
    ordo__hf_piece_fn fn;
    void *context;
    ordo__text *scratch; /* 2 per step */
} ordo__hf_run;

/* Passes a piece to step `step` (past the last: to the caller's fn);
 * empty pieces are dropped. at_start: the piece begins the text. */
ordo_status ordo__hf_run_from(ordo__hf_run *r, size_t step, const char *piece, size_t len,
                              int at_start, ordo_error *err);

/* Splits a piece with a step's spans under a behavior and passes each
 * resulting piece on to step+1 (hf_pretok_split.c). `spans` produces the
 * spans of piece[0..len) (regex matches, or characters meeting a
 * predicate). */
typedef ordo_status (*ordo__hf_spans_fn)(const ordo__hf_step *step, const char *s, size_t n,
                                         ordo__hf_span_fn fn, void *context, ordo_error *err);
ordo_status ordo__hf_split_piece(ordo__hf_run *r, size_t step, const char *piece, size_t len,
                                 int at_start, ordo__hf_spans_fn spans, ordo__hf_behavior behavior,
                                 int invert, ordo_error *err);

/* The steps (hf_pretok_split.c, hf_pretok_bytelevel.c, hf_pretok_simple.c):
 * each takes a piece and passes what it makes on to step+1. */
ordo_status ordo__hf_split_step(ordo__hf_run *r, size_t step, const char *piece, size_t len,
                                int at_start, ordo_error *err);
ordo_status ordo__hf_byte_level_step(ordo__hf_run *r, size_t step, const char *piece, size_t len,
                                     int at_start, ordo_error *err);
ordo_status ordo__hf_simple_step(ordo__hf_run *r, size_t step, const char *piece, size_t len,
                                 int at_start, ordo_error *err);

/* Parsers of the steps' members (hf_pretok_split.c, hf_pretok_bytelevel.c,
 * hf_pretok_simple.c); `where` names the step. */
ordo_status ordo__hf_split_parse(const json_t *json, const char *where, int scanners,
                                 ordo__hf_step *step, ordo_error *err);
ordo_status ordo__hf_byte_level_parse(const json_t *json, const char *where, int scanners,
                                      ordo__hf_step *step, ordo_error *err);
ordo_status ordo__hf_simple_parse(const json_t *json, const char *where, const char *type,
                                  ordo__hf_step *step, ordo_error *err);

/* A boolean member: required (0: absent gives `fallback`). */
ordo_status ordo__hf_member_bool(const json_t *json, const char *where, const char *name,
                                 int required, int fallback, int *out, ordo_error *err);

/* ---- regexes (hf_regex.c) ---- */

/* Compiles a tokenizer.json regex (Oniguruma, Ruby syntax) for PCRE2,
 * translating what the two read differently; refuses a construct the
 * translation cannot express, naming it and `where`. *out is the caller's
 * (pcre2_code_free). `literal` 1: the pattern is a plain string. */
ordo_status ordo__hf_split_regex_compile(const char *pattern, size_t len, int literal,
                                         const char *where, pcre2_code **out, ordo_error *err);

/* The translated PCRE2 pattern text (for tests and messages); *out is the
 * caller's (free). */
ordo_status ordo__hf_split_regex_translate(const char *pattern, size_t len, const char *where,
                                           char **out, ordo_error *err);

/* Every match of the regex (or scanner) over s[0..n), with the gaps
 * between them, in order, as the library's find_iter gives them (an empty
 * match right after a match is skipped). */
ordo_status ordo__hf_regex_spans(const ordo__hf_step *step, const char *s, size_t n,
                                 ordo__hf_span_fn fn, void *context, ordo_error *err);

/* ---- scanners (hf_scan.c) ---- */

/* The scanner for a pattern string, or NULL when there is none. */
ordo__hf_scan_fn ordo__hf_scanner_for(const char *pattern, size_t len);

/* GPT-2's pattern, which ByteLevel with use_regex applies. */
extern const char ordo__hf_gpt2_pattern[];

/* ---- the library's Unicode classes (hf_unicode.c) ---- */

enum {
    ORDO__HF_WORD16,    /* Rust regex \w */
    ORDO__HF_ONIG_WORD, /* Oniguruma \w */
    ORDO__HF_ND16,      /* Oniguruma \d */
    ORDO__HF_NUMERIC17, /* char::is_numeric */
    ORDO__HF_PUNCT8,    /* the Punctuation pre-tokenizer */
};

/* Whether code point cp is in class `which`. */
int ordo__hf_unicode_is(int which, uint32_t cp);

/* Appends class `which` as a PCRE2 class body ("\x{41}-\x{5a}..."). */
ordo_status ordo__hf_unicode_body(int which, ordo__text *out, ordo_error *err);

/* Appends the body of the Unicode 16 property named name[0..n) (a
 * General_Category or Script, named as Oniguruma names them); 0 when
 * there is no such property. */
int ordo__hf_property_body(const char *name, size_t n, ordo__text *out, ordo_status *status,
                           ordo_error *err);

/* The code point at s[i] (valid UTF-8) and its length in *len. */
uint32_t ordo__hf_utf8_at(const unsigned char *s, size_t i, size_t *len);

#endif
