/* The merge table of the tokenizer.json model (hf_merges.c): one word a
 * slot when two ids and a rank fit in 63 bits, two words else; both
 * layouts give the same rank for every pair, present or not. */
#include "harness.h"
#include "testing.h"
#include "tokenizer/hf_model.h"

static uint32_t next(uint64_t *state, uint32_t below)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((*state >> 33) % below);
}

/* 5,000 random merges over 300,000 ids (a few pairs listed twice: the
 * later rank holds), then 20,000 lookups of listed and unlisted pairs. */
TEST(hf_merges_packed_and_wide_tables_agree)
{
    enum { VOCAB = 300000, COUNT = 5000 };
    ordo__hf_merges packed, wide;
    ordo_error err;
    ASSERT_OK(ordo__hf_merges_init(&packed, COUNT, VOCAB, 0, &err), &err);
    ASSERT_OK(ordo__hf_merges_init(&wide, COUNT, VOCAB, 1, &err), &err);
    ASSERT(!packed.wide && wide.wide);
    static uint32_t left[COUNT], right[COUNT];
    uint64_t state = 1;
    for (uint32_t rank = 0; rank < COUNT; rank++) {
        left[rank] = rank % 97 == 5 ? left[rank - 5] : next(&state, VOCAB);
        right[rank] = rank % 97 == 5 ? right[rank - 5] : next(&state, VOCAB);
        uint32_t id = next(&state, VOCAB);
        ordo__hf_merges_put(&packed, left[rank], right[rank], rank, id);
        ordo__hf_merges_put(&wide, left[rank], right[rank], rank, id);
    }
    for (uint32_t rank = 0; rank < COUNT; rank++) {
        uint32_t expected = rank % 97 == 0 && rank + 5 < COUNT ? rank + 5 : rank;
        ASSERT_EQ_INT(ordo__hf_merge_rank(&packed, left[rank], right[rank]), expected);
        ASSERT_EQ_INT(ordo__hf_merge_rank(&wide, left[rank], right[rank]), expected);
        ASSERT_EQ_INT(packed.ids[expected], wide.ids[expected]);
    }
    size_t found = 0;
    for (int k = 0; k < 20000; k++) {
        uint32_t l = next(&state, VOCAB), r = next(&state, VOCAB);
        uint32_t a = ordo__hf_merge_rank(&packed, l, r), b = ordo__hf_merge_rank(&wide, l, r);
        ASSERT_EQ_INT(a, b);
        found += a != ORDO__HF_NONE;
    }
    ASSERT_EQ_INT(found, 0); /* random pairs are (almost surely) not listed */
    size_t listed[2] = {0, 0};
    for (int layout = 0; layout < 2; layout++) {
        const ordo__hf_merges *m = layout ? &wide : &packed;
        for (size_t i = 0; i < m->cap; i++) {
            uint32_t l, r;
            if (!ordo__hf_merges_at(m, i, &l, &r))
                continue;
            ASSERT(ordo__hf_merge_rank(m, l, r) != ORDO__HF_NONE);
            listed[layout]++;
        }
    }
    ASSERT_EQ_INT(listed[0], COUNT - (COUNT + 91) / 97);
    ASSERT_EQ_INT(listed[1], listed[0]);
    ordo__hf_merges_free(&packed);
    ordo__hf_merges_free(&wide);
}
