/* Fuzzes encoding under fixed tokenizer.json files built here, on
 * arbitrary bytes: never a crash, ids always below the vocab size, and
 * with byte fallback for every byte (no unknowns, no stripped spaces) the
 * ids decode back to the input when it is valid UTF-8. A second file has
 * unk_token without fallback, prefix/suffix and added tokens with lstrip
 * and rstrip: only no crash and ids in range there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static ordo__hf *build(int round_trip)
{
    static char json[32768];
    size_t o =
        (size_t)snprintf(json, sizeof json,
                         "{\"version\":\"1.0\",\"added_tokens\":[%s],\"normalizer\":null,"
                         "\"pre_tokenizer\":null,\"decoder\":%s,\"model\":{\"type\":\"BPE\","
                         "\"unk_token\":\"<unk>\",\"fuse_unk\":%s,\"byte_fallback\":%s,%s"
                         "\"vocab\":{\"<unk>\":0",
                         round_trip ? "{\"id\":263,\"content\":\"<x>\",\"single_word\":false,"
                                      "\"lstrip\":false,\"rstrip\":false,\"normalized\":false,"
                                      "\"special\":false},{\"id\":264,\"content\":\"<s>\","
                                      "\"single_word\":false,\"lstrip\":false,\"rstrip\":false,"
                                      "\"normalized\":false,\"special\":true}"
                                    : "{\"id\":12,\"content\":\"<x>\",\"single_word\":false,"
                                      "\"lstrip\":true,\"rstrip\":true,\"normalized\":false,"
                                      "\"special\":false},{\"id\":13,\"content\":\" \","
                                      "\"single_word\":false,\"lstrip\":false,\"rstrip\":true,"
                                      "\"normalized\":false,\"special\":false}",
                         round_trip ? "{\"type\":\"Sequence\",\"decoders\":[{\"type\":"
                                      "\"ByteFallback\"},{\"type\":\"Fuse\"}]}"
                                    : "null",
                         round_trip ? "true" : "false", round_trip ? "true" : "false",
                         round_trip ? "" : "\"continuing_subword_prefix\":\"##\",");
    if (round_trip) {
        for (int b = 0; b < 256; b++)
            o += (size_t)snprintf(json + o, sizeof json - o, ",\"<0x%02X>\":%d", b, b + 1);
        snprintf(json + o, sizeof json - o,
                 ",\"a\":257,\"b\":258,\"c\":259,\"ab\":260,\"abc\":261,\"ca\":262},"
                 "\"merges\":[\"a b\",\"ab c\",\"c a\"]}}");
    } else
        snprintf(json + o, sizeof json - o,
                 ",\"a\":1,\"##b\":2,\"##c\":3,\"ab\":4,\"abc\":5,\"c\":6,\"##a\":7,\"ca\":8,"
                 "\"b\":9,\"##bc\":10,\"##ca\":11},"
                 "\"merges\":[\"a ##b\",\"ab ##c\",\"c ##a\",\"##b ##c\",\"##c ##a\"]}}");
    ordo__hf *hf = NULL;
    ordo_error err;
    if (ordo__hf_parse(json, strlen(json), "fuzz", &hf, &err) != ORDO_OK) {
        fprintf(stderr, "%s\n", err.message);
        abort();
    }
    return hf;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static ordo__hf *tokenizers[2];
    if (!tokenizers[0]) {
        tokenizers[0] = build(1);
        tokenizers[1] = build(0);
    }
    char *repaired = NULL;
    size_t repaired_len = 0;
    ordo_error err;
    if (ordo__utf8_repair((const char *)data, size, &repaired, &repaired_len, &err) != ORDO_OK)
        abort();
    for (int k = 0; k < 2; k++) {
        ordo__tokens tokens = {0};
        if (ordo__hf_encode(tokenizers[k], (const char *)data, size, &tokens, &err) != ORDO_OK)
            abort();
        char *buffer = NULL;
        size_t used = 0, capacity = 0;
        for (size_t i = 0; i < tokens.count; i++) {
            if (tokens.ids[i] >= ordo__hf_vocab_size(tokenizers[k]))
                abort();
            if (k == 0 &&
                ordo__hf_decode(tokenizers[k], tokens.ids[i], &buffer, &used, &capacity, &err))
                abort();
        }
        /* invalid UTF-8 became U+FFFD, which the fallback spells in bytes */
        const char *expected = repaired ? repaired : (const char *)data;
        size_t expected_len = repaired ? repaired_len : size;
        if (k == 0 && (used != expected_len || (used && memcmp(buffer, expected, used) != 0)))
            abort();
        free(buffer);
        free(tokens.ids);
    }
    free(repaired);
    return 0;
}
