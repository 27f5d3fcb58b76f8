/* Base64 as checkpoint states and rank files carry it (core/base64.c). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ordo.h"

/* Decoded length of `text`, or -1 when refused (the refusal names the length). */
static long decoded(const char *text)
{
    unsigned char *out = NULL;
    size_t size = 0;
    ordo_error err;
    ordo_status status = ordo_base64_decode(text, strlen(text), &out, &size, &err);
    if (status != ORDO_OK) {
        ASSERT(out == NULL && size == 0);
        ASSERT_EQ_INT(status, ORDO_INVALID);
        ASSERT_CONTAINS(err.message, "not padded base64");
        return -1;
    }
    ordo_free(out);
    return (long)size;
}

TEST(base64_decodes_padded_text_and_refuses_anything_else)
{
    ASSERT_EQ_INT(decoded("AAAA"), 3);
    ASSERT_EQ_INT(decoded("AAA="), 2);
    ASSERT_EQ_INT(decoded("AA=="), 1);
    ASSERT_EQ_INT(decoded("b3Jkbw=="), 4);
    unsigned char *out = NULL;
    size_t size = 0;
    ordo_error err;
    ASSERT_OK(ordo_base64_decode("b3Jkbw==", 8, &out, &size, &err), &err);
    ASSERT(size == 4 && memcmp(out, "ordo", 4) == 0);
    ordo_free(out);
    /* OpenSSL's block decoder alone would take these, some as other bytes */
    ASSERT_EQ_INT(decoded("AAA=----"), -1);
    ASSERT_EQ_INT(decoded("AAAA----"), -1);
    ASSERT_EQ_INT(decoded(" AAAAAA "), -1);
    ASSERT_EQ_INT(decoded("AAAA\n"), -1);
    /* padding only at the end, at most two, lengths of 4k */
    ASSERT_EQ_INT(decoded("A==="), -1);
    ASSERT_EQ_INT(decoded("AA=A"), -1);
    ASSERT_EQ_INT(decoded("AAAAA"), -1);
    ASSERT_EQ_INT(decoded("AA*A"), -1);
    ASSERT_EQ_INT(decoded(""), -1);
    ASSERT_STATUS(ordo_base64_decode(NULL, 4, &out, &size, &err), ORDO_INVALID, &err);
}
