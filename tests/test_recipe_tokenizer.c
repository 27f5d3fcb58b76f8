/* A recipe's tokenizer member: the tiktoken and huggingface kinds, bos and
 * eos (the packing policy), their place in the recipe id, and bad
 * configurations. */
#include <sys/stat.h>

#include "corpus.h"
#include "testing.h"

static const char *vocab(const char *name)
{
    static char path[1024];
    const char *dir = getenv("ORDO_VOCAB");
    snprintf(path, sizeof path, "%s/%s.tiktoken", dir ? dir : "build/vocab", name);
    return path;
}

/* A copy of an encoding's rank file as `file` in the test folder. */
static void copy_ranks(const char *encoding, const char *file)
{
    size_t size = 0;
    char *ranks = test_read_file(vocab(encoding), &size);
    ASSERT(ranks != NULL);
    test_write_file(test_path(file), ranks, size);
    free(ranks);
}

/* A recipe over the .jsonl files in data/ with the tokenizer JSON given. */
static char *recipe_with(const char *tokenizer)
{
    static const char form[] =
        "{\"seed\": 3, \"seq_len\": 32, \"global_batch\": 4, \"lanes\": 2, \"chunk_records\": 8, "
        "\"tokenizer\": %s, \"sources\": [{\"name\": \"a\", \"paths\": [\"data/*.jsonl\"], "
        "\"weight\": 1}]}";
    size_t n = sizeof form + strlen(tokenizer);
    char *text = malloc(n);
    ASSERT(text != NULL);
    snprintf(text, n, form, tokenizer);
    return text;
}

static ordo_status parse(const char *tokenizer, ordo_recipe **r, ordo_error *err)
{
    char *text = recipe_with(tokenizer);
    char root[1024];
    snprintf(root, sizeof root, "%s", test_path("."));
    ordo_status status = ordo_recipe_parse(text, strlen(text), root, 0, r, err);
    free(text);
    return status;
}

static ordo_recipe *parsed(const char *tokenizer)
{
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_OK(parse(tokenizer, &r, &err), &err);
    return r;
}

static void refused(const char *tokenizer, ordo_status status, const char *says)
{
    ordo_recipe *r = NULL;
    ordo_error err;
    ASSERT_STATUS(parse(tokenizer, &r, &err), status, &err);
    ASSERT(r == NULL);
    ASSERT_CONTAINS(err.message, says);
}

static void special(ordo_tokenizer *t, const char *content, uint32_t id)
{
    uint32_t got = 0;
    ordo_error err;
    ASSERT_OK(ordo_tokenizer_token_id(t, content, &got, &err), &err);
    ASSERT_EQ_INT((long long)got, (long long)id);
}

static void not_special(ordo_tokenizer *t, const char *content)
{
    uint32_t got = 0;
    ordo_error err;
    ASSERT_STATUS(ordo_tokenizer_token_id(t, content, &got, &err), ORDO_NOTFOUND, &err);
    ASSERT_CONTAINS(err.message, content);
    ASSERT_CONTAINS(err.message, "its special tokens: <|");
}

static ordo_tokenizer *open_encoding(const char *encoding)
{
    ordo_tokenizer *t = NULL;
    ordo_error err;
    ASSERT_OK(ordo_tokenizer_open(encoding,
                                  vocab(strcmp(encoding, "gpt2") == 0 ? "r50k_base" : encoding), &t,
                                  &err),
              &err);
    return t;
}

/* Each encoding's published special tokens (tiktoken's tables; Meta's list
 * for Llama 3), and nothing else: not another encoding's, not text. */
