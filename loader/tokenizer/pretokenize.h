/* Hand-written pre-tokenizers (internal): each returns where the piece
 * starting at byte i ends, exactly as the encoding's published split
 * pattern would (leftmost alternative first, as tiktoken's regex engine),
 * on valid UTF-8. */
#ifndef ORDO_PRETOKENIZE_H
#define ORDO_PRETOKENIZE_H

#include <stddef.h>

#include "unicode_table.h"

/* cl100k_base's pattern:
 *   '(?i:[sdmt]|ll|ve|re) | [^\r\n\p{L}\p{N}]?+\p{L}++ | \p{N}{1,3}+
 *   | ' '?[^\s\p{L}\p{N}]++[\r\n]*+ | \s++$ | \s*[\r\n] | \s+(?!\S) | \s
 * with \s as White_Space. */
size_t ordo__cl100k_piece(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i);

/* Llama 3's pattern (Meta's reference tokenizer):
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,3}
 *   | ' '?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
 * the same as cl100k_base's but for a whitespace run that reaches the end
 * of the text: cl100k takes it whole, Llama 3 first up to its last line
 * break. */
size_t ordo__llama3_piece(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i);

/* o200k_base's pattern:
 *   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|…)?
 *   | [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|…)?
 *   | \p{N}{1,3} | ' '?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
 * (the two letter classes overlap: the scanner backtracks as the regex
 * does). */
size_t ordo__o200k_piece(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i);

#endif
