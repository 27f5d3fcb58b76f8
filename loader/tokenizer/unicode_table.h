/* Unicode 16.0 character classes by code point (internal), for the
 * hand-written pre-tokenizers: a two-stage table built once per process
 * from the class lists in unicode_classes.h. */
#ifndef ORDO_UNICODE_TABLE_H
#define ORDO_UNICODE_TABLE_H

#include <stdint.h>

enum {
    ORDO__U_L = 1 << 0,  /* General_Category L */
    ORDO__U_N = 1 << 1,  /* General_Category N */
    ORDO__U_WS = 1 << 2, /* White_Space */
    ORDO__U_LU = 1 << 3,
    ORDO__U_LL = 1 << 4,
    ORDO__U_LT = 1 << 5,
    ORDO__U_LM = 1 << 6,
    ORDO__U_LO = 1 << 7,
    ORDO__U_M = 1 << 8,
};

typedef struct ordo__unicode_table {
    uint16_t stage1[0x110000 >> 8]; /* block number per 256 code points */
    uint16_t *blocks;               /* 256 classes per distinct block */
} ordo__unicode_table;

/* The process-wide table (built on first use; thread-safe); NULL when out
 * of memory. */
const ordo__unicode_table *ordo__unicode(void);

/* The class bits of code point cp (< 0x110000). */
static inline unsigned ordo__unicode_class(const ordo__unicode_table *t, uint32_t cp)
{
    return t->blocks[(uint32_t)t->stage1[cp >> 8] << 8 | (cp & 0xff)];
}

#endif
