/* The Unicode parts of tokenizer.json's normalizers (internal): the four
 * normalization forms with the library's Unicode 9.0 tables, Rust's
 * char::to_lowercase and char::is_whitespace (Unicode 17.0). Tables in
 * hf_normalize_tables.h (generated: scripts/unicode/normalize/tables.sh). */
#ifndef ORDO_HF_NORMALIZE_H
#define ORDO_HF_NORMALIZE_H

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include "hf.h"

/* The normalization forms; a code point's record flags 1 << form when it
 * passes through the form unchanged whatever surrounds it. */
typedef enum ordo__nf_form {
    ORDO__NFC = 0,
    ORDO__NFKC = 1,
    ORDO__NFD = 2,
    ORDO__NFKD = 3,
} ordo__nf_form;

/* A compiled normalizer (hf_normalize.c), applied by hf_normalize_apply.c. */
typedef enum ordo__hf_normalizer_kind {
    KIND_NFC = ORDO__NFC,
    KIND_NFKC = ORDO__NFKC,
    KIND_NFD = ORDO__NFD,
    KIND_NFKD = ORDO__NFKD,
    KIND_LOWERCASE,
    KIND_STRIP,
    KIND_PREPEND,
    KIND_REPLACE,
    KIND_SEQUENCE,
} ordo__hf_normalizer_kind;

struct ordo__hf_normalizer {
    ordo__hf_normalizer_kind kind;
    int strip_left, strip_right;  /* Strip */
    char *content;                /* Prepend's string, Replace's content */
    size_t content_len;           /*   (in bytes) */
    char *literal;                /* Replace's String pattern, or NULL */
    size_t literal_len;           /*   (in bytes) */
    pcre2_code *regex;            /* Replace's Regex pattern, or NULL */
    ordo__hf_normalizer **member; /* Sequence */
    size_t members;
};

/* Compiles a Replace's Regex pattern (the library's Oniguruma syntax) into
 * *out (the caller's, pcre2_code_free); refuses a bad one naming
 * `where`.pattern.Regex. */
ordo_status ordo__hf_regex_compile(const char *pattern, size_t len, const char *where,
                                   pcre2_code **out, ordo_error *err);

/* Appends the normalized form of valid UTF-8 text to `out`, as the
 * library's `unicode-normalization-alignments` (Unicode 9.0) gives it. */
ordo_status ordo__hf_unicode_normalize(ordo__nf_form form, const char *text, size_t len,
                                       ordo__text *out, ordo_error *err);

/* Appends valid UTF-8 text with each character replaced by its full
 * lowercase mapping, as Rust's char::to_lowercase (no final-sigma rule). */
ordo_status ordo__hf_lowercase(const char *text, size_t len, ordo__text *out, ordo_error *err);

/* 1 when c is White_Space (Rust's char::is_whitespace). */
int ordo__hf_white_space(uint32_t c);

/* Decodes the code point starting at p in valid UTF-8; returns its length. */
size_t ordo__hf_utf8_decode(const unsigned char *p, uint32_t *c);

/* Encodes c (a Unicode scalar value) at out; returns its length (1-4). */
size_t ordo__hf_utf8_encode(uint32_t c, unsigned char *out);

#endif
