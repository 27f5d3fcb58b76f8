/* Seeded deterministic random numbers: SHA-256 in counter mode. */
#include <string.h>

#include "core.h"

static void put_u64(unsigned char *out, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        out[i] = (unsigned char)(v >> (8 * i));
}

/* Key = SHA-256(seed || a || b || purpose), all integers little-endian. */
void ordo__rng_seed(ordo__rng *rng, uint64_t seed, const char *purpose, uint64_t a, uint64_t b)
{
    unsigned char material[24 + 64];
    size_t n = strlen(purpose);
    if (n > 64)
        n = 64;
    put_u64(material, seed);
    put_u64(material + 8, a);
    put_u64(material + 16, b);
    memcpy(material + 24, purpose, n);
    ordo_sha256(material, 24 + n, rng->key);
    rng->counter = 0;
    rng->used = 32;
}

/* Next 64 bits: block i = SHA-256(key || i). */
uint64_t ordo__rng_next(ordo__rng *rng)
{
    if (rng->used + 8 > 32) {
        unsigned char input[40];
        memcpy(input, rng->key, 32);
        put_u64(input + 32, rng->counter++);
        ordo_sha256(input, sizeof input, rng->block);
        rng->used = 0;
    }
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | rng->block[rng->used + i];
    rng->used += 8;
    return v;
}

/* Rejection sampling: draws below the largest multiple of n. */
uint64_t ordo__rng_below(ordo__rng *rng, uint64_t n)
{
    if (n <= 1)
        return 0;
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t v;
    do
        v = ordo__rng_next(rng);
    while (v >= limit);
    return v % n;
}

/* Fisher–Yates from the end. */
void ordo__rng_permute(ordo__rng *rng, uint32_t *items, uint32_t n)
{
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = (uint32_t)ordo__rng_below(rng, i);
        uint32_t t = items[i - 1];
        items[i - 1] = items[j];
        items[j] = t;
    }
}