TEST(tokenizer_tiktoken_encodings_name_their_special_tokens)
{
    const char *gpt2_like[] = {"gpt2", "r50k_base", "p50k_base"};
    for (int i = 0; i < 3; i++) {
        ordo_tokenizer *t = open_encoding(gpt2_like[i]);
        special(t, "<|endoftext|>", 50256);
        not_special(t, "<|fim_prefix|>");
        not_special(t, "<|endofprompt|>");
        ordo_tokenizer_close(t);
    }
    ordo_tokenizer *t = open_encoding("cl100k_base");
    special(t, "<|endoftext|>", 100257);
    special(t, "<|fim_prefix|>", 100258);
    special(t, "<|fim_middle|>", 100259);
    special(t, "<|fim_suffix|>", 100260);
    special(t, "<|endofprompt|>", 100276);
    not_special(t, "<|end_of_text|>");
    not_special(t, "hello");
    not_special(t, "");
    ordo_tokenizer_close(t);
    t = open_encoding("o200k_base");
    special(t, "<|endoftext|>", 199999);
    special(t, "<|endofprompt|>", 200018);
    not_special(t, "<|fim_prefix|>");
    ordo_tokenizer_close(t);
    t = open_encoding("llama3");
    special(t, "<|begin_of_text|>", 128000);
    special(t, "<|end_of_text|>", 128001);
    special(t, "<|reserved_special_token_0|>", 128002);
    special(t, "<|reserved_special_token_3|>", 128005);
    special(t, "<|start_header_id|>", 128006);
    special(t, "<|end_header_id|>", 128007);
    special(t, "<|reserved_special_token_4|>", 128008);
    special(t, "<|eot_id|>", 128009);
    special(t, "<|reserved_special_token_5|>", 128010);
    special(t, "<|reserved_special_token_250|>", 128255);
    not_special(t, "<|reserved_special_token_251|>");
    not_special(t, "<|reserved_special_token_05|>");
    not_special(t, "<|reserved_special_token_|>");
    not_special(t, "<|reserved_special_token_1|>x");
    not_special(t, "<|endoftext|>");
    not_special(t, "<|eom_id|>");
    ordo_tokenizer_close(t);
}

static const char cl100k_canonical[] =
    "\"tokenizer\":{\"encoding\":\"cl100k_base\",\"kind\":\"tiktoken\",\"path\":"
    "\"cl100k.tiktoken\",\"sha256\":"
    "\"223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7\"}";

/* A tiktoken recipe without bos and eos is written as it always was (its
 * recipe id is unchanged); naming the encoding's own end-of-text is the same
 * policy, so the same id. */
TEST(recipe_tiktoken_without_bos_eos_keeps_its_canonical_form)
{
    corpus_jsonl("data", "doc", 1, 20, 5, 80, 21);
    copy_ranks("cl100k_base", "cl100k.tiktoken");
    ordo_recipe *plain = parsed("{\"kind\": \"tiktoken\", \"encoding\": \"cl100k_base\", "
                                "\"path\": \"cl100k.tiktoken\"}");
    ASSERT_CONTAINS(ordo_recipe_canonical(plain), cl100k_canonical);
    ordo_recipe_info info;
    ordo_recipe_describe(plain, &info);
    ASSERT_EQ_INT(info.eot_id, 100257);
    ASSERT_EQ_INT(info.pad_id, 100257);
    ASSERT_EQ_INT((long long)info.bos_id, (long long)UINT32_MAX);
    ASSERT_EQ_INT(info.vocab_size, 100277);
    ordo_recipe *same = parsed("{\"kind\": \"tiktoken\", \"encoding\": \"cl100k_base\", "
                               "\"path\": \"cl100k.tiktoken\", \"eos\": \"<|endoftext|>\", "
                               "\"bos\": null}");
    ASSERT_EQ_STR(ordo_recipe_id(same), ordo_recipe_id(plain));
    ASSERT_EQ_STR(ordo_recipe_canonical(same), ordo_recipe_canonical(plain));
    ordo_recipe_free(same);
    ordo_recipe_free(plain);
    /* Llama 3's end-of-text is <|end_of_text|>. */
    copy_ranks("llama3", "llama3.tiktoken");
    plain = parsed("{\"kind\": \"tiktoken\", \"encoding\": \"llama3\", \"path\": "
                   "\"llama3.tiktoken\"}");
    same = parsed("{\"kind\": \"tiktoken\", \"encoding\": \"llama3\", \"path\": "
                  "\"llama3.tiktoken\", \"eos\": \"<|end_of_text|>\"}");
    ASSERT_EQ_STR(ordo_recipe_id(same), ordo_recipe_id(plain));
    ordo_recipe_describe(same, &info);
    ASSERT_EQ_INT(info.eot_id, 128001);
    ordo_recipe_free(same);
    ordo_recipe_free(plain);
}

