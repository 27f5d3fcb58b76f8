/* tokenizer: a tiktoken-compatible byte-level BPE tokenizer (internal, not
 * installed), the pretokenizer patterns and Unicode tables. Depends on core.
 *
 * Ranks come from a .tiktoken file (base64(token bytes) SP rank per line);
 * text is split by the encoding's published pattern (PCRE2 with JIT, `\s`
 * spelled as Unicode White_Space as in tiktoken's engine), then each piece
 * is merged by lowest pair rank, leftmost first. Invalid UTF-8 is first
 * repaired: every maximal ill-formed subsequence becomes U+FFFD (as
 * Python's decode(errors="replace") and the WHATWG decoder do). */
#ifndef ORDO_TOKENIZER_H
#define ORDO_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "unicode_table.h"

/* The byte tokenizer maps each byte of the UTF-8 text to its value (0-255);
 * end-of-text is 256, pad is 257. */
#define ORDO_BYTES_EOT 256u
#define ORDO_BYTES_PAD 257u

/* A growable token buffer. */
typedef struct ordo__tokens {
    uint32_t *ids;
    size_t count, capacity;
} ordo__tokens;

/* Makes room for `more` ids more (the buffer is the caller's, freed with
 * free(ids)). */
ordo_status ordo__tokens_reserve(ordo__tokens *tokens, size_t more, ordo_error *err);

/* Appends one id. */
ordo_status ordo__tokens_push(ordo__tokens *tokens, uint32_t id, ordo_error *err);

/* A copy of `text` with every maximal ill-formed UTF-8 subpart replaced by
 * U+FFFD (Unicode 3.9, as Python's errors="replace" and the WHATWG decoder
 * do) in *copy (the caller's, free) and *copy_len; *copy is NULL when the
 * text is valid already. */
ordo_status ordo__utf8_repair(const char *text, size_t len, char **copy, size_t *copy_len,
                              ordo_error *err);

typedef struct ordo__bpe ordo__bpe;

/* Encodings by name (the table in bpe.c; ordo_tokenizer_encodings lists it). */
typedef struct ordo__encoding {
    const char *name;
    const char *pattern;
    uint32_t ranks;      /* ordinary tokens in its rank file */
    uint32_t rank_space; /* ranks lie below this (p50k skips its end-of-text) */
    uint32_t eot;        /* <|endoftext|> */
    uint32_t vocab_size; /* ids below it, special tokens included */
    /* A hand-written scanner for the pattern (pretokenize.h), or NULL for
     * PCRE2 alone. */
    size_t (*scan)(const ordo__unicode_table *u, const unsigned char *s, size_t n, size_t i);
} ordo__encoding;

/* The encoding called `name`, or NULL. */
const ordo__encoding *ordo__encoding_find(const char *name);

/* Loads a rank file for an encoding; refuses a malformed line (naming the
 * line number), duplicate ranks, gaps, or a rank count that is not the
 * encoding's. *bpe is owned by the caller (ordo__bpe_free). Read-only
 * afterwards: safe to share between threads. */
ordo_status ordo__bpe_load(const char *path, const ordo__encoding *encoding, ordo__bpe **bpe,
                           ordo_error *err);

void ordo__bpe_free(ordo__bpe *bpe);

/* Appends the token ids of `text` (ordinary text: special tokens are never
 * produced) to `out`. Thread-safe. */
ordo_status ordo__bpe_encode(const ordo__bpe *bpe, const char *text, size_t len, ordo__tokens *out,
                             ordo_error *err);

/* The same until `out` holds `stop` ids: no piece is taken after that, so
 * the ids appended are the whole text's first ones, whole pieces (at
 * least stop - out->count of them when the text has so many). *complete
 * (when not NULL): 1 when the whole text was encoded. */
ordo_status ordo__bpe_encode_upto(const ordo__bpe *bpe, const char *text, size_t len, size_t stop,
                                  ordo__tokens *out, int *complete, ordo_error *err);

/* The same, always splitting with PCRE2 and the published pattern (the
 * reference the scanners are tested against). */
ordo_status ordo__bpe_encode_pcre2(const ordo__bpe *bpe, const char *text, size_t len,
                                   ordo__tokens *out, ordo_error *err);

/* The end offsets of the pieces of valid UTF-8 text, split by the
 * encoding's scanner (pcre2 0) or by PCRE2 (pcre2 1). */
ordo_status ordo__bpe_split(const ordo__bpe *bpe, int pcre2, const char *text, size_t len,
                            ordo__tokens *ends, ordo_error *err);

/* Appends the bytes of token `id` to a growable buffer; ORDO_INVALID for an
 * id with no bytes (special or out of range). */
ordo_status ordo__bpe_decode(const ordo__bpe *bpe, uint32_t id, char **buffer, size_t *len,
                             size_t *capacity, ordo_error *err);

const ordo__encoding *ordo__bpe_encoding(const ordo__bpe *bpe);

/* Special tokens of an encoding (specials.c, the table docs/tokenizer.md
 * lists): 1 and the id of `content`, or 0 when it names none. */
int ordo__encoding_special(const ordo__encoding *e, const char *content, uint32_t *id);

/* The encoding's end-of-text token ("<|endoftext|>"; Llama 3's
 * "<|end_of_text|>"): the default eos. A static string. */
const char *ordo__encoding_eot_name(const ordo__encoding *e);

/* The encoding's special tokens as text for messages, written to `buffer`
 * (always NUL-terminated, truncated when small); returns the length needed. */
size_t ordo__encoding_specials(const ordo__encoding *e, char *buffer, size_t size);

/* Appends the ids of ordinary text to `out` under either kind of
 * ordo_tokenizer (what ordo_tokenizer_encode does, without a copy). */
ordo_status ordo__tokenizer_append(const ordo_tokenizer *t, const char *text, size_t len,
                                   ordo__tokens *out, ordo_error *err);

/* The same, stopping between pieces once `out` holds `stop` ids
 * (ordo__bpe_encode_upto, ordo__hf_encode_upto): a prefix of the whole
 * text's ids; *complete 1 when it is all of them. */
ordo_status ordo__tokenizer_append_upto(const ordo_tokenizer *t, const char *text, size_t len,
                                        size_t stop, ordo__tokens *out, int *complete,
                                        ordo_error *err);

/* The tiktoken encoding behind a tokenizer, or NULL for a tokenizer.json. */
const ordo__encoding *ordo__tokenizer_encoding(const ordo_tokenizer *t);

/* Opens encoding `encoding`'s rank file (NULL: a tokenizer.json) at `path`,
 * whose bytes the caller hashed to `sha256`, as ordo_tokenizer_open(_json)
 * does, but shared in this process: the last few opened are kept, and
 * opening a file of the same kind and digest again takes a reference to
 * the one kept (a recipe opened for every request of a service, or every
 * batch regenerated, loads its tokenizer once). ordo_tokenizer_close drops
 * the caller's reference. Tokenizers are read-only once opened, so the
 * same ids come from either. */
ordo_status ordo__tokenizer_open_shared(const char *encoding, const char *path,
                                        const unsigned char *sha256, ordo_tokenizer **out,
                                        ordo_error *err);

#endif
