/* Hugging Face tokenizer.json (internal): a BPE model with its normalizer,
 * pre-tokenizer and added tokens, producing the ids Hugging Face's
 * `tokenizers` library produces (docs/tokenizer.md, "tokenizer.json").
 *
 * Encoding, as the library does it with add_special_tokens false:
 *   1. invalid UTF-8 is repaired (ordo__utf8_repair);
 *   2. the text is split around the non-special added tokens matched on
 *      the raw text (hf_added.c); special added tokens are never matched;
 *   3. each segment in between is normalized (hf_normalize*.c), then split
 *      around added tokens matched on normalized text;
 *   4. what remains is pre-tokenized into pieces (hf_pretok*.c);
 *   5. each piece goes through the BPE model (hf_bpe*.c).
 * Files: hf_load.c (the JSON), hf_encode.c (the pipeline), hf_added.c,
 * hf_bpe*.c (model A); hf_normalize*.c (B); hf_pretok*.c (C). */
#ifndef ORDO_HF_H
#define ORDO_HF_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "tokenizer.h"

/* A growable byte string; data is the owner's (free(data)). */
typedef struct ordo__text {
    char *data;
    size_t len, cap;
} ordo__text;

/* Appends n bytes (data stays NUL-terminated). */
ordo_status ordo__text_append(ordo__text *t, const void *p, size_t n, ordo_error *err);

/* Makes room for n more bytes and the NUL after them. */
ordo_status ordo__text_reserve(ordo__text *t, size_t n, ordo_error *err);

/* ---- the whole tokenizer (hf_load.c, hf_encode.c) ---------------------- */

typedef struct ordo__hf ordo__hf;

/* Reads and compiles the tokenizer.json at `path`; anything the library
 * would read differently from ordo (a model other than BPE, an unknown
 * normalizer or pre-tokenizer, a merge naming a token not in the vocab,
 * two tokens with one id) is refused naming the component and where it is
 * in the file. *hf is the caller's (ordo__hf_free); read-only afterwards,
 * so one may serve many threads. */
ordo_status ordo__hf_load(const char *path, ordo__hf **hf, ordo_error *err);

/* The same from `len` bytes of JSON text; `what` names it in messages. */
ordo_status ordo__hf_parse(const char *json, size_t len, const char *what, ordo__hf **hf,
                           ordo_error *err);

void ordo__hf_free(ordo__hf *hf);

/* Appends the ids of ordinary text (special added tokens are never
 * produced) to `out`. Thread-safe. */
ordo_status ordo__hf_encode(const ordo__hf *hf, const char *text, size_t len, ordo__tokens *out,
                            ordo_error *err);

/* The same until `out` holds `stop` ids: every piece, added token and
 * stretch after that is left out, so the ids appended are the whole
 * text's first ones; *complete (when not NULL) 1 when nothing was left
 * out. */
ordo_status ordo__hf_encode_upto(const ordo__hf *hf, const char *text, size_t len, size_t stop,
                                 ordo__tokens *out, int *complete, ordo_error *err);

/* Appends the text of token `id` (as the file's decoder gives it; byte
 * fallback tokens as their byte) to a growable buffer; ORDO_INVALID for an
 * id out of range. */
ordo_status ordo__hf_decode(const ordo__hf *hf, uint32_t id, char **buffer, size_t *len,
                            size_t *capacity, ordo_error *err);

/* The id of the token whose content is `content` (the vocab or the added
 * tokens, special ones included): 1 and *id, or 0 when there is none. */
int ordo__hf_token_id(const ordo__hf *hf, const char *content, uint32_t *id);

/* One more than the largest id (vocab and added tokens). */
uint32_t ordo__hf_vocab_size(const ordo__hf *hf);

/* ---- normalizers (hf_normalize*.c) ------------------------------------ */

typedef struct ordo__hf_normalizer ordo__hf_normalizer;

/* Compiles a "normalizer" value: JSON null (or NULL) gives *out NULL, the
 * identity. Refuses an unknown or malformed normalizer naming its type and
 * `where` (e.g. "normalizer.normalizers[1]"). */
ordo_status ordo__hf_normalizer_parse(const json_t *json, const char *where,
                                      ordo__hf_normalizer **out, ordo_error *err);

void ordo__hf_normalizer_free(ordo__hf_normalizer *n);

/* Writes the normalized form of valid UTF-8 text to *out (replacing what
 * it held), exactly as the library's normalizer (its Unicode version)
 * does. n may be NULL (a copy). */
ordo_status ordo__hf_normalize(const ordo__hf_normalizer *n, const char *text, size_t len,
                               ordo__text *out, ordo_error *err);

/* ---- pre-tokenizers (hf_pretok*.c) ------------------------------------ */

typedef struct ordo__hf_pretokenizer ordo__hf_pretokenizer;

/* Compiles a "pre_tokenizer" value (JSON null or NULL: *out NULL, the
 * whole text is one piece). Refuses an unknown or malformed one naming
 * its type and `where`. */
ordo_status ordo__hf_pretokenizer_parse(const json_t *json, const char *where,
                                        ordo__hf_pretokenizer **out, ordo_error *err);

void ordo__hf_pretokenizer_free(ordo__hf_pretokenizer *p);

/* 1 when the pieces are raw bytes still to be read through ByteLevel's
 * byte-to-character map (ByteLevel is the pre-tokenizer's last step: the
 * model then works on bytes); 0 when they are in the vocab's own
 * characters already (p NULL: 0). */
int ordo__hf_pretokenizer_byte_level(const ordo__hf_pretokenizer *p);

/* Receives one non-empty piece. */
typedef ordo_status (*ordo__hf_piece_fn)(void *context, const char *piece, size_t len,
                                         ordo_error *err);

/* Splits valid UTF-8 text into pieces, in order, exactly as the library's
 * pre-tokenizer does, calling fn for each (p NULL: the text is one piece). */
ordo_status ordo__hf_pretokenize(const ordo__hf_pretokenizer *p, const char *text, size_t len,
                                 ordo__hf_piece_fn fn, void *context, ordo_error *err);

/* The same for a segment of a document: `first` 0 when the segment does
 * not begin the document (an added token or other text comes before it);
 * Metaspace's prepend_scheme "first" then prepends nothing, as the library
 * (which looks at the segment's offset in the original text) does.
 * ordo__hf_pretokenize is this with first 1. */
ordo_status ordo__hf_pretokenize_segment(const ordo__hf_pretokenizer *p, const char *text,
                                         size_t len, int first, ordo__hf_piece_fn fn, void *context,
                                         ordo_error *err);

#endif
