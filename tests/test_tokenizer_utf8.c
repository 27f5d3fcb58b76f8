/* UTF-8 repair (every maximal ill-formed subpart becomes U+FFFD) checked
 * against a reference written from Unicode's table 3-7 alone: every
 * string of one to three bytes, with ASCII around it so that the
 * eight-byte ASCII step meets it at every offset, and random strings of
 * four-byte leads, continuation bytes and ASCII. */
#include "harness.h"
#include "tokenizer/tokenizer.h"

/* Table 3-7: the byte ranges of each well-formed sequence. */
static const unsigned char rows[][9] = {
    /* length, then low and high of each byte */
    {1, 0x00, 0x7F},
    {2, 0xC2, 0xDF, 0x80, 0xBF},
    {3, 0xE0, 0xE0, 0xA0, 0xBF, 0x80, 0xBF},
    {3, 0xE1, 0xEC, 0x80, 0xBF, 0x80, 0xBF},
    {3, 0xED, 0xED, 0x80, 0x9F, 0x80, 0xBF},
    {3, 0xEE, 0xEF, 0x80, 0xBF, 0x80, 0xBF},
    {4, 0xF0, 0xF0, 0x90, 0xBF, 0x80, 0xBF, 0x80, 0xBF},
    {4, 0xF1, 0xF3, 0x80, 0xBF, 0x80, 0xBF, 0x80, 0xBF},
    {4, 0xF4, 0xF4, 0x80, 0x8F, 0x80, 0xBF, 0x80, 0xBF},
};

/* Whether p[0..k) is the start of row r. */
static int starts_row(const unsigned char *p, size_t k, size_t r)
{
    if (k > rows[r][0])
        return 0;
    for (size_t j = 0; j < k; j++)
        if (p[j] < rows[r][1 + 2 * j] || p[j] > rows[r][2 + 2 * j])
            return 0;
    return 1;
}

/* The reference: at each position the longest start of a row that the
 * text holds; a whole row is copied, anything else is one U+FFFD for the
 * bytes of that start (at least one). */
static size_t reference(const unsigned char *p, size_t n, unsigned char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t longest = 0, whole = 0;
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
            for (size_t k = 1; k <= rows[r][0] && i + k <= n && starts_row(p + i, k, r); k++) {
                if (k > longest)
                    longest = k;
                if (k == rows[r][0])
                    whole = k;
            }
        if (whole) {
            memcpy(out + o, p + i, whole);
            o += whole;
            i += whole;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i += longest ? longest : 1;
        }
    }
    return o;
}

/* ordo__utf8_repair gives the reference's bytes for p[0..n); returns 1. */
static int same_as_reference(const unsigned char *p, size_t n)
{
    unsigned char expected[3 * 64];
    size_t expected_len = reference(p, n, expected);
    char *copy = NULL;
    size_t copy_len = 0;
    ordo_error err;
    if (ordo__utf8_repair((const char *)p, n, &copy, &copy_len, &err) != ORDO_OK)
        return 0;
    int same = copy ? copy_len == expected_len && memcmp(copy, expected, copy_len) == 0
                    : expected_len == n && memcmp(p, expected, n) == 0;
    free(copy);
    return same;
}

TEST(utf8_repair_matches_table_3_7_for_every_short_string)
{
    unsigned char text[32];
    size_t wrong = 0, checked = 0;
    for (uint32_t v = 0; v < (1u << 24); v++) {
        unsigned char b[3] = {(unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v};
        if (b[0] < 0xC0 && (v & 0xFFFF) != 0x4142 && (v & 0xFFFF) != 0x80BF)
            continue; /* ASCII and continuation bytes never lead: a sample is enough */
        for (size_t len = 1; len <= 3; len++) {
            if (len < 3 && (v & ((1u << (8 * (3 - len))) - 1)) != 0)
                continue;           /* each shorter string once */
            size_t before = v % 11; /* ASCII before it: any offset in a word of eight */
            memset(text, 'a', before);
            memcpy(text + before, b, len);
            memcpy(text + before + len, "zzzzzzzzz", 9);
            checked++;
            if (!same_as_reference(text, before + len + (v % 3 == 0 ? 0 : 9)))
                wrong++;
        }
    }
    ASSERT(checked > 4000000);
    ASSERT_EQ_INT(wrong, 0);
}

TEST(utf8_repair_matches_table_3_7_for_random_strings)
{
    static const unsigned char pool[] = {0x00, 'a',  0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF,
                                         0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE,
                                         0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
    uint64_t seed = 0x5eed;
    unsigned char text[64];
    size_t wrong = 0;
    for (int round = 0; round < 300000; round++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t n = (size_t)(seed >> 58) + 1; /* 1..64 bytes */
        for (size_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            text[i] = pool[(seed >> 33) % sizeof pool];
        }
        if (!same_as_reference(text, n))
            wrong++;
    }
    ASSERT_EQ_INT(wrong, 0);
}
