/* The Unicode class table: parsed once from the generated class lists. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "unicode_classes.h"
#include "unicode_table.h"

static ordo__unicode_table table;
static const ordo__unicode_table *ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static uint32_t hex_at(const char **p)
{
    /* at "\x{HEX}" */
    uint32_t v = (uint32_t)strtoul(*p + 3, (char **)p, 16);
    (*p)++; /* the closing brace */
    return v;
}

/* Sets `bit` for every code point of a class body "\x{a}-\x{b}\x{c}...". */
static void mark(uint16_t *flat, const char *body, unsigned bit)
{
    const char *p = body;
    while (*p == '\\') {
        uint32_t lo = hex_at(&p), hi = lo;
        if (*p == '-')
            p++, hi = hex_at(&p);
        for (uint32_t cp = lo; cp <= hi && cp < 0x110000; cp++)
            flat[cp] |= (uint16_t)bit;
    }
}

static void build(void)
{
    uint16_t *flat = calloc(0x110000, sizeof *flat);
    uint16_t *blocks = malloc((0x110000 >> 8) * 256 * sizeof *blocks);
    if (!flat || !blocks) {
        free(flat);
        free(blocks);
        return;
    }
    mark(flat, ORDO_U_L, ORDO__U_L);
    mark(flat, ORDO_U_N, ORDO__U_N);
    mark(flat, ORDO_U_WS, ORDO__U_WS);
    mark(flat, ORDO_U_LU, ORDO__U_LU);
    mark(flat, ORDO_U_LL, ORDO__U_LL);
    mark(flat, ORDO_U_LT, ORDO__U_LT);
    mark(flat, ORDO_U_LM, ORDO__U_LM);
    mark(flat, ORDO_U_LO, ORDO__U_LO);
    mark(flat, ORDO_U_M, ORDO__U_M);
    uint32_t count = 0;
    for (uint32_t b = 0; b < (0x110000 >> 8); b++) {
        const uint16_t *block = flat + ((size_t)b << 8);
        uint32_t found = count;
        for (uint32_t k = 0; k < count && found == count; k++)
            if (memcmp(blocks + ((size_t)k << 8), block, 256 * sizeof *block) == 0)
                found = k;
        if (found == count)
            memcpy(blocks + ((size_t)count++ << 8), block, 256 * sizeof *block);
        table.stage1[b] = (uint16_t)found;
    }
    free(flat);
    uint16_t *shrunk = realloc(blocks, (size_t)count * 256 * sizeof *blocks);
    table.blocks = shrunk ? shrunk : blocks;
    ready = &table;
}

/* The table; see unicode_table.h. */
const ordo__unicode_table *ordo__unicode(void)
{
    pthread_once(&once, build);
    return ready;
}