static ordo_recipe *indexed(const char *tokenizer)
{
    ordo_recipe *r = parsed(tokenizer);
    ordo_error err;
    ASSERT_OK(ordo_recipe_index(r, NULL, NULL, NULL, &err), &err);
    return r;
}

/* Every document's samples as [bos] tokens eos: a document starts with bos
 * wherever one starts, and text never produces bos or eos. */
static void check_packing(const ordo_recipe *r, uint32_t bos, uint32_t eos)
{
    ordo_loader_options o = {.world_size = 1, .read_workers = 1, .tokenize_workers = 1};
    ordo_loader *l = NULL;
    ordo_error err;
    ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
    long long starts = 0, bos_seen = 0, eos_seen = 0;
    for (int step = 0; step < 20; step++) {
        ordo_batch b;
        ASSERT_OK(ordo_loader_next(l, &b, &err), &err);
        for (int i = 0; i < b.rows * b.seq_len; i++) {
            starts += b.doc_start[i];
            bos_seen += b.tokens[i] == bos;
            eos_seen += b.tokens[i] == eos;
            if (b.doc_start[i])
                ASSERT_EQ_INT(b.tokens[i], bos);
            else
                ASSERT(b.tokens[i] != bos);
            if (b.tokens[i] == eos && i % b.seq_len + 1 < b.seq_len && b.doc_start[i + 1] == 0)
                ASSERT_EQ_INT(b.tokens[i + 1], eos); /* only padding follows in the sample */
        }
    }
    ASSERT(starts > 20);
    ASSERT_EQ_INT(bos_seen, starts);
    ASSERT(eos_seen >= bos_seen - 20 * 4); /* a document cut at a sample's end loses its eos */
    ordo_loader_close(l);
}

/* bos and eos are the recipe's policy: in its id, in every document's
 * packing, and in the token estimates (each document adds both). */
TEST(recipe_bos_eos_are_packed_and_counted)
{
    corpus_jsonl("data", "doc", 2, 40, 5, 120, 22);
    copy_ranks("cl100k_base", "cl100k.tiktoken");
    ordo_recipe *plain = indexed("{\"kind\": \"tiktoken\", \"encoding\": \"cl100k_base\", "
                                 "\"path\": \"cl100k.tiktoken\"}");
    ordo_recipe *both = indexed("{\"kind\": \"tiktoken\", \"encoding\": \"cl100k_base\", "
                                "\"path\": \"cl100k.tiktoken\", \"bos\": \"<|endofprompt|>\", "
                                "\"eos\": \"<|fim_suffix|>\"}");
    ASSERT(strcmp(ordo_recipe_id(plain), ordo_recipe_id(both)) != 0);
    ASSERT_CONTAINS(ordo_recipe_canonical(both), "\"bos\":\"<|endofprompt|>\"");
    ASSERT_CONTAINS(ordo_recipe_canonical(both), "\"eos\":\"<|fim_suffix|>\"");
    ordo_recipe_info info;
    ordo_recipe_describe(both, &info);
    ASSERT_EQ_INT(info.bos_id, 100276);
    ASSERT_EQ_INT(info.eot_id, 100260);
    ASSERT_EQ_INT(info.pad_id, 100260);
    /* The same sample, one more token per document. */
    const ordo__source *a = &plain->sources[0], *b = &both->sources[0];
    ASSERT_EQ_INT(a->sample_records, b->sample_records);
    ASSERT_EQ_INT(a->sample_bytes, b->sample_bytes);
    ASSERT_EQ_INT(b->sample_tokens, a->sample_tokens + a->sample_records);
    ordo_source_plan pa, pb;
    ordo_error err;
    ASSERT_OK(ordo_recipe_passes(plain, 100, &pa, &err), &err);
    ASSERT_OK(ordo_recipe_passes(both, 100, &pb, &err), &err);
    ASSERT_EQ_INT(pb.tokens_per_pass, pa.tokens_per_pass + pa.documents);
    ASSERT(pa.tokens_per_byte == pb.tokens_per_byte);
    check_packing(both, 100276, 100260);
    ordo_recipe_free(both);
    ordo_recipe_free(plain);
}

