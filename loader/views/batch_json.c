/* The JSON view of a regenerated batch's provenance, the one the CLI
 * (`ordo batch --json`) and the service print. */
#include <jansson.h>
#include <stdlib.h>

#include "core/core.h"

static json_t *piece_json(const ordo_batch_piece *p)
{
    return json_pack("{s:s, s:I, s:o, s:[I,I], s:o, s:i}", "shard", p->shard, "record",
                     (json_int_t)p->record, "byte",
                     p->byte >= 0 ? json_integer((json_int_t)p->byte) : json_null(), "tokens",
                     (json_int_t)p->start, (json_int_t)p->end, "length",
                     p->length ? json_integer((json_int_t)p->length) : json_null(), "at", p->at);
}

static json_t *sample_json(const ordo_provenance *p, int row)
{
    const ordo_batch_sample *s = &p->samples[row];
    json_t *pieces = json_array();
    for (int i = 0; pieces && i < s->piece_count; i++)
        if (json_array_append_new(pieces, piece_json(&s->pieces[i])) != 0) {
            json_decref(pieces);
            return NULL;
        }
    return pieces ? json_pack("{s:i, s:i, s:s, s:o}", "lane", s->lane, "row", row % p->per_lane,
                              "source", s->source_name, "pieces", pieces)
                  : NULL;
}

static json_t *digests_json(const ordo_provenance *p, int lane)
{
    json_t *list = json_array();
    for (int l = 0; list && l < p->lanes; l++) {
        if (lane >= 0 && l != lane)
            continue;
        char hex[ORDO_DIGEST_HEX_SIZE];
        ordo_digest_to_hex(p->lane_digests + (size_t)l * ORDO_DIGEST_SIZE, hex);
        if (json_array_append_new(list, json_pack("{s:i, s:s}", "lane", l, "digest", hex)) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

/* A batch's provenance as JSON; see ordo.h. */
char *ordo_provenance_json(const char *run, const ordo_provenance *p, int lane)
{
    json_t *samples = json_array();
    for (int row = 0; samples && row < p->rows; row++) {
        if (lane >= 0 && p->samples[row].lane != lane)
            continue;
        if (json_array_append_new(samples, sample_json(p, row)) != 0) {
            json_decref(samples);
            samples = NULL;
        }
    }
    char hex[ORDO_DIGEST_HEX_SIZE];
    ordo_digest_to_hex(p->batch_digest, hex);
    json_t *digests = digests_json(p, lane);
    json_t *root =
        samples && digests
            ? json_pack("{s:s, s:I, s:I, s:s, s:s, s:i, s:i, s:i, s:o, s:o}", "run", run, "step",
                        (json_int_t)p->step, "from_step", (json_int_t)p->from_step, "from", p->from,
                        "batch_digest", hex, "lanes", p->lanes, "per_lane", p->per_lane,
                        "sample_len", p->sample_len, "lane_digests", digests, "samples", samples)
            : NULL;
    if (!root) {
        json_decref(samples);
        json_decref(digests);
        return NULL;
    }
    char *text = json_dumps(root, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(root);
    return text;
}
