/* A lane's packer of one source (docs/recipe.md, "Packing"), internal:
 * the lane's units of the source in a new seeded order each pass, read
 * and tokenized by the worker pools a few units ahead and taken back
 * strictly in order, cut into samples of seq_len tokens of this source
 * only. Its whole state is a position (ordo__pos). */
#ifndef ORDO_PACKER_H
#define ORDO_PACKER_H

#include <stdatomic.h>

#include "permute.h"
#include "units.h"

struct ordo_loader;
struct ordo__work;

/* Where a packer stands: the next token is token `offset` (end-of-text
 * included) of document `doc` of the unit at `unit` of the lane's stream
 * of the source (pass unit / units, position unit % units of that pass's
 * order). `record` is where that document is, so a resume reads from it
 * without parsing the records before it: 1 + its physical record in its
 * chunk when the packer stands inside the unit (doc or offset not 0), 0
 * at a unit's start and when not known (a checkpoint of format 5). In an
 * observing loader, after a limited read (ordo__work.limit) and before the
 * read on, it is only a bound: the record after the last one read; such a
 * loader takes no checkpoints. */
typedef struct ordo__pos {
    uint64_t unit, doc, offset, record;
} ordo__pos;

/* One piece of a document that a packer cut into a sample: document
 * tokens [start, end) of `length` (bos and eos included; 0: not known, the
 * document goes on past the flush epoch) of the record `record` (physical,
 * from 0 in its shard) of chunk `chunk` of shard `shard` of `source`, at
 * token `at` of the sample. */
typedef struct ordo__piece {
    uint32_t source, shard, chunk, at;
    uint64_t record, start, end, length; /* length: the document's tokens */
} ordo__piece;

/* The pieces of one sample, in sample order (items owned). */
typedef struct ordo__pieces {
    ordo__piece *items;
    size_t count, cap;
} ordo__pieces;

void ordo__pieces_free(ordo__pieces *pieces);

typedef struct ordo__packer {
    struct ordo_loader *loader;
    int lane;
    uint32_t source;
    ordo__unit_list units; /* owned */
    ordo__pos pos;
    struct ordo__work **ring; /* prefetch slots; unit u is in ring[u % prefetch] */
    uint64_t issued;          /* units pos.unit .. issued-1 are in flight */
    int checked;              /* pos.doc and pos.offset were checked against the unit */
    uint64_t ready;           /* the unit waited for and read without error; UINT64_MAX: none */
    ordo__permutation order;
    uint64_t order_pass; /* UINT64_MAX: none yet */
    /* an observing loader's packer: the tokens it still packs in the flush
     * epoch being made (set by its lane), which bounds how far it reads */
    uint64_t want;
    int read_on; /* the current unit's limited read is used up: read on when needed */
} ordo__packer;

/* How many times a packer read on in a unit a limited read stopped in
 * (ordo__work.limit), in this process; for tests. */
extern _Atomic uint64_t ordo__units_read_on;

/* Sets a packer up at `pos`, owning `units`. */
ordo_status ordo__packer_init(ordo__packer *p, struct ordo_loader *loader, int lane,
                              uint32_t source, ordo__unit_list units, ordo__pos pos,
                              ordo_error *err);
void ordo__packer_free(ordo__packer *p);

/* Issues units into free prefetch slots, up to `depth` (at most the
 * loader's prefetch) units past the packer's position; appends them, in
 * stream order, to the chain through ->next at *chain (for
 * ordo__pool_submit). */
void ordo__packer_issue(ordo__packer *p, int depth, struct ordo__work **chain);

/* Fills `tokens` (seq_len ids) and `doc_start` with the packer's next
 * sample, waiting for the units it needs; with `pieces` (NULL: not asked)
 * each piece of a document it cuts is appended there as it is cut. A unit
 * that fails to read, or a position that does not fit its unit, is an
 * error naming lane, source and unit. */
ordo_status ordo__packer_fill(ordo__packer *p, uint32_t *tokens, uint8_t *doc_start,
                              ordo__pieces *pieces, ordo_error *err);

#endif
