/* Seeded permutations of [0, n) evaluated one position at a time
 * (internal): a keyed Feistel network on the next even power of two,
 * cycle-walked into [0, n). O(1) memory and time per position, so a lane
 * never materialises a chunk order, however many chunks a source has.
 * A pure function of (seed, purpose, a, b, n). */
#ifndef ORDO_PERMUTE_H
#define ORDO_PERMUTE_H

#include <stdint.h>

#define ORDO__PERMUTE_ROUNDS 6

typedef struct ordo__permutation {
    uint64_t n;
    unsigned half_bits; /* each Feistel half */
    uint64_t keys[ORDO__PERMUTE_ROUNDS];
} ordo__permutation;

/* Sets up the permutation of [0, n) for (seed, purpose, a, b); n >= 1. */
void ordo__permutation_init(ordo__permutation *p, uint64_t n, uint64_t seed, const char *purpose,
                            uint64_t a, uint64_t b);

/* The element at position i < n. */
uint64_t ordo__permutation_at(const ordo__permutation *p, uint64_t i);

#endif
