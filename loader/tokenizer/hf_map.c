/* Hash tables of the tokenizer.json model: byte strings to ids, pairs of
 * ids to merges. Fixed hash functions: lookups are exact, so nothing
 * depends on insertion order. */
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0x243F6A8885A308D3ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    uint64_t tail = 0;
    memcpy(&tail, s + i, n - i);
    h = (h ^ tail) * 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31);
}

/* Sizes a string table; see hf_model.h. */
ordo_status ordo__hf_map_init(ordo__hf_map *m, const ordo__hf_str *keys, size_t count,
                              ordo_error *err)
{
    size_t cap = 16;
    while (cap < 2 * count)
        cap *= 2;
    m->keys = keys;
    m->mask = cap - 1;
    m->slots = malloc(cap * sizeof *m->slots);
    if (!m->slots)
        return ordo__error(err, ORDO_NOMEM, "out of memory for %zu tokens", count);
    memset(m->slots, 0xff, cap * sizeof *m->slots);
    return ORDO_OK;
}

/* Inserts an id; see hf_model.h. */
uint32_t ordo__hf_map_put(ordo__hf_map *m, uint32_t id)
{
    const ordo__hf_str *k = &m->keys[id];
    size_t i = (size_t)hash_bytes(k->p, k->n) & m->mask;
    for (;; i = (i + 1) & m->mask) {
        uint32_t at = m->slots[i];
        if (at == ORDO__HF_NONE) {
            m->slots[i] = id;
            return ORDO__HF_NONE;
        }
        if (m->keys[at].n == k->n && memcmp(m->keys[at].p, k->p, k->n) == 0)
            return at;
    }
}

/* Looks a string up; see hf_model.h. */
uint32_t ordo__hf_map_get(const ordo__hf_map *m, const char *s, size_t n)
{
    if (!m->slots)
        return ORDO__HF_NONE;
    size_t i = (size_t)hash_bytes(s, n) & m->mask;
    for (;; i = (i + 1) & m->mask) {
        uint32_t at = m->slots[i];
        if (at == ORDO__HF_NONE)
            return ORDO__HF_NONE;
        if (m->keys[at].n == n && memcmp(m->keys[at].p, s, n) == 0)
            return at;
    }
}

void ordo__hf_map_free(ordo__hf_map *m)
{
    free(m->slots);
    m->slots = NULL;
}

/* GPT-2's byte-to-character table; see hf_model.h. */
void ordo__hf_byte_level_table(uint32_t cp[256])
{
    uint32_t next = 256;
    for (unsigned b = 0; b < 256; b++)
        cp[b] = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE ? b : next++;
}
