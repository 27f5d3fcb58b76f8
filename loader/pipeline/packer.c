/* A lane's packer of one source: its units in seeded order per pass,
 * documents cut into samples; see packer.h. */
#include <stdlib.h>
#include <string.h>

#include "packer.h"
#include "pipeline.h"

/* Sets a packer up; see packer.h. */
ordo_status ordo__packer_init(ordo__packer *p, ordo_loader *l, int lane, uint32_t source,
                              ordo__unit_list units, ordo__pos pos, ordo_error *err)
{
    memset(p, 0, sizeof *p);
    p->loader = l;
    p->lane = lane;
    p->source = source;
    p->units = units;
    p->pos = pos;
    p->issued = pos.unit;
    p->order_pass = UINT64_MAX;
    p->ready = UINT64_MAX;
    p->checked = pos.doc == 0 && pos.offset == 0;
    p->ring = calloc((size_t)l->prefetch, sizeof *p->ring);
    for (int i = 0; p->ring && i < l->prefetch; i++) {
        if (!(p->ring[i] = calloc(1, sizeof *p->ring[i])))
            break;
        p->ring[i]->seq = UINT64_MAX; /* free */
    }
    for (int i = 0; p->ring && i < l->prefetch; i++)
        if (!p->ring[i])
            return ordo__error(err, ORDO_NOMEM, "out of memory setting up lane %d", lane);
    return p->ring ? ORDO_OK
                   : ordo__error(err, ORDO_NOMEM, "out of memory setting up lane %d", lane);
}

/* Frees the packer's units and slots (none may be in flight). */
void ordo__packer_free(ordo__packer *p)
{
    for (int i = 0; p->ring && i < p->loader->prefetch; i++)
        if (p->ring[i]) {
            ordo__work_release(p->ring[i]);
            free(p->ring[i]);
        }
    free(p->ring);
    ordo__unit_list_free(&p->units);
    memset(p, 0, sizeof *p);
}

/* The unit at stream position u: pass u / count, in the pass's order
 * seeded by (seed, lane, source, pass). */
static const ordo__unit_ref *unit_at(ordo__packer *p, uint64_t u)
{
    uint64_t count = p->units.count, pass = u / count;
    if (p->order_pass != pass) {
        ordo__permutation_init(&p->order, count, p->loader->recipe->seed, "unit-order",
                               (uint64_t)p->lane << 32 | p->source, pass);
        p->order_pass = pass;
    }
    return &p->units.units[ordo__permutation_at(&p->order, u % count)];
}

/* How far an observing loader reads a unit (ordo__work.limit; 0 for
 * others: to its end): the text of the tokens the packer still packs in
 * the epoch at the source's measured bytes a token (record bytes, at least
 * the text's), a sixteenth more; a read that falls short reads on. */
static uint64_t read_limit(const ordo__packer *p)
{
    if (!p->loader->observe)
        return 0;
    if (ordo__observe_read_limit)
        return ordo__observe_read_limit;
    const ordo__source *src = &p->loader->recipe->sources[p->source];
    if (!src->sample_tokens)
        return 0;
    unsigned __int128 bytes = (unsigned __int128)p->want * src->sample_bytes / src->sample_tokens;
    bytes += bytes / 16 + 1;
    return bytes > UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t)bytes;
}

/* How many tokens past its position an observing loader's packer has
 * tokenized at least, when its unit has so many (ordo__work.token_limit;
 * 0 for others: every document whole): what it still packs in the epoch,
 * at least one. */
static uint64_t token_need(const ordo__packer *p)
{
    if (!p->loader->observe)
        return 0;
    if (ordo__observe_token_limit)
        return ordo__observe_token_limit;
    return p->want ? p->want : 1;
}

/* What a read asks the tokenizer for past the packer's position: its need,
 * a quarter more and two samples more (a unit read before the epoch is
 * planned knows its need only about, and tokenizing a long document again
 * costs its whole prefix). */
static uint64_t token_ask(const ordo__packer *p)
{
    uint64_t need = token_need(p);
    if (!need || ordo__observe_token_limit)
        return need;
    uint64_t more = need / 4 + 2 * (uint64_t)p->loader->recipe->sample_len;
    return need > UINT64_MAX / 4 ? need : need + more;
}

/* Issues units into free slots; see packer.h. */
void ordo__packer_issue(ordo__packer *p, int depth, ordo__work **chain)
{
    int prefetch = p->loader->prefetch;
    if (depth > prefetch)
        depth = prefetch;
    while (*chain) /* appended, so the pool reads units in the order they are packed */
        chain = &(*chain)->next;
    while (p->issued < p->pos.unit + (uint64_t)depth) {
        ordo__work *w = p->ring[p->issued % (uint64_t)prefetch];
        if (w->seq != UINT64_MAX)
            break;
        const ordo__unit_ref *unit = unit_at(p, p->issued);
        /* a resumed position's unit: its documents before it are not packed */
        int resumed = !p->checked && p->issued == p->pos.unit;
        w->from_doc = resumed ? p->pos.doc : 0;
        w->from_record = resumed ? p->pos.record : 0;
        w->limit = read_limit(p);
        uint64_t need = token_ask(p);
        w->token_limit = need ? need + (resumed ? p->pos.offset : 0) : 0;
        w->from_bound = 0;
        w->seq = p->issued++;
        w->source = p->source;
        w->ref = unit->ref;
        w->first = unit->first;
        w->count = unit->count;
        w->skip = w->end = 0;
        w->status = ORDO_OK;
        w->done = 0;
        w->next = NULL;
        *chain = w;
        chain = &w->next;
    }
}

