/* Schema migrations (internal). */
#ifndef ORDO_MIGRATE_H
#define ORDO_MIGRATE_H

/* PRAGMA application_id of every ledger: the bytes 'ordo'. Migration 0001
 * sets it. */
#define ORDO__APPLICATION_ID 0x6f72646f

#endif
