/* The merge table (token pair to the token of their bytes put together)
 * answers exactly what the rank of the joined bytes answers, and merging
 * by ids gives tiktoken's tokens: checked against a plain reference merge
 * over byte strings, on random pieces of bytes and of letters. */
#include "fixtures.h"
#include "harness.h"
#include "tokenizer/bpe_merge.h"

static const char *vocab_file(const char *name)
{
    static char path[1024];
    const char *dir = getenv("ORDO_VOCAB");
    snprintf(path, sizeof path, "%s/%s.tiktoken", dir ? dir : "build/vocab", name);
    return path;
}

static ordo__bpe *open_encoding(const char *name)
{
    ordo__bpe *bpe = NULL;
    ordo_error err;
    ASSERT_OK(ordo__bpe_load(vocab_file(name), ordo__encoding_find(name), &bpe, &err), &err);
    return bpe;
}

static uint64_t next(uint64_t *seed)
{
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    return *seed >> 33;
}

/* The rank of token a's bytes then token b's, by the string table. */
static uint32_t joined_rank(const ordo__bpe *bpe, uint32_t a, uint32_t b)
{
    size_t la, lb;
    const unsigned char *pa = ordo__bpe_token_bytes(bpe, a, &la);
    const unsigned char *pb = ordo__bpe_token_bytes(bpe, b, &lb);
    unsigned char joined[1024];
    if (la + lb > sizeof joined)
        return UINT32_MAX;
    memcpy(joined, pa, la);
    memcpy(joined + la, pb, lb);
    return ordo__bpe_rank(bpe, joined, la + lb);
}

/* A token of the file (no hole, the first rank of its bytes). */
static uint32_t some_token(const ordo__bpe *bpe, uint64_t *seed)
{
    for (;;) {
        uint32_t r = (uint32_t)(next(seed) % ordo__bpe_count(bpe));
        size_t len;
        const unsigned char *p = ordo__bpe_token_bytes(bpe, r, &len);
        if (len && ordo__bpe_rank(bpe, p, len) == r)
            return r;
    }
}

/* Every split of every token into two tokens is in the table; random
 * pairs (mostly not merging) answer as the string table does. */
static void check_table(const char *name)
{
    ordo__bpe *bpe = open_encoding(name);
    const ordo__bpe_pairs *pairs = ordo__bpe_pairs_of(bpe);
    size_t splits = 0;
    for (uint32_t c = 0; c < ordo__bpe_count(bpe); c++) {
        size_t len;
        const unsigned char *p = ordo__bpe_token_bytes(bpe, c, &len);
        if (len < 2 || ordo__bpe_rank(bpe, p, len) != c)
            continue;
        for (size_t k = 1; k < len; k++) {
            uint32_t a = ordo__bpe_rank(bpe, p, k), b = ordo__bpe_rank(bpe, p + k, len - k);
            if (a == UINT32_MAX || b == UINT32_MAX)
                continue;
            splits++;
            if (ordo__bpe_pair(pairs, a, b) != c) {
                fprintf(stderr, "    %s: token %u split at %zu: (%u, %u) gives %u\n", name, c, k, a,
                        b, ordo__bpe_pair(pairs, a, b));
                ASSERT(0);
            }
        }
    }
    ASSERT(splits > 50000); /* the table is not empty by accident */
    uint64_t seed = 7;
    size_t merging = 0;
    for (int i = 0; i < 300000; i++) {
        uint32_t a = some_token(bpe, &seed), b = some_token(bpe, &seed);
        uint32_t want = joined_rank(bpe, a, b);
        merging += want != UINT32_MAX;
        ASSERT_EQ_INT(ordo__bpe_pair(pairs, a, b), want);
    }
    /* and pairs that do merge, from the splits of random tokens */
    for (int i = 0; i < 100000; i++) {
        uint32_t c = some_token(bpe, &seed);
        size_t len;
        const unsigned char *p = ordo__bpe_token_bytes(bpe, c, &len);
        if (len < 2)
            continue;
        size_t k = 1 + next(&seed) % (len - 1);
        uint32_t a = ordo__bpe_rank(bpe, p, k), b = ordo__bpe_rank(bpe, p + k, len - k);
        if (a != UINT32_MAX && b != UINT32_MAX) {
            merging++;
            ASSERT_EQ_INT(ordo__bpe_pair(pairs, a, b), joined_rank(bpe, a, b));
        }
    }
    ASSERT(merging > 10000);
    ordo__bpe_free(bpe);
}

