/* Seeded deterministic random numbers (internal): SHA-256 in counter mode.
 * The stream is a pure function of (seed, purpose, a, b); no state is ever
 * saved, and no thread, clock or platform detail enters it. */
#ifndef ORDO_RNG_H
#define ORDO_RNG_H

#include <stdint.h>

typedef struct ordo__rng {
    unsigned char key[32];
    uint64_t counter;
    unsigned char block[32];
    int used; /* bytes of block consumed */
} ordo__rng;

/* Seeds the stream for (seed, purpose, a, b). */
void ordo__rng_seed(ordo__rng *rng, uint64_t seed, const char *purpose, uint64_t a, uint64_t b);

/* The next 64 random bits. */
uint64_t ordo__rng_next(ordo__rng *rng);

/* Uniform in [0, n), n >= 1, without modulo bias. */
uint64_t ordo__rng_below(ordo__rng *rng, uint64_t n);

/* Fisher–Yates shuffle of items[0..n). */
void ordo__rng_permute(ordo__rng *rng, uint32_t *items, uint32_t n);

#endif
