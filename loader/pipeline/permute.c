/* Seeded permutations evaluated per position: Feistel + cycle walking. */
#include "permute.h"
#include "core/core.h"

/* A 64-bit mixing function (the splitmix64 finaliser). */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* Sets up the permutation; see permute.h. */
void ordo__permutation_init(ordo__permutation *p, uint64_t n, uint64_t seed, const char *purpose,
                            uint64_t a, uint64_t b)
{
    unsigned bits = 2;
    while (bits < 64 && ((uint64_t)1 << bits) < n)
        bits += 2;
    p->n = n;
    p->half_bits = bits / 2;
    ordo__rng rng;
    ordo__rng_seed(&rng, seed, purpose, a, b);
    for (int i = 0; i < ORDO__PERMUTE_ROUNDS; i++)
        p->keys[i] = ordo__rng_next(&rng);
}

static uint64_t feistel(const ordo__permutation *p, uint64_t x)
{
    unsigned h = p->half_bits;
    uint64_t mask = h >= 64 ? UINT64_MAX : ((uint64_t)1 << h) - 1;
    uint64_t left = x >> h, right = x & mask;
    for (int i = 0; i < ORDO__PERMUTE_ROUNDS; i++) {
        uint64_t next = left ^ (mix(right ^ p->keys[i]) & mask);
        left = right;
        right = next;
    }
    return left << h | right;
}

/* The element at position i; see permute.h. */
uint64_t ordo__permutation_at(const ordo__permutation *p, uint64_t i)
{
    if (p->n <= 1)
        return 0;
    uint64_t x = i;
    do
        x = feistel(p, x);
    while (x >= p->n);
    return x;
}
