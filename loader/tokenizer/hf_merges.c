/* The merge table of the tokenizer.json model (hf_model.h): pairs of ids
 * to ranks, open addressing with linear probing, one 64-bit word a slot
 * where the bits allow it. Fixed hash: lookups are exact, so nothing
 * depends on insertion order. */
#define _DEFAULT_SOURCE /* madvise */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hf_model.h"

#define HUGE_PAGE ((size_t)2 << 20)

/* Memory for a table read at random: on Linux in 2 MB pages where the
 * kernel allows them (madvise mode), so that lookups do not each miss the
 * TLB. Freed with free(). */
static void *table_alloc(size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (bytes >= HUGE_PAGE) {
        void *p = NULL;
        size_t rounded = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
        if (posix_memalign(&p, HUGE_PAGE, rounded) != 0)
            return NULL;
        (void)madvise(p, rounded, MADV_HUGEPAGE); /* only a hint: fine if refused */
        return p;
    }
#endif
    return malloc(bytes);
}

static unsigned bits_for(uint64_t values) /* bits that hold 0..values-1 */
{
    unsigned bits = 1;
    while (bits < 64 && (values - 1) >> bits)
        bits++;
    return bits;
}

/* Sizes the table; see hf_model.h. */
ordo_status ordo__hf_merges_init(ordo__hf_merges *m, size_t count, uint32_t vocab, int wide,
                                 ordo_error *err)
{
    memset(m, 0, sizeof *m);
    if (count >= ORDO__HF_NONE / 2)
        return ordo__error(err, ORDO_INVALID, "%zu merges are too many", count);
    m->id_bits = bits_for(vocab ? vocab : 1);
    m->rank_bits = bits_for(count ? count : 1);
    m->rank_mask = (1ull << m->rank_bits) - 1;
    m->wide = wide || 2 * m->id_bits + m->rank_bits > 63;
    /* at most 5/8 full: short probes, and a table small enough to stay
     * mostly in cache */
    m->cap = count + count * 3 / 5 + 16;
    size_t words = m->wide ? 2 * m->cap : m->cap;
    m->slots = table_alloc(words * sizeof *m->slots);
    m->ids = table_alloc((count ? count : 1) * sizeof *m->ids);
    unsigned filter_bits = bits_for(8 * (uint64_t)count + 512);
    m->filter_shift = 64 - filter_bits;
    m->filter = calloc(((size_t)1 << filter_bits) / 64, sizeof *m->filter);
    if (!m->slots || !m->ids || !m->filter) {
        ordo__hf_merges_free(m);
        return ordo__error(err, ORDO_NOMEM, "out of memory for %zu merges", count);
    }
    memset(m->slots, 0xff, words * sizeof *m->slots);
    return ORDO_OK;
}

/* Sets a merge; see hf_model.h. */
void ordo__hf_merges_put(ordo__hf_merges *m, uint32_t left, uint32_t right, uint32_t rank,
                         uint32_t id)
{
    uint64_t key = (uint64_t)left << m->id_bits | right;
    size_t i = ordo__hf_merge_slot(key, m->cap);
    m->ids[rank] = id;
    for (;; i = i + 1 == m->cap ? 0 : i + 1) {
        uint64_t *slot = m->wide ? &m->slots[2 * i] : &m->slots[i];
        uint64_t held = m->wide                 ? slot[0]
                        : slot[0] == UINT64_MAX ? UINT64_MAX
                                                : slot[0] >> m->rank_bits;
        if (held != UINT64_MAX && held != key)
            continue;
        uint64_t bit = ordo__hf_merge_bit(m, key);
        m->filter[bit >> 6] |= 1ull << (bit & 63);
        if (m->wide)
            slot[0] = key, slot[1] = rank;
        else
            slot[0] = key << m->rank_bits | rank;
        return;
    }
}

/* A slot's pair; see hf_model.h. */
int ordo__hf_merges_at(const ordo__hf_merges *m, size_t i, uint32_t *left, uint32_t *right)
{
    uint64_t slot = m->wide ? m->slots[2 * i] : m->slots[i];
    if (slot == UINT64_MAX)
        return 0;
    uint64_t key = m->wide ? slot : slot >> m->rank_bits;
    *left = (uint32_t)(key >> m->id_bits);
    *right = (uint32_t)(key & ((1ull << m->id_bits) - 1));
    return 1;
}

/* Frees the table (a zeroed one is fine). */
void ordo__hf_merges_free(ordo__hf_merges *m)
{
    free(m->slots), free(m->ids), free(m->filter);
    m->slots = NULL, m->ids = NULL, m->filter = NULL;
}