/* Each bad tokenizer member is refused, naming what is wrong. */
TEST(recipe_tokenizer_bad_configs_are_refused)
{
    corpus_jsonl("data", "doc", 1, 10, 5, 40, 23);
    copy_ranks("cl100k_base", "cl100k.tiktoken");
    test_write_file(test_path("tokenizer.json"), "{}", 2);
    mkdir(test_path("folder.json"), 0700);
#define TIK "{\"kind\": \"tiktoken\", \"encoding\": \"cl100k_base\", \"path\": \"cl100k.tiktoken\""
#define HF "{\"kind\": \"huggingface\", \"path\": \"tokenizer.json\""
    refused(HF "}", ORDO_INVALID, "needs 'eos'");
    refused(HF "}", ORDO_INVALID, "<|im_end|>");
    refused(HF ", \"bos\": \"<s>\"}", ORDO_INVALID, "no default is safe");
    refused(HF ", \"eos\": null}", ORDO_INVALID, "'eos' must be a token's text");
    refused(HF ", \"eos\": 2}", ORDO_INVALID, "'eos' must be a token's text");
    refused(HF ", \"eos\": \"\"}", ORDO_INVALID, "'eos' must be a token's text");
    refused(HF ", \"eos\": \"</s>\", \"bos\": true}", ORDO_INVALID,
            "'bos' must be a token's text (a non-empty string) or null");
    refused(HF ", \"eos\": \"</s>\", \"encoding\": \"cl100k_base\"}", ORDO_INVALID,
            "huggingface tokenizer takes no 'encoding'");
    refused(HF ", \"eos\": \"</s>\", \"pad\": \"</s>\"}", ORDO_INVALID,
            "unknown key 'pad' in tokenizer (a huggingface tokenizer takes kind, path, sha256, "
            "bos and eos)");
    refused(HF ", \"eos\": \"</s>\", \"sha256\": 5}", ORDO_INVALID, "'sha256' must be a string");
    refused(HF ", \"eos\": \"</s>\", \"sha256\": \"00\"}", ORDO_CONFLICT,
            "is not the one the recipe names");
    refused("{\"kind\": \"huggingface\", \"path\": 3, \"eos\": \"</s>\"}", ORDO_INVALID,
            "tokenizer 'path' (the Hugging Face tokenizer file) must be a non-empty string");
    refused("{\"kind\": \"huggingface\", \"eos\": \"</s>\"}", ORDO_INVALID, "tokenizer 'path'");
    refused("{\"kind\": \"huggingface\", \"path\": \"folder.json\", \"eos\": \"</s>\"}",
            ORDO_INVALID, "tokenizer.json");
    refused("{\"kind\": \"huggingface\", \"path\": \"folder.json\", \"eos\": \"</s>\"}",
            ORDO_INVALID,
            "folder.json' (the Hugging Face tokenizer file its tokenizer 'path' "
            "names) is not a file");
    refused("{\"kind\": \"huggingface\", \"path\": \"none.json\", \"eos\": \"</s>\"}", ORDO_IO,
            "cannot open the tokenizer.json");
    refused(TIK ", \"bos\": \"<s>\"}", ORDO_INVALID,
            "tokenizer bos '<s>' is not a special token of cl100k_base (its special tokens: "
            "<|endoftext|>, <|fim_prefix|>");
    refused(TIK ", \"eos\": \"<|end_of_text|>\"}", ORDO_INVALID,
            "tokenizer eos '<|end_of_text|>' is not a special token of cl100k_base");
    refused(TIK ", \"eos\": [\"<|endoftext|>\"]}", ORDO_INVALID, "'eos' must be");
    refused(TIK ", \"vocab\": 1}", ORDO_INVALID,
            "unknown key 'vocab' in tokenizer (a tiktoken tokenizer takes kind, encoding, path, "
            "sha256, bos and eos)");
    refused("{\"kind\": \"tiktoken\", \"encoding\": \"cl100k_base\", \"path\": \"folder.json\"}",
            ORDO_INVALID, "tokenizer rank file");
    refused("{\"kind\": \"sentencepiece\"}", ORDO_INVALID,
            "supported: bytes, tiktoken, huggingface");
    refused("{\"kind\": \"bytes\", \"eos\": \"x\"}", ORDO_INVALID, "takes no settings");
#undef TIK
#undef HF
}