_Atomic uint64_t ordo__units_read_on;

/* Reads the current unit again from the packer's record on (its first
 * document from there on: the one after those a limited read stopped
 * with, or the cut one it is in), the documents before it left empty;
 * when the packer needs it (ordo__packer.read_on). */
static void read_on(ordo__packer *p, ordo__work *w)
{
    w->from_doc = p->pos.doc;
    w->from_record = p->pos.record;
    w->limit = read_limit(p);
    uint64_t need = token_ask(p);
    w->token_limit = need ? need + p->pos.offset : 0;
    w->from_bound = 1;
    w->status = ORDO_OK;
    w->next = NULL;
    p->ready = UINT64_MAX;
    atomic_fetch_add(&ordo__units_read_on, 1);
    ordo__pool_submit(p->loader, w);
}

/* The current unit, read and tokenized; in unordered (debug) mode any
 * finished one of the packer's, moved into the current one's slot. */
static ordo_status current(ordo__packer *p, ordo__work **out, ordo_error *err)
{
    ordo_loader *l = p->loader;
    uint64_t prefetch = (uint64_t)l->prefetch, slot = p->pos.unit % prefetch;
    if (p->ready == p->pos.unit) { /* the rest of a unit in hand: no lock taken */
        *out = p->ring[slot];
        return ORDO_OK;
    }
    if (p->read_on) {
        p->read_on = 0;
        read_on(p, p->ring[slot]);
    }
    ordo__work *chain = NULL;
    ordo__packer_issue(p, l->prefetch, &chain);
    ordo__pool_submit(l, chain);
    ordo__work *w = p->ring[slot];
    if (l->unordered && p->pos.doc == 0 && p->pos.offset == 0) {
        /* debug: at a unit's start, whichever of the packer's finished first */
        ordo__work *any = ordo__pool_wait_any(l, p->ring, l->prefetch);
        for (uint64_t i = 0; i < prefetch; i++)
            if (p->ring[i] == any) { /* swap slots and stream positions */
                uint64_t seq = any->seq;
                p->ring[i] = w;
                p->ring[slot] = any;
                any->seq = w->seq;
                w->seq = seq;
                break;
            }
        w = p->ring[slot];
    }
    ordo__pool_wait(l, w);
    if (w->status == ORDO_INVALID && !p->checked && w->from_record)
        return ordo__error(err, ORDO_INVALID,
                           "resume refused: the checkpoint at step %lld puts lane %d of source "
                           "'%s' at record %llu of its unit %llu, which does not fit: %s",
                           (long long)l->step, p->lane, l->recipe->sources[p->source].name,
                           (unsigned long long)(p->pos.record - 1), (unsigned long long)p->pos.unit,
                           w->err.message);
    if (w->status != ORDO_OK) {
        if (err)
            *err = w->err;
        return w->status;
    }
    /* no document at the record the read started at, or none from the bound
     * a read-on started at */
    int bound = w->from_bound;
    if (bound ? !w->synced || w->doc_count <= w->from_doc : w->read_from && !w->synced) {
        if (!bound && !p->checked && w->from_record) /* the checkpoint's record */
            return ordo__error(err, ORDO_INVALID,
                               "resume refused: the checkpoint at step %lld puts lane %d of "
                               "source '%s' at record %llu of its unit %llu (chunk %u of shard "
                               "%u), which is not a document there; it was changed or the data "
                               "differ",
                               (long long)l->step, p->lane, l->recipe->sources[p->source].name,
                               (unsigned long long)(w->read_from - 1),
                               (unsigned long long)p->pos.unit, w->ref.chunk, w->ref.shard);
        return ordo__error(
            err, ORDO_CONFLICT,
            "lane %d of source '%s': unit %llu (chunk %u of shard %u) has no "
            "document%s %llu%s when read%s (the file changed)",
            p->lane, l->recipe->sources[p->source].name, (unsigned long long)p->pos.unit,
            w->ref.chunk, w->ref.shard, bound ? "s from record" : " at record",
            (unsigned long long)(w->read_from - 1), bound ? " on" : "", bound ? " on" : "");
    }
    if (!p->checked) { /* a resumed position: inside the unit */
        if (p->pos.doc >= w->doc_count ||
            p->pos.offset >=
                (p->pos.doc + 1 < w->doc_count ? w->doc_offset[p->pos.doc + 1] : w->tokens.count) -
                    w->doc_offset[p->pos.doc])
            return ordo__error(err, ORDO_INVALID,
                               "resume refused: the checkpoint at step %lld puts lane %d of "
                               "source '%s' at token %llu of document %llu of its unit %llu, "
                               "which has %zu documents (or that document fewer tokens); it was "
                               "changed or the data differ",
                               (long long)l->step, p->lane, l->recipe->sources[p->source].name,
                               (unsigned long long)p->pos.offset, (unsigned long long)p->pos.doc,
                               (unsigned long long)p->pos.unit, w->doc_count);
        p->checked = 1;
        p->pos.record = w->doc_record[p->pos.doc] + 1; /* known now, as in an unbroken run */
    }
    p->ready = p->pos.unit;
    *out = w;
    return ORDO_OK;
}

