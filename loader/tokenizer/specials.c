/* The special tokens each tiktoken-compatible encoding publishes, by name
 * and id: OpenAI's from tiktoken's own tables (tiktoken_ext/openai_public),
 * Llama 3's as Meta's reference tokenizer lists them (docs/tokenizer.md,
 * "Special tokens, bos and eos"). A recipe names its bos and eos by them;
 * ordinary text never produces one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"

typedef struct special {
    const char *content;
    uint32_t id;
} special;

static const special gpt2_specials[] = {{"<|endoftext|>", 50256}, {NULL, 0}};

static const special cl100k_specials[] = {{"<|endoftext|>", 100257},   {"<|fim_prefix|>", 100258},
                                          {"<|fim_middle|>", 100259},  {"<|fim_suffix|>", 100260},
                                          {"<|endofprompt|>", 100276}, {NULL, 0}};

static const special o200k_specials[] = {
    {"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}, {NULL, 0}};

/* Llama 3's named tokens; the other ids of 128000..128255 are
 * <|reserved_special_token_N|> (see llama3_reserved). */
static const special llama3_specials[] = {
    {"<|begin_of_text|>", 128000}, {"<|end_of_text|>", 128001}, {"<|start_header_id|>", 128006},
    {"<|end_header_id|>", 128007}, {"<|eot_id|>", 128009},      {NULL, 0}};

#define LLAMA3_FIRST 128000u
#define LLAMA3_RESERVED_LAST 250u

static const special *specials_of(const ordo__encoding *e)
{
    if (strcmp(e->name, "cl100k_base") == 0)
        return cl100k_specials;
    if (strcmp(e->name, "o200k_base") == 0)
        return o200k_specials;
    if (strcmp(e->name, "llama3") == 0)
        return llama3_specials;
    return gpt2_specials; /* gpt2, r50k_base, p50k_base */
}

/* The id of <|reserved_special_token_N|>: 0-3 at 128002-128005, 4 at
 * 128008, 5-250 from 128010 on. */
static int llama3_reserved(const char *content, uint32_t *id)
{
    static const char prefix[] = "<|reserved_special_token_";
    size_t p = sizeof prefix - 1;
    if (strncmp(content, prefix, p) != 0)
        return 0;
    const char *digits = content + p;
    size_t n = strspn(digits, "0123456789");
    if (n == 0 || n > 3 || (n > 1 && digits[0] == '0') || strcmp(digits + n, "|>") != 0)
        return 0;
    unsigned long k = strtoul(digits, NULL, 10);
    if (k > LLAMA3_RESERVED_LAST)
        return 0;
    *id = k <= 3   ? LLAMA3_FIRST + 2 + (uint32_t)k
          : k == 4 ? LLAMA3_FIRST + 8
                   : LLAMA3_FIRST + 10 + (uint32_t)(k - 5);
    return 1;
}

/* 1 and the id of the encoding's special token `content`, or 0. */
int ordo__encoding_special(const ordo__encoding *e, const char *content, uint32_t *id)
{
    if (!content)
        return 0;
    for (const special *s = specials_of(e); s->content; s++)
        if (strcmp(s->content, content) == 0) {
            *id = s->id;
            return 1;
        }
    return strcmp(e->name, "llama3") == 0 && llama3_reserved(content, id);
}

/* The name of the encoding's end-of-text token (the default eos). */
const char *ordo__encoding_eot_name(const ordo__encoding *e)
{
    return strcmp(e->name, "llama3") == 0 ? "<|end_of_text|>" : "<|endoftext|>";
}

/* The special tokens' names as text for messages, into `buffer` (always
 * NUL-terminated; truncated when small); returns the length it needed. */
size_t ordo__encoding_specials(const ordo__encoding *e, char *buffer, size_t size)
{
    size_t used = 0;
    int first = 1;
    for (const special *s = specials_of(e); s->content; s++, first = 0) {
        int n = snprintf(buffer + (used < size ? used : size), used < size ? size - used : 0,
                         "%s%s", first ? "" : ", ", s->content);
        used += n > 0 ? (size_t)n : 0;
    }
    if (strcmp(e->name, "llama3") == 0) {
        int n = snprintf(buffer + (used < size ? used : size), used < size ? size - used : 0,
                         ", <|reserved_special_token_0|> to <|reserved_special_token_%u|>",
                         LLAMA3_RESERVED_LAST);
        used += n > 0 ? (size_t)n : 0;
    }
    if (size && used >= size)
        buffer[size - 1] = '\0';
    return used;
}
