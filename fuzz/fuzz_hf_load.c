/* Fuzzes the tokenizer.json loader on arbitrary JSON: never a crash or a
 * leak; a file it accepts encodes a few texts with ids below its vocab
 * size, and those ids decode (or are refused) without a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    ordo__hf *hf = NULL;
    ordo_error err;
    if (ordo__hf_parse((const char *)data, size, "fuzz", &hf, &err) != ORDO_OK) {
        if (hf || !strstr(err.message, "tokenizer.json 'fuzz'"))
            abort(); /* a refusal names the file and leaves nothing behind */
        return 0;
    }
    static const char *const texts[] = {
        "", "ab abc  cab\n\n<x>", "\xc3\xa9\xe2\x82\xac\xff a",
        "<s> aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        ordo__tokens tokens = {0};
        if (ordo__hf_encode(hf, texts[k], strlen(texts[k]), &tokens, &err) != ORDO_OK)
            abort();
        char *buffer = NULL;
        size_t used = 0, capacity = 0;
        for (size_t i = 0; i < tokens.count; i++) {
            if (tokens.ids[i] >= ordo__hf_vocab_size(hf))
                abort();
            ordo__hf_decode(hf, tokens.ids[i], &buffer, &used, &capacity, &err);
        }
        free(buffer);
        free(tokens.ids);
    }
    ordo__hf_free(hf);
    return 0;
}
