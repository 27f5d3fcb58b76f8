/* tokenizer.json files ordo refuses, each with a message naming the file
 * and the place: what the library would read differently, what is random,
 * and what is malformed. */
#include "harness.h"
#include "testing.h"

#define MODEL_TAIL "\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},\"merges\":[\"a b\"]"

/* A document with `model` inside and `top` added at the top level. */
static const char *document(const char *model, const char *top, const char *added)
{
    static char json[4096];
    snprintf(json, sizeof json,
             "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null%s%s,\"added_tokens\":[%s],"
             "\"normalizer\":null,\"pre_tokenizer\":null,\"post_processor\":null,"
             "\"decoder\":null,\"model\":{%s}}",
             top ? "," : "", top ? top : "", added ? added : "", model);
    return json;
}

static void refused(const char *json, const char *message)
{
    ordo__hf *hf = (ordo__hf *)1;
    ordo_error err;
    ASSERT_STATUS(ordo__hf_parse(json, strlen(json), "t.json", &hf, &err), ORDO_INVALID, &err);
    ASSERT(hf == NULL);
    ASSERT_CONTAINS(err.message, "tokenizer.json 't.json'");
    ASSERT_CONTAINS(err.message, message);
}

TEST(hf_refuses_malformed_json_naming_line_and_column)
{
    const char *path = test_path("bad.json");
    test_write_file(path, "{\"model\":\n  {\"type\": BPE}}", 26);
    ordo__hf *hf = NULL;
    ordo_error err;
    ASSERT_STATUS(ordo__hf_load(path, &hf, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, path);
    ASSERT_CONTAINS(err.message, "malformed JSON at line 2, column");
    refused("{\"model\":{}, \"model\":{}}", "duplicate object key");
    refused("[1,2]", "is not a JSON object");
    ASSERT_STATUS(ordo__hf_load(test_path("missing.json"), &hf, &err), ORDO_IO, &err);
}

TEST(hf_refuses_models_other_than_bpe_and_unknown_keys)
{
    refused(document("\"type\":\"Unigram\",\"vocab\":[]", NULL, NULL),
            "model.type 'Unigram' is not supported (only BPE)");
    /* a real Unigram model's keys are not BPE's: the type is named first */
    refused(document("\"type\":\"Unigram\",\"unk_id\":0,\"vocab\":[[\"a\",-1.0]]", NULL, NULL),
            "model.type 'Unigram' is not supported (only BPE)");
    refused(document("\"type\":\"WordPiece\"," MODEL_TAIL, NULL, NULL), "model.type 'WordPiece'");
    refused(document(MODEL_TAIL, NULL, NULL), "model.type is missing");
    refused(document("\"type\":\"BPE\",\"cache\":1," MODEL_TAIL, NULL, NULL),
            "model.cache is not a key");
    refused(document("\"type\":\"BPE\"," MODEL_TAIL, "\"extra\":1", NULL),
            "'extra' is not a key ordo knows");
    refused(document("\"type\":\"BPE\",\"vocab\":{\"a\":0}", NULL, NULL),
            "model.merges is missing");
}

TEST(hf_refuses_dropout_truncation_padding_and_other_versions)
{
    refused(document("\"type\":\"BPE\",\"dropout\":0.1," MODEL_TAIL, NULL, NULL),
            "model.dropout 0.1 is refused");
    ordo__hf *hf = NULL;
    ordo_error err;
    const char *zero = document("\"type\":\"BPE\",\"dropout\":0.0," MODEL_TAIL, NULL, NULL);
    ASSERT_OK(ordo__hf_parse(zero, strlen(zero), "t.json", &hf, &err), &err);
    ordo__hf_free(hf);
    char json[4096];
    snprintf(json, sizeof json, "%s", document("\"type\":\"BPE\"," MODEL_TAIL, NULL, NULL));
    char *at = strstr(json, "\"truncation\":null");
    memcpy(at, "\"truncation\":1234", 17);
    refused(json, "truncation must be null");
    snprintf(json, sizeof json, "%s", document("\"type\":\"BPE\"," MODEL_TAIL, NULL, NULL));
    memcpy(strstr(json, "\"1.0\""), "\"2.0\"", 5);
    refused(json, "version must be \"1.0\"");
}

TEST(hf_refuses_merges_naming_the_index_and_token)
{
    refused(document("\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},"
                     "\"merges\":[\"a b\",\"a c\"]",
                     NULL, NULL),
            "model.merges[1]: 'c' is not in the vocab");
    refused(document("\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},"
                     "\"merges\":[\"a b\",\"b a\"]",
                     NULL, NULL),
            "model.merges[1]: 'b' + 'a' is not in the vocab");
    refused(document("\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},"
                     "\"merges\":[\"a  b\"]",
                     NULL, NULL),
            "model.merges[0] 'a  b' is not two tokens separated by one space");
    refused(document("\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},"
                     "\"merges\":[\"a b\",[\"a\",\"b\"]]",
                     NULL, NULL),
            "model.merges[1] is not a string");
    refused(document("\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},"
                     "\"merges\":[[\"a\",\"b\",\"c\"]]",
                     NULL, NULL),
            "model.merges[0] is not a pair of strings");
}

TEST(hf_refuses_two_tokens_with_one_id_and_ids_out_of_range)
{
    refused(
        document("\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":0,\"ab\":2},\"merges\":[]", NULL, NULL),
        "model.vocab: 'a' and 'b' both have id 0");
    /* a vocab may skip ids, up to 1,048,576 of them */
    refused(document("\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":1048579},"
                     "\"merges\":[]",
                     NULL, NULL),
            "model.vocab 'ab': id 1048579 is out of range (the vocab has 3 tokens, so ids are "
            "0..1048578, skipping at most 1048576)");
    refused(document("\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":4294967296},"
                     "\"merges\":[]",
                     NULL, NULL),
            "model.vocab 'ab': id 4294967296 is out of range");
    refused(document("\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":-1},\"merges\":[]", NULL, NULL),
            "model.vocab 'b': id -1 is out of range");
    refused(document("\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1.5},\"merges\":[]", NULL, NULL),
            "model.vocab 'b': the id must be an integer, not a number with a fraction or exponent");
    refused(document("\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":\"1\"},\"merges\":[]", NULL, NULL),
            "model.vocab 'b': the id must be an integer, not a string");
    refused(document("\"type\":\"BPE\",\"unk_token\":\"<unk>\"," MODEL_TAIL, NULL, NULL),
            "model.unk_token '<unk>' is not in the vocab");
}

