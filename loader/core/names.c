/* The names the enums of ordo.h have at the library's edges (JSON, the CLI,
 * the ledger's text columns), from one table each. */
#include <string.h>

#include "core.h"

static const char *const binding_names[] = {"logical", "rank"};
static const char *const role_names[] = {"reader", "writer"};
static const char *const event_names[] = {"conflict",        "resume", "divergence",
                                          "replay_mismatch", "skip",   "chunk_mismatch"};

#define COUNT(table) ((int)(sizeof table / sizeof table[0]))

/* The index of `text` in `table`, or -1. */
static int find(const char *const *table, int count, const char *text)
{
    for (int i = 0; text && i < count; i++)
        if (strcmp(table[i], text) == 0)
            return i;
    return -1;
}

/* "logical" or "rank"; NULL for a value that is neither. Static string. */
const char *ordo_lane_binding_name(ordo_lane_binding binding)
{
    return (unsigned)binding < (unsigned)COUNT(binding_names) ? binding_names[binding] : NULL;
}

/* Reads "logical" or "rank" into *binding; anything else is ORDO_INVALID
 * naming it. */
ordo_status ordo_lane_binding_parse(const char *text, ordo_lane_binding *binding, ordo_error *err)
{
    int i = find(binding_names, COUNT(binding_names), text);
    if (i < 0)
        return ordo__error(err, ORDO_INVALID, "lane binding '%s' must be 'logical' or 'rank'",
                           text ? text : "");
    *binding = (ordo_lane_binding)i;
    return ordo__ok(err);
}

/* "reader" or "writer"; NULL for a value that is neither. Static string. */
const char *ordo_token_role_name(ordo_token_role role)
{
    return (unsigned)role < (unsigned)COUNT(role_names) ? role_names[role] : NULL;
}

/* Reads "reader" or "writer" into *role; anything else is ORDO_INVALID
 * naming it. */
ordo_status ordo_token_role_parse(const char *text, ordo_token_role *role, ordo_error *err)
{
    int i = find(role_names, COUNT(role_names), text);
    if (i < 0)
        return ordo__error(err, ORDO_INVALID, "token role '%s' must be writer or reader",
                           text ? text : "");
    *role = (ordo_token_role)i;
    return ordo__ok(err);
}

/* "conflict", "resume", ...; NULL for a value that is none of them (and
 * for ORDO_EVENT_ANY). Static string. */
const char *ordo_event_kind_name(ordo_event_kind kind)
{
    return (unsigned)kind < (unsigned)COUNT(event_names) ? event_names[kind] : NULL;
}

/* Reads an event kind's name into *kind; anything else is ORDO_INVALID
 * naming it. */
ordo_status ordo_event_kind_parse(const char *text, ordo_event_kind *kind, ordo_error *err)
{
    int i = find(event_names, COUNT(event_names), text);
    if (i < 0)
        return ordo__error(err, ORDO_INVALID,
                           "event kind '%s' must be conflict, resume, divergence, "
                           "replay_mismatch, skip or chunk_mismatch",
                           text ? text : "");
    *kind = (ordo_event_kind)i;
    return ordo__ok(err);
}
