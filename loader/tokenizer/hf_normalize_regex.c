/* Replace's Regex patterns: the library compiles them with Oniguruma (Ruby
 * syntax); ordo with PCRE2, through the same translation the Split
 * pre-tokenizer's patterns take (hf_regex.c: the library's classes,
 * anchors and repeats; docs/tokenizer.md, "tokenizer.json pre-tokenizers"). */
#include <stdio.h>

#include "hf_normalize.h"
#include "hf_pretok.h"

/* Compiles a Replace's Regex pattern; see hf_normalize.h. */
ordo_status ordo__hf_regex_compile(const char *pattern, size_t len, const char *where,
                                   pcre2_code **out, ordo_error *err)
{
    char place[512];
    snprintf(place, sizeof place, "%s.pattern.Regex", where);
    return ordo__hf_split_regex_compile(pattern, len, 0, place, out, err);
}