/* Keys holding U+0000 are read through U+FDD0 (hf_json_keys.c), so a
 * file with both cannot be told apart and is refused, naming the lines. */
TEST(hf_refuses_keys_holding_both_nul_and_fdd0)
{
    refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"\\u0000\": 0,\n"
            "\"\xef\xb7\x90\": 1}, \"merges\": []}}",
            "keys hold both U+0000 (line 1) and U+FDD0 (line 2), which ordo's JSON reader "
            "cannot tell apart: not supported");
    refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"\\ufdd0x\": 0, \"\\u0000\": 1}, "
            "\"merges\": []}}",
            "keys hold both U+0000 (line 1) and U+FDD0 (line 1)");
}

#define TOKEN(id, content, flags)                                                                  \
    "{\"id\":" #id ",\"content\":\"" content "\",\"single_word\":false,\"lstrip\":false,"          \
    "\"rstrip\":false,\"normalized\":false,\"special\":false" flags "}"

TEST(hf_refuses_added_tokens_the_library_would_number_otherwise)
{
    const char *model = "\"type\":\"BPE\"," MODEL_TAIL;
    refused(document(model, NULL, TOKEN(7, "<x>", "")),
            "added_tokens[0] '<x>' has id 7, but the library gives it id 3 (the next id after "
            "the vocab)");
    refused(document(model, NULL, TOKEN(5, "ab", "")),
            "added_tokens[0] 'ab' has id 5, but the library gives it id 2 (its id in the vocab)");
    refused(document(model, NULL, TOKEN(3, "<x>", "") "," TOKEN(4, "<x>", "")),
            "added_tokens[1] '<x>' is listed twice");
    refused(document(model, NULL, TOKEN(3, "<x>", ",\"colour\":1")),
            "added_tokens[0].colour is not a key ordo knows");
    refused(document(model, NULL, "{\"id\":3,\"content\":\"<x>\"}"),
            "added_tokens[0].single_word must be true or false");
    char json[4096];
    snprintf(json, sizeof json, "%s", document(model, NULL, TOKEN(3, "<x>", "")));
    memcpy(strstr(json, "\"single_word\":false"), "\"single_word\":true ", 19);
    refused(json, "added_tokens[0] '<x>': single_word is not supported");
}

TEST(hf_refuses_decoders_it_cannot_apply)
{
    char json[4096];
    snprintf(json, sizeof json, "%s", document("\"type\":\"BPE\"," MODEL_TAIL, NULL, NULL));
    char *at = strstr(json, "\"decoder\":null");
    char rest[4096];
    snprintf(rest, sizeof rest, "%s", at + strlen("\"decoder\":null"));
    snprintf(at, sizeof json - (size_t)(at - json),
             "\"decoder\":{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Fuse\"},"
             "{\"type\":\"CTC\"}]}%s",
             rest);
    refused(json, "decoder.decoders[1]: the decoder 'CTC' is not supported");
}
