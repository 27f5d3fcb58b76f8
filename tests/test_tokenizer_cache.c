/* The per-thread piece cache never changes ids: encodings opened one
 * after another (a new tokenizer may reuse a freed one's memory), texts
 * that repeat pieces (cache hits), pieces too long for the cache, two
 * threads at once — every id equals the merge of each piece on its own. */
#include <pthread.h>

#include "fixtures.h"
#include "testing.h"
#include "tokenizer/bpe_merge.h"

static const char *vocab_file(const char *name)
{
    static char path[1024];
    const char *dir = getenv("ORDO_VOCAB");
    snprintf(path, sizeof path, "%s/%s.tiktoken", dir ? dir : "build/vocab", name);
    return path;
}

/* Words that split into several tokens, repeated in a seeded order. */
static char *repeating_text(uint64_t seed, size_t words, size_t *len)
{
    static const char *const vocabulary[] = {" unbelievably",
                                             " Grundgesetzänderung",
                                             " 東京都庁舎",
                                             " Ёжиковедение",
                                             " zzzqqqxxx",
                                             " विश्वविद्यालय",
                                             " 1234567",
                                             " 'tisn't",
                                             "!!!???",
                                             " ",
                                             " pneumonoultramicroscopicsilicovolcanoconiosis",
                                             "\n\n",
                                             " مستشفيات",
                                             " a"};
    size_t n = sizeof vocabulary / sizeof vocabulary[0];
    char *text = malloc(words * 64 + 1);
    size_t at = 0;
    for (size_t i = 0; i < words; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const char *w = vocabulary[(seed >> 33) % n];
        memcpy(text + at, w, strlen(w));
        at += strlen(w);
    }
    text[at] = '\0';
    *len = at;
    return text;
}

/* The ids without the cache: the pieces' ends, each piece merged alone. */
static void uncached_ids(const ordo__bpe *bpe, const char *text, size_t len, ordo__tokens *out)
{
    ordo__tokens ends = {0};
    ordo_error err;
    ASSERT_OK(ordo__bpe_split(bpe, 1, text, len, &ends, &err), &err);
    size_t start = 0;
    for (size_t i = 0; i < ends.count; i++) {
        ASSERT_OK(ordo__bpe_merge(bpe, (const unsigned char *)text + start, ends.ids[i] - start,
                                  out, &err),
                  &err);
        start = ends.ids[i];
    }
    free(ends.ids);
}

static void assert_same_as_uncached(const ordo__bpe *bpe, uint64_t seed)
{
    size_t len;
    char *text = repeating_text(seed, 4000, &len);
    ordo__tokens cached = {0}, plain = {0};
    ordo_error err;
    ASSERT_OK(ordo__bpe_encode(bpe, text, len, &cached, &err), &err);
    uncached_ids(bpe, text, len, &plain);
    ASSERT_EQ_INT(cached.count, plain.count);
    ASSERT(memcmp(cached.ids, plain.ids, plain.count * sizeof *plain.ids) == 0);
    free(cached.ids), free(plain.ids), free(text);
}

TEST(piece_cache_never_serves_another_tokenizer)
{
    const char *names[] = {"cl100k_base", "o200k_base", "r50k_base", "cl100k_base", "llama3"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        ordo__bpe *bpe = NULL;
        ordo_error err;
        ASSERT_OK(ordo__bpe_load(vocab_file(names[i]), ordo__encoding_find(names[i]), &bpe, &err),
                  &err);
        assert_same_as_uncached(bpe, 7 + i);
        assert_same_as_uncached(bpe, 7 + i); /* now from a warm cache */
        ordo__bpe_free(bpe);
    }
}

static void *encode_in_thread(void *bpe)
{
    for (uint64_t seed = 1; seed <= 3; seed++)
        assert_same_as_uncached(bpe, seed);
    return NULL;
}

TEST(piece_cache_is_per_thread)
{
    ordo__bpe *bpe = NULL;
    ordo_error err;
    ASSERT_OK(
        ordo__bpe_load(vocab_file("o200k_base"), ordo__encoding_find("o200k_base"), &bpe, &err),
        &err);
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        ASSERT(pthread_create(&threads[i], NULL, encode_in_thread, bpe) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    ordo__bpe_free(bpe);
}