/* A tokenizer.json small enough to reason about: "abcab" is abc ab, ids 4 2;
 * <s> and </s> are its special added tokens 5 and 6. */
static const char tiny_json[] =
    "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null, \"added_tokens\": ["
    "{\"id\": 5, \"content\": \"<s>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": "
    "false, \"normalized\": false, \"special\": true},"
    "{\"id\": 6, \"content\": \"</s>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": "
    "false, \"normalized\": false, \"special\": true}],"
    "\"normalizer\": null, \"pre_tokenizer\": null, \"post_processor\": null, \"decoder\": null,"
    "\"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, "
    "\"continuing_subword_prefix\": null, \"end_of_word_suffix\": null, \"fuse_unk\": false, "
    "\"byte_fallback\": false, \"ignore_merges\": false, "
    "\"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2, \"c\": 3, \"abc\": 4}, "
    "\"merges\": [[\"a\", \"b\"], [\"ab\", \"c\"]]}}";

static void write_tiny(void)
{
    test_write_file(test_path("tokenizer.json"), tiny_json, strlen(tiny_json));
    mkdir(test_path("data"), 0700);
    FILE *f = fopen(test_path("data/doc-0.jsonl"), "w");
    ASSERT(f != NULL);
    for (int i = 0; i < 40; i++)
        fprintf(f, "{\"text\": \"abcab\"}\n");
    fclose(f);
}

/* Every sample of the tiny corpus: documents "abcab" as <s> abc ab </s>. */
static void check_tiny_samples(const ordo_recipe *r)
{
    static const uint32_t doc[] = {5, 4, 2, 6};
    ordo_loader_options o = {.world_size = 2, .read_workers = 1, .tokenize_workers = 1};
    for (int rank = 0; rank < 2; rank++) {
        ordo_loader *l = NULL;
        ordo_error err;
        o.rank = rank;
        ASSERT_OK(ordo_loader_open(r, &o, &l, &err), &err);
        for (int step = 0; step < 12; step++) {
            ordo_batch b;
            ASSERT_OK(ordo_loader_next(l, &b, &err), &err);
            for (int i = 0; i < b.rows * b.seq_len; i++) {
                ASSERT_EQ_INT(b.tokens[i], doc[i % 4]);
                ASSERT_EQ_INT(b.doc_start[i], i % 4 == 0);
            }
        }
        ordo_loader_close(l);
    }
}

/* A tokenizer.json recipe: its bos and eos are tokens of the file, in the
 * recipe id with the file's SHA-256; documents packed as <s> ids </s>;
 * estimates count both. */
