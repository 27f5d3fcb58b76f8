/* The public face of the BPE tokenizer. */
#include <stdlib.h>

#include "tokenizer.h"

struct ordo_tokenizer {
    ordo__bpe *bpe;
};

/* Opens an encoding with its rank file. */
ordo_status ordo_tokenizer_open(const char *encoding, const char *ranks_path, ordo_tokenizer **out,
                                ordo_error *err)
{
    *out = NULL;
    const ordo__encoding *e = ordo__encoding_find(encoding);
    char names[256];
    ordo_tokenizer_encodings(names, sizeof names);
    if (!e)
        return ordo__error(err, ORDO_INVALID, "encoding '%s' must be %s", encoding ? encoding : "",
                           names);
    ordo_tokenizer *t = calloc(1, sizeof *t);
    if (!t)
        return ordo__error(err, ORDO_NOMEM, "out of memory");
    ordo_status status = ordo__bpe_load(ranks_path, e, &t->bpe, err);
    if (status != ORDO_OK) {
        free(t);
        return status;
    }
    *out = t;
    return ordo__ok(err);
}

void ordo_tokenizer_close(ordo_tokenizer *t)
{
    if (t)
        ordo__bpe_free(t->bpe);
    free(t);
}

/* Encodes into a caller-owned array. */
ordo_status ordo_tokenizer_encode(const ordo_tokenizer *t, const char *text, size_t len,
                                  uint32_t **ids, size_t *count, ordo_error *err)
{
    ordo__tokens tokens = {0};
    ordo_status status = ordo__bpe_encode(t->bpe, text, len, &tokens, err);
    if (status != ORDO_OK) {
        free(tokens.ids);
        *ids = NULL;
        *count = 0;
        return status;
    }
    *ids = tokens.ids;
    *count = tokens.count;
    return ordo__ok(err);
}

/* Decodes into a caller-owned buffer. */
ordo_status ordo_tokenizer_decode(const ordo_tokenizer *t, const uint32_t *ids, size_t count,
                                  char **bytes, size_t *len, ordo_error *err)
{
    char *buffer = NULL;
    size_t used = 0, capacity = 0;
    ordo_status status = ORDO_OK;
    for (size_t i = 0; i < count && status == ORDO_OK; i++)
        status = ordo__bpe_decode(t->bpe, ids[i], &buffer, &used, &capacity, err);
    if (status != ORDO_OK) {
        free(buffer);
        *bytes = NULL;
        *len = 0;
        return status;
    }
    *bytes = buffer;
    *len = used;
    return ordo__ok(err);
}

uint32_t ordo_tokenizer_eot(const ordo_tokenizer *t)
{
    return ordo__bpe_encoding(t->bpe)->eot;
}

uint32_t ordo_tokenizer_vocab_size(const ordo_tokenizer *t)
{
    return ordo__bpe_encoding(t->bpe)->vocab_size;
}
