-- How many lane states a run has recorded (ordo_run_info.lane_states,
-- ordo show), kept as each one is recorded, as step_count is with steps:
-- counting epoch_states per run reads every state's bytes (they are stored
-- in the table's own b-tree), and the count is read with every report.
ALTER TABLE runs ADD COLUMN lane_states INTEGER NOT NULL DEFAULT 0 CHECK (lane_states >= 0);
UPDATE runs SET lane_states = (SELECT count(*) FROM epoch_states e WHERE e.run_id = runs.id);
