/* Whether two checkpoints put every lane at the same place (ordo.h,
 * ordo_checkpoint_equivalent): equal encodings once the document records
 * that one of them does not know (a format 5 checkpoint's, 0) are set
 * aside in both. */
#include <stdlib.h>
#include <string.h>

#include "lane_state.h"

/* Clears, in both, each logical position's record that either lacks;
 * returns how many b knows that a does not. */
static uint64_t forget_unknown_records(ordo__state *a, ordo__state *b)
{
    if (a->rank_bound || b->rank_bound || a->lane_count != b->lane_count ||
        a->sources != b->sources)
        return 0; /* they differ anyway */
    uint64_t more = 0;
    for (uint64_t l = 0; l < a->lane_count; l++)
        for (uint32_t s = 0; s < a->sources; s++) {
            ordo__pos *x = &a->lanes[l].positions[s], *y = &b->lanes[l].positions[s];
            more += !x->record && y->record;
            if (!x->record || !y->record)
                x->record = y->record = 0;
        }
    return more;
}

/* Compares two checkpoints; see ordo.h. */
ordo_status ordo_checkpoint_equivalent(const void *a, size_t a_size, const void *b, size_t b_size,
                                       int *same, int *b_knows_more, ordo_error *err)
{
    *same = 0;
    uint64_t more = 0;
    if (b_knows_more)
        *b_knows_more = 0;
    ordo__state x = {0}, y = {0};
    ordo_status status = ordo__state_decode(a, a_size, &x, err);
    if (status == ORDO_OK)
        status = ordo__state_decode(b, b_size, &y, err);
    unsigned char *ex = NULL, *ey = NULL;
    size_t nx = 0, ny = 0;
    if (status == ORDO_OK) {
        more = forget_unknown_records(&x, &y);
        status = ordo__state_encode(&x, &ex, &nx, err);
    }
    if (status == ORDO_OK)
        status = ordo__state_encode(&y, &ey, &ny, err);
    if (status == ORDO_OK)
        *same = nx == ny && memcmp(ex, ey, nx) == 0;
    if (b_knows_more)
        *b_knows_more = *same && more > 0;
    free(ex);
    free(ey);
    ordo__state_free(&x);
    ordo__state_free(&y);
    return status == ORDO_OK ? ordo__ok(err) : status;
}