TEST(recipe_huggingface_tokenizer_packs_bos_and_eos)
{
    write_tiny();
    unsigned char digest[ORDO_DIGEST_SIZE];
    char hex[ORDO_DIGEST_HEX_SIZE], canonical[512], pinned[512];
    ordo_sha256(tiny_json, strlen(tiny_json), digest);
    ordo_digest_to_hex(digest, hex);
#define HF "{\"kind\": \"huggingface\", \"path\": \"tokenizer.json\""
    ordo_recipe *r = indexed(HF ", \"bos\": \"<s>\", \"eos\": \"</s>\"}");
    snprintf(canonical, sizeof canonical,
             "\"tokenizer\":{\"bos\":\"<s>\",\"eos\":\"</s>\",\"kind\":\"huggingface\",\"path\":"
             "\"tokenizer.json\",\"sha256\":\"%s\"}",
             hex);
    ASSERT_CONTAINS(ordo_recipe_canonical(r), canonical);
    ordo_recipe_info info;
    ordo_recipe_describe(r, &info);
    ASSERT_EQ_INT(info.vocab_size, 7);
    ASSERT_EQ_INT(info.bos_id, 5);
    ASSERT_EQ_INT(info.eot_id, 6);
    ASSERT_EQ_INT(info.pad_id, 6);
    const ordo__source *src = &r->sources[0];
    ASSERT_EQ_INT(src->sample_tokens, 4 * src->sample_records);
    ordo_source_plan plan;
    ordo_error err;
    ASSERT_OK(ordo_recipe_passes(r, 10, &plan, &err), &err);
    ASSERT_EQ_INT(plan.tokens_per_pass, 4 * 40);
    check_tiny_samples(r);
    /* The file pinned by its own SHA-256 is the same recipe. */
    snprintf(pinned, sizeof pinned, HF ", \"bos\": \"<s>\", \"eos\": \"</s>\", \"sha256\": \"%s\"}",
             hex);
    ordo_recipe *same = parsed(pinned);
    ASSERT_EQ_STR(ordo_recipe_id(same), ordo_recipe_id(r));
    ordo_recipe_free(same);
    /* Without bos, another recipe; any token of the file may be the eos. */
    ordo_recipe *no_bos = parsed(HF ", \"eos\": \"ab\", \"bos\": null}");
    ASSERT(strcmp(ordo_recipe_id(no_bos), ordo_recipe_id(r)) != 0);
    ordo_recipe_describe(no_bos, &info);
    ASSERT_EQ_INT((long long)info.bos_id, (long long)UINT32_MAX);
    ASSERT_EQ_INT(info.eot_id, 2);
    ordo_recipe_free(no_bos);
    refused(HF ", \"bos\": \"<unk>\", \"eos\": \"</s>\"}", ORDO_INVALID,
            "tokenizer bos '<unk>' is not a token of tokenizer.json 'tokenizer.json'");
    refused(HF ", \"eos\": \"<|endoftext|>\"}", ORDO_INVALID,
            "tokenizer eos '<|endoftext|>' is not a token of tokenizer.json 'tokenizer.json'");
    /* Another file under the pinned recipe is refused; unpinned, it is
     * another recipe. */
    test_write_file(test_path("tokenizer.json"), tiny_json, strlen(tiny_json) - 1);
    refused(pinned, ORDO_CONFLICT, "is not the one the recipe names");
    ordo_recipe_free(r);
#undef HF
}

/* Llama 3.1's tokenizer.json and the llama3 encoding are one tokenizer: the
 * same recipe under either kind, with the same bos and eos, gives the same
 * token estimates and the same samples, with any number of workers. */
