-- Every run's batch digests, 120 steps to a row (four to a page), kept beside the steps
-- as they are recorded: comparing two runs reads 32 bytes a step here
-- instead of each step's row with its lane digests (about 1,100 bytes a
-- step at 32 lanes), and equal blocks compare in one memcmp. The steps
-- table stays the record; these rows are derived from it (the migration
-- fills them for steps recorded before it).
CREATE TABLE step_blocks (
    key     INTEGER PRIMARY KEY, -- run_id * 2^30 + (step - 1) / 120
    present BLOB NOT NULL CHECK (length(present) = 15) ,    -- a bit per step
    digests BLOB NOT NULL CHECK (length(digests) = 3840)    -- 32 bytes per step, 0 if absent
) STRICT;
