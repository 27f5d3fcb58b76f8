-- Range digests: for every run, each block of 120 consecutive steps has a
-- row with which of its steps are recorded (a bit per step) and the
-- SHA-256 of their batch digests in step order. Kept up to date as steps
-- are recorded; comparing two runs compares these rows and reads the
-- steps themselves only in blocks that differ. The steps table stays the
-- record: the migration fills the blocks for steps recorded before it.
CREATE TABLE step_blocks (
    key     INTEGER PRIMARY KEY, -- run_id * 2^40 + (step - 1) / 120
    present BLOB NOT NULL CHECK (length(present) = 15),
    digest  BLOB NOT NULL CHECK (length(digest) = 32)
) STRICT;
