/* Parquet's RLE / bit-packed hybrid (levels, dictionary indices,
 * booleans): the format's own example, runs of both kinds, and every way
 * the bytes can be short or wrong. */
#include "testing.h"
#include "harness.h"

TEST(parquet_rle_hybrid_decodes_the_format_example)
{
    /* parquet-format Encodings.md: 0..7 bit-packed at width 3 */
    const unsigned char in[] = {0x03, 0x88, 0xc6, 0xfa};
    uint32_t out[8];
    size_t used = 0;
    ordo_error err;
    ASSERT_OK(ordo__pq_rle_hybrid(in, sizeof in, 3, 8, out, &used, &err), &err);
    for (uint32_t i = 0; i < 8; i++)
        ASSERT_EQ_INT(out[i], i);
    ASSERT_EQ_INT(used, 4);
}

TEST(parquet_rle_hybrid_mixes_runs_and_stops_at_the_count)
{
    /* an RLE run of 5 sevens (width 3: one value byte), then 8 bit-packed
     * values of which 3 are asked for, then bytes that are not read */
    const unsigned char in[] = {5 << 1, 7, 0x03, 0x88, 0xc6, 0xfa, 0xff, 0xff};
    uint32_t out[8];
    size_t used = 0;
    ordo_error err;
    ASSERT_OK(ordo__pq_rle_hybrid(in, sizeof in, 3, 8, out, &used, &err), &err);
    const uint32_t want[] = {7, 7, 7, 7, 7, 0, 1, 2};
    for (int i = 0; i < 8; i++)
        ASSERT_EQ_INT(out[i], want[i]);
    ASSERT_EQ_INT(used, 6);
    /* width 0: every value 0, runs without value bytes */
    const unsigned char zero[] = {50 << 1};
    ASSERT_OK(ordo__pq_rle_hybrid(zero, 1, 0, 8, out, &used, &err), &err);
    ASSERT_EQ_INT(out[7], 0);
    ASSERT_EQ_INT(used, 1);
    /* width 32: four value bytes, little-endian */
    const unsigned char wide[] = {2 << 1, 0x78, 0x56, 0x34, 0x12};
    ASSERT_OK(ordo__pq_rle_hybrid(wide, sizeof wide, 32, 2, out, &used, &err), &err);
    ASSERT_EQ_INT(out[1], 0x12345678);
    /* a last bit-packed run may stop at the bytes its needed values take */
    const unsigned char cut[] = {0x03, 0x88};
    ASSERT_OK(ordo__pq_rle_hybrid(cut, sizeof cut, 3, 2, out, &used, &err), &err);
    ASSERT_EQ_INT(out[1], 1);
}

TEST(parquet_rle_hybrid_refuses_short_or_wrong_bytes)
{
    uint32_t out[16];
    size_t used = 0;
    ordo_error err;
    const unsigned char none[] = {0};
    ASSERT_STATUS(ordo__pq_rle_hybrid(none, 0, 3, 1, out, &used, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "a run header beyond the data");
    const unsigned char header[] = {0x80, 0x80};
    ASSERT_STATUS(ordo__pq_rle_hybrid(header, 2, 3, 1, out, &used, &err), ORDO_INVALID, &err);
    const unsigned char packed[] = {0x03, 0x88};
    ASSERT_STATUS(ordo__pq_rle_hybrid(packed, 2, 3, 8, out, &used, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "a bit-packed run beyond the data");
    const unsigned char value[] = {4 << 1};
    ASSERT_STATUS(ordo__pq_rle_hybrid(value, 1, 9, 4, out, &used, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "a run's value beyond the data");
    const unsigned char wide[] = {4 << 1, 9};
    ASSERT_STATUS(ordo__pq_rle_hybrid(wide, 2, 3, 4, out, &used, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "wider than its bit width");
    ASSERT_STATUS(ordo__pq_rle_hybrid(wide, 2, 33, 4, out, &used, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "bit width 33");
    /* runs that end before the count: the data ends */
    const unsigned char short_run[] = {2 << 1, 1};
    ASSERT_STATUS(ordo__pq_rle_hybrid(short_run, 2, 1, 3, out, &used, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "at its byte 2");
}

/* Text is checked as UTF-8 eight ASCII bytes at a time, one sequence at a
 * time elsewhere: a bad byte anywhere in a long ASCII run is still seen. */
TEST(parquet_text_utf8_check_takes_exactly_utf8)
{
    const char *good[] = {"", "plain ascii text, longer than eight bytes", "é✓ 日本語 𝄞",
                          "\xf4\x8f\xbf\xbf", "\xed\x9f\xbf"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        ASSERT(ordo__pq_utf8((const unsigned char *)good[i], strlen(good[i])));
    const char *bad[] = {
        "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xc3",
        "\xe2\x9c", "\x80",         "\xff"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ASSERT(!ordo__pq_utf8((const unsigned char *)bad[i], strlen(bad[i])));
    char text[64];
    for (size_t at = 0; at < 40; at++) {
        memset(text, 'a', 40);
        text[at] = (char)0xff;
        ASSERT(!ordo__pq_utf8((const unsigned char *)text, 40));
        memcpy(text + at, "\xc3\xa9", 2); /* é, its second byte past the 40 when at is 39 */
        ASSERT(ordo__pq_utf8((const unsigned char *)text, 40) == (at < 39));
    }
}