/* Frees a sample's pieces (the struct too). */
void ordo__pieces_free(ordo__pieces *pieces)
{
    if (pieces)
        free(pieces->items);
    free(pieces);
}

/* Appends the piece [at, at + run) of the current document of `w`. */
static ordo_status observe(ordo__packer *p, const ordo__work *w, size_t fill, size_t run,
                           size_t length, ordo__pieces *pieces, ordo_error *err)
{
    if (pieces->count == pieces->cap) {
        size_t cap = pieces->cap ? 2 * pieces->cap : 8;
        ordo__piece *grown = realloc(pieces->items, cap * sizeof *grown);
        if (!grown)
            return ordo__error(err, ORDO_NOMEM, "out of memory noting a sample's documents");
        pieces->items = grown;
        pieces->cap = cap;
    }
    const ordo__chunk *chunk =
        &p->loader->recipe->sources[p->source].shards[w->ref.shard].chunks[w->ref.chunk];
    pieces->items[pieces->count++] =
        (ordo__piece){.source = p->source,
                      .shard = w->ref.shard,
                      .chunk = w->ref.chunk,
                      .at = (uint32_t)fill,
                      .record = chunk->first_record + w->doc_record[p->pos.doc],
                      .start = p->pos.offset,
                      .end = p->pos.offset + run,
                      .length = length};
    return ORDO_OK;
}

/* The length of the packer's document as a piece notes it: 0 (not known)
 * unless the document ends in the epoch (its tokens from the packer's
 * offset on are at most what the packer still packs in it), which holds
 * whichever state the replay started from: such a document is never cut
 * when packed (a cut short of the packer's need is tokenized again
 * first), while one that goes on past the epoch may have been read whole
 * or not, depending on where the replay began. */
static size_t known_length(const ordo__packer *p, const ordo__work *w, size_t length)
{
    if (w->cut && p->pos.doc + 1 == w->doc_count)
        return 0;
    return length - p->pos.offset <= p->want ? length : 0;
}

/* Fills the next sample; see packer.h. */
ordo_status ordo__packer_fill(ordo__packer *p, uint32_t *tokens, uint8_t *doc_start,
                              ordo__pieces *pieces, ordo_error *err)
{
    size_t seq_len = (size_t)p->loader->recipe->sample_len, fill = 0;
    memset(doc_start, 0, seq_len);
    while (fill < seq_len) {
        ordo__work *w = NULL;
        ordo_status status = current(p, &w, err);
        if (status != ORDO_OK)
            return status;
        size_t begin = w->doc_offset[p->pos.doc];
        size_t end =
            p->pos.doc + 1 < w->doc_count ? w->doc_offset[p->pos.doc + 1] : w->tokens.count;
        size_t at = begin + (size_t)p->pos.offset, run = end - at;
        if (w->cut && w->tokens.count - at < token_need(p)) {
            /* its last document is cut short of what the packer needs: read
             * on from the packer's document */
            p->pos.record = w->doc_record[p->pos.doc] + 1;
            p->read_on = 1;
            p->ready = UINT64_MAX;
            continue;
        }
        if (run > seq_len - fill)
            run = seq_len - fill;
        if (p->pos.offset == 0)
            doc_start[fill] = 1;
        memcpy(tokens + fill, w->tokens.ids + at, run * sizeof *tokens);
        if (pieces && (status = observe(p, w, fill, run, known_length(p, w, end - begin), pieces,
                                        err)) != ORDO_OK)
            return status;
        fill += run;
        p->want = p->want > run ? p->want - run : 0;
        p->pos.offset += run;
        if (at + run < end || (w->cut && p->pos.doc + 1 == w->doc_count)) {
            /* inside the document (a cut one goes on): its record (ordo__pos) */
            p->pos.record = w->doc_record[p->pos.doc] + 1;
            continue;
        }
        p->pos.doc++, p->pos.offset = 0;
        if (p->pos.doc < w->doc_count) {
            p->pos.record = w->doc_record[p->pos.doc] + 1;
            continue;
        }
        if (w->more) { /* read only so far: the unit's next documents */
            /* a bound (the record after the last read) until the read-on finds
             * the document; only observing loaders read so, and they record
             * no position */
            p->pos.record = w->next_record + 1;
            p->read_on = 1;
            p->ready = UINT64_MAX;
            continue;
        }
        w->seq = UINT64_MAX; /* the unit is packed: its slot is free */
        p->pos.unit++, p->pos.doc = 0, p->pos.record = 0;
    }
    return ORDO_OK;
}
