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

/* A slot holds the id and the high half of the key's hash, so most
 * probes of other keys are told apart without reading the key. */
#define SLOT(h, id) (((h)&0xffffffff00000000ull) | (id))

/* Inserts an id; see hf_model.h. */
uint32_t ordo__hf_map_put(ordo__hf_map *m, uint32_t id)
{
    const ordo__hf_str *k = &m->keys[id];
    uint64_t h = hash_bytes(k->p, k->n);
    for (size_t i = (size_t)h & m->mask;; i = (i + 1) & m->mask) {
        uint64_t slot = m->slots[i];
        if (slot == UINT64_MAX) {
            m->slots[i] = SLOT(h, id);
            return ORDO__HF_NONE;
        }
        uint32_t at = (uint32_t)slot;
        if ((slot >> 32) == (h >> 32) && m->keys[at].n == k->n &&
            memcmp(m->keys[at].p, k->p, k->n) == 0)
            return at;
    }
}

/* Looks a string up; see hf_model.h. */
uint32_t ordo__hf_map_get(const ordo__hf_map *m, const char *s, size_t n)
{
    if (!m->slots)
        return ORDO__HF_NONE;
    uint64_t h = hash_bytes(s, n);
    for (size_t i = (size_t)h & m->mask;; i = (i + 1) & m->mask) {
        uint64_t slot = m->slots[i];
        if (slot == UINT64_MAX)
            return ORDO__HF_NONE;
        uint32_t at = (uint32_t)slot;
        if ((slot >> 32) == (h >> 32) && m->keys[at].n == n && memcmp(m->keys[at].p, s, n) == 0)
            return at;
    }
}

/* Frees the slots (not the keys, which the table never owned). */
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
