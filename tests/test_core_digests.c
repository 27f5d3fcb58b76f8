/* Digests: hex forms, SHA-256, batch digests of lane digests. */
#include "fixtures.h"

TEST(digest_hex_round_trip_and_sha256_vector)
{
    unsigned char digest[ORDO_DIGEST_SIZE], back[ORDO_DIGEST_SIZE];
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_sha256("", 0, digest);
    ordo_digest_to_hex(digest, hex);
    ASSERT_EQ_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ordo_error err;
    ASSERT_OK(ordo_digest_from_hex(
                  "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855", back, &err),
              &err);
    ASSERT(memcmp(digest, back, ORDO_DIGEST_SIZE) == 0);
}

TEST(digest_hex_refuses_wrong_length_and_characters)
{
    unsigned char digest[ORDO_DIGEST_SIZE];
    ordo_error err;
    ASSERT_STATUS(ordo_digest_from_hex("abc", digest, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "got 3");
    ASSERT_STATUS(ordo_digest_from_hex("", digest, &err), ORDO_INVALID, &err);
    char long_hex[80];
    memset(long_hex, 'a', 65);
    long_hex[65] = '\0';
    ASSERT_STATUS(ordo_digest_from_hex(long_hex, digest, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "more than 64");
    char bad[65];
    memset(bad, '0', 64);
    bad[64] = '\0';
    bad[17] = 'g';
    ASSERT_STATUS(ordo_digest_from_hex(bad, digest, &err), ORDO_INVALID, &err);
    ASSERT_CONTAINS(err.message, "offset 17");
    ASSERT_STATUS(ordo_digest_from_hex(NULL, digest, &err), ORDO_INVALID, &err);
}

TEST(batch_digest_is_sha256_of_lane_digests)
{
    unsigned char lanes[2 * ORDO_DIGEST_SIZE], batch[ORDO_DIGEST_SIZE];
    ordo_sha256("a", 1, lanes);
    ordo_sha256("b", 1, lanes + ORDO_DIGEST_SIZE);
    ordo_batch_digest(lanes, 2, batch);
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(batch, hex);
    ASSERT_EQ_STR(hex, "e5a01fee14e0ed5c48714f22180f25ad8365b53f9779f79dc4a3d7e93963f94a");
}