TEST(bpe_merge_table_answers_as_the_rank_of_the_joined_bytes)
{
    check_table("cl100k_base");
    check_table("o200k_base");
    check_table("r50k_base");
}

/* tiktoken's merge over byte strings, plainly: the reference. */
static void reference_merge(const ordo__bpe *bpe, const unsigned char *p, size_t len,
                            ordo__tokens *out)
{
    size_t *starts = malloc((len + 1) * sizeof *starts), n = len;
    for (size_t i = 0; i <= len; i++)
        starts[i] = i;
    for (;;) {
        uint32_t best = UINT32_MAX;
        size_t at = 0;
        for (size_t i = 0; i + 1 < n; i++) {
            uint32_t r = ordo__bpe_rank(bpe, p + starts[i], starts[i + 2] - starts[i]);
            if (r < best)
                best = r, at = i;
        }
        if (best == UINT32_MAX)
            break;
        memmove(starts + at + 1, starts + at + 2, (n - at - 1) * sizeof *starts);
        n--;
    }
    ordo_error err;
    for (size_t i = 0; i < n; i++)
        ASSERT_OK(ordo__tokens_push(
                      out, ordo__bpe_rank(bpe, p + starts[i], starts[i + 1] - starts[i]), &err),
                  &err);
    free(starts);
}

/* A piece: random bytes, or random letters of a few scripts. */
static size_t random_piece(uint64_t *seed, unsigned char *p, size_t max)
{
    static const char *const letters[] = {"a", "e", "t",  "n",  " ", "é", "ü", "ж", "о",  "я",
                                          "न", "ि", "東", "京", "ا", "ل", "'", "1", "\n", "🙂"};
    size_t target = 1 + next(seed) % max, len = 0;
    int bytes = next(seed) % 4 == 0;
    while (len < target) {
        if (bytes) {
            p[len++] = (unsigned char)next(seed);
            continue;
        }
        const char *l = letters[next(seed) % (sizeof letters / sizeof letters[0])];
        size_t n = strlen(l);
        if (len + n > max)
            break;
        memcpy(p + len, l, n);
        len += n;
    }
    return len ? len : 1;
}

TEST(bpe_merge_by_ids_is_the_reference_merge)
{
    const char *names[] = {"cl100k_base", "o200k_base", "r50k_base"};
    for (size_t e = 0; e < 3; e++) {
        ordo__bpe *bpe = open_encoding(names[e]);
        uint64_t seed = 11 + e;
        unsigned char piece[300];
        for (int i = 0; i < 20000; i++) {
            size_t len = random_piece(&seed, piece, i % 50 == 0 ? sizeof piece : 40);
            ordo__tokens got = {0}, want = {0};
            ordo_error err;
            ASSERT_OK(ordo__bpe_merge(bpe, piece, len, &got, &err), &err);
            reference_merge(bpe, piece, len, &want);
            ASSERT_EQ_INT(got.count, want.count);
            ASSERT(memcmp(got.ids, want.ids, got.count * sizeof *got.ids) == 0);
            free(got.ids);
            free(want.ids);
        }
        ordo__bpe_free(bpe);
    }
}

/* Pieces at the lengths where the merge changes method (64 and 128
 * bytes), of letters that merge a lot and of random bytes. */
TEST(bpe_merge_at_the_method_boundaries_is_the_reference_merge)
{
    static const size_t lengths[] = {2, 3, 62, 63, 64, 65, 66, 127, 128, 129, 130};
    ordo__bpe *bpe = open_encoding("cl100k_base");
    uint64_t seed = 5;
    unsigned char piece[130];
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++)
        for (int i = 0; i < 300; i++) {
            size_t len = lengths[k];
            for (size_t j = 0; j < len; j++)
                piece[j] = i % 3 == 0 ? (unsigned char)next(&seed)
                                      : (unsigned char)"etaoin shrdlu"[next(&seed) % 13];
            ordo__tokens got = {0}, want = {0};
            ordo_error err;
            ASSERT_OK(ordo__bpe_merge(bpe, piece, len, &got, &err), &err);
            reference_merge(bpe, piece, len, &want);
            ASSERT_EQ_INT(got.count, want.count);
            ASSERT(memcmp(got.ids, want.ids, got.count * sizeof *got.ids) == 0);
            free(got.ids);
            free(want.ids);
        }
    ordo__bpe_free(bpe);
}