TEST(recipe_llama3_tokenizer_json_packs_as_the_llama3_encoding)
{
    corpus_jsonl("data", "doc", 2, 40, 20, 400, 31);
    copy_ranks("llama3", "llama3.tiktoken");
    const char *dir = getenv("ORDO_VOCAB");
    char source[1024];
    snprintf(source, sizeof source, "%s/llama3_1.json", dir ? dir : "build/vocab");
    size_t size = 0;
    char *file = test_read_file(source, &size);
    ASSERT(file != NULL);
    test_write_file(test_path("llama3_1.json"), file, size);
    free(file);
    const char *json = "{\"kind\": \"huggingface\", \"path\": \"llama3_1.json\", \"bos\": "
                       "\"<|begin_of_text|>\", \"eos\": \"<|end_of_text|>\"}";
    ordo_recipe *hf = indexed(json);
    ordo_recipe *tk = indexed("{\"kind\": \"tiktoken\", \"encoding\": \"llama3\", \"path\": "
                              "\"llama3.tiktoken\", \"bos\": \"<|begin_of_text|>\"}");
    ASSERT_EQ_INT(hf->sources[0].sample_tokens, tk->sources[0].sample_tokens);
    ordo_loader_options o = {.world_size = 1, .read_workers = 1, .tokenize_workers = 1};
    ordo_loader_options many = {.world_size = 1, .read_workers = 2, .tokenize_workers = 2};
    ordo_loader *a = NULL, *b = NULL, *c = NULL;
    ordo_error err;
    ASSERT_OK(ordo_loader_open(hf, &o, &a, &err), &err);
    ASSERT_OK(ordo_loader_open(tk, &o, &b, &err), &err);
    ASSERT_OK(ordo_loader_open(hf, &many, &c, &err), &err);
    int bos = 0;
    for (int step = 0; step < 10; step++) {
        ordo_batch x, y, z;
        ASSERT_OK(ordo_loader_next(a, &x, &err), &err);
        ASSERT_OK(ordo_loader_next(b, &y, &err), &err);
        ASSERT_OK(ordo_loader_next(c, &z, &err), &err);
        size_t n = (size_t)x.rows * (size_t)x.seq_len;
        ASSERT_EQ_INT(x.rows, y.rows);
        ASSERT(memcmp(x.tokens, y.tokens, n * sizeof *x.tokens) == 0);
        ASSERT(memcmp(x.doc_start, y.doc_start, n) == 0);
        ASSERT(memcmp(x.tokens, z.tokens, n * sizeof *x.tokens) == 0);
        for (size_t i = 0; i < n; i++)
            bos += x.tokens[i] == 128000;
    }
    ASSERT(bos > 10);
    ordo_loader_close(a);
    ordo_loader_close(b);
    ordo_loader_close(c);
    ordo_recipe_free(hf);
    ordo_recipe_free(tk);
}

/* Recipes naming rank files of the same bytes share one tokenizer, opened
 * once (a service opening a recipe per request loads its encoding once);
 * closing one recipe leaves the other's working; other bytes or another
 * encoding is another tokenizer. */
TEST(recipe_tokenizers_of_the_same_file_are_shared)
{
    corpus_jsonl("data", "doc", 1, 20, 20, 200, 5);
    copy_ranks("r50k_base", "r50k.tiktoken");
    copy_ranks("r50k_base", "again.tiktoken");
    copy_ranks("p50k_base", "p50k.tiktoken");
#define TIK(enc, file) "{\"kind\": \"tiktoken\", \"encoding\": \"" enc "\", \"path\": \"" file "\"}"
    ordo_recipe *a = parsed(TIK("r50k_base", "r50k.tiktoken"));
    ordo_recipe *b = parsed(TIK("r50k_base", "again.tiktoken"));
    ordo_recipe *c = parsed(TIK("p50k_base", "p50k.tiktoken"));
    ASSERT(a->tokenizer == b->tokenizer);
    ASSERT(a->tokenizer != c->tokenizer);
    ordo_recipe_free(a);
    ordo_tokenizer *own = NULL;
    ordo_error err;
    ASSERT_OK(ordo_tokenizer_open("r50k_base", test_path("r50k.tiktoken"), &own, &err), &err);
    static const char text[] = "Shared tokenizers, caf\xc3\xa9 \xce\xbb 12345 - the same ids.";
    uint32_t *want = NULL, *got = NULL;
    size_t want_n = 0, got_n = 0;
    ASSERT_OK(ordo_tokenizer_encode(own, text, sizeof text - 1, &want, &want_n, &err), &err);
    ASSERT_OK(ordo_tokenizer_encode(b->tokenizer, text, sizeof text - 1, &got, &got_n, &err), &err);
    ASSERT_EQ_INT(got_n, want_n);
    ASSERT(memcmp(got, want, want_n * sizeof *want) == 0);
    free(want);
    free(got);
    ordo_tokenizer_close(own);
    ordo_recipe_free(b);
    ordo_recipe_free(c);
#undef TIK
}

