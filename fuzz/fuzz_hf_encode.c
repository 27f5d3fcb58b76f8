/* Fuzzes encoding under fixed tokenizer.json files built here, on
 * arbitrary bytes: never a crash, ids always below the vocab size, and
 * with byte fallback for every byte (no unknowns, no stripped spaces) the
 * ids decode back to the input when it is valid UTF-8. A second file has
 * unk_token without fallback, prefix/suffix and added tokens with lstrip
 * and rstrip: only no crash and ids in range there. A third, with U+2581
 * tokens and a merge across U+2581 after '>' (as Gemma 3 has), encodes
 * the input spelled in a, b, >, x and U+2581 as one long word, and must
 * give the same ids with long words cut before U+2581 as merged whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"
#include "tokenizer/hf_model.h"

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

#define SP "\xe2\x96\x81"

static ordo__hf *build_spaces(int cut)
{
    const char *json =
        "{\"model\":{\"type\":\"BPE\",\"unk_token\":\"<unk>\",\"fuse_unk\":true,\"vocab\":{"
        "\"<unk>\":0,\"a\":1,\"b\":2,\"ab\":3,\">\":4,\"" SP "\":5,\"" SP "a\":6,\"" SP SP
        "\":7,\">" SP "\":8,\">" SP "a\":9,\"" SP "ab\":10,\"ba\":11},\"merges\":[[\"" SP
        "\",\"a\"],[\"" SP "\",\"" SP "\"],[\">\",\"" SP "\"],[\">" SP "\",\"a\"],[\"a\","
        "\"b\"],[\"" SP "a\",\"b\"],[\"b\",\"a\"]]}}";
    ordo__hf *hf = NULL;
    ordo_error err;
    if (ordo__hf_parse(json, strlen(json), "fuzz", &hf, &err) != ORDO_OK) {
        fprintf(stderr, "%s\n", err.message);
        abort();
    }
    if (!hf->bpe->split_words)
        abort();
    hf->bpe->split_words = cut;
    return hf;
}

static void same_cut_or_whole(const unsigned char *data, size_t size)
{
    static ordo__hf *cut, *whole;
    if (!cut) {
        cut = build_spaces(1);
        whole = build_spaces(0);
    }
    static const char *const spelled[8] = {SP, SP, SP, "a", "b", ">", "x", "ab"};
    ordo__text text = {0};
    ordo_error err;
    for (size_t i = 0; i < size; i++)
        if (ordo__text_append(&text, spelled[data[i] & 7], strlen(spelled[data[i] & 7]), &err))
            abort();
    ordo__tokens a = {0}, b = {0};
    if (ordo__hf_encode(cut, text.data, text.len, &a, &err) ||
        ordo__hf_encode(whole, text.data, text.len, &b, &err))
        abort();
    if (a.count != b.count || (a.count && memcmp(a.ids, b.ids, a.count * sizeof *a.ids) != 0))
        abort();
    free(a.ids), free(b.ids), free(text.data);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    same_cut_or_whole(data, size);
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
