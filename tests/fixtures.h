/* Shared set-up for the ledger tests. */
#ifndef ORDO_TEST_FIXTURES_H
#define ORDO_TEST_FIXTURES_H

#include "harness.h"
#include "ordo.h"

/* A recipe body used by most tests. */
extern const char fixture_recipe[];

/* Opens (creating) a ledger in the test directory; aborts on failure. */
ordo_ledger *fixture_open(const char *name);

/* Puts fixture_recipe and creates run `name` with `lanes` lanes and a first
 * logical segment at world size `world` from step 1 (lane l → rank l % W). */
int64_t fixture_run(ordo_ledger *ledger, const char *name, int lanes, int world);

/* The id of run `name` (which must be in the ledger). */
int64_t fixture_run_id(ordo_ledger *ledger, const char *name);

/* Fills a step with deterministic lane digests (from `seed`, step, lane)
 * into `lanes_buffer` (lanes × 32 bytes) and the matching batch digest. */
void fixture_step(ordo_step *step, int64_t number, int lanes, unsigned char *lanes_buffer,
                  unsigned seed);

/* Number of rows in `table` for run `run_id` (via a separate read-only
 * SQLite connection, so it sees only what was committed). */
long long fixture_count(const char *db_path, const char *table, int64_t run_id);

/* The integer the first row of `sql` yields, read through a plain
 * read-only SQLite connection. */
long long fixture_int(const char *db_path, const char *sql);

/* Runs one SQL statement on the file through a plain SQLite connection. */
void fixture_sql(const char *db_path, const char *sql);

/* The first column of the first row of `sql` as text (the caller frees);
 * fails the test when there is no row. */
char *fixture_text(const char *db_path, const char *sql);

/* Adds 1 to the token offset of lane `lane`'s first packer position in the
 * lane state of run `run_id` at `step` in `table` ("checkpoints" or
 * "epoch_states"), written back through plain SQL: a state that decodes
 * but no longer reproduces the recorded digests. */
void fixture_tamper_state(const char *db_path, const char *table, int64_t run_id, int64_t step,
                          int lane);

#endif