/* A shared tokenizer of the file at `file`, opened under its digest. */
static ordo_tokenizer *shared_open(const char *encoding, const char *file)
{
    unsigned char digest[ORDO_DIGEST_SIZE];
    uint64_t size = 0;
    ordo_tokenizer *t = NULL;
    ordo_error err;
    ASSERT_OK(ordo__sha256_file(test_path(file), digest, &size, &err), &err);
    ASSERT_OK(ordo__tokenizer_open_shared(encoding, test_path(file), digest, &t, &err), &err);
    return t;
}

/* Four tokenizers are kept, the least recently used one dropped for a
 * fifth while its holders keep using it; a file whose bytes do not have
 * the digest given is refused and not kept. */
TEST(shared_tokenizers_keep_four_and_refuse_a_file_that_differs)
{
    static const char *const encodings[] = {"r50k_base", "p50k_base", "cl100k_base", "o200k_base",
                                            "llama3"};
    ordo_tokenizer *t[5];
    for (int i = 0; i < 5; i++) {
        char file[64];
        snprintf(file, sizeof file, "%s.tiktoken", encodings[i]);
        copy_ranks(encodings[i], file);
        if (i < 4)
            t[i] = shared_open(encodings[i], file);
    }
    ordo_tokenizer *again = shared_open("r50k_base", "r50k_base.tiktoken");
    ASSERT(again == t[0]);                           /* kept, and now the most recently used */
    t[4] = shared_open("llama3", "llama3.tiktoken"); /* drops p50k_base, the least recent */
    ordo_tokenizer *p50k = shared_open("p50k_base", "p50k_base.tiktoken");
    ASSERT(p50k != t[1]); /* t[1] is still held, so this is another one */
    ordo_tokenizer *r50k = shared_open("r50k_base", "r50k_base.tiktoken");
    ASSERT(r50k == t[0]);
    uint32_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    ordo_error err;
    ASSERT_OK(ordo_tokenizer_encode(t[1], "kept in use", 11, &a, &na, &err), &err);
    ASSERT_OK(ordo_tokenizer_encode(p50k, "kept in use", 11, &b, &nb, &err), &err);
    ASSERT(na == nb && memcmp(a, b, na * sizeof *a) == 0);
    free(a);
    free(b);
    unsigned char other[ORDO_DIGEST_SIZE] = {0};
    ordo_tokenizer *refused = NULL;
    ASSERT_EQ_INT(ordo__tokenizer_open_shared("r50k_base", test_path("p50k_base.tiktoken"), other,
                                              &refused, &err),
                  ORDO_INVALID); /* p50k's ranks are not r50k_base's count */
    copy_ranks("r50k_base", "changed.tiktoken");
    ASSERT_EQ_INT(ordo__tokenizer_open_shared("r50k_base", test_path("changed.tiktoken"), other,
                                              &refused, &err),
                  ORDO_CONFLICT);
    ASSERT_CONTAINS(err.message, "changed.tiktoken' changed while it was opened");
    ASSERT(refused == NULL);
    for (int i = 0; i < 5; i++)
        ordo_tokenizer_close(t[i]);
    ordo_tokenizer_close(again);
    ordo_tokenizer_close(p50k);
    ordo_tokenizer_close(r50k);
}
