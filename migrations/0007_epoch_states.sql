-- Every lane's state at the start of a flush epoch (design §4), recorded
-- with a step of that epoch: a checkpoint of all the run's lanes taken
-- after `step` (docs/recipe.md, "Checkpoints"), tens of bytes a lane.
-- With one for every epoch, any step of a logical run is regenerated
-- (ordo batch, GET /api/runs/{name}/steps/{n}/batch) with at most one
-- flush epoch of replay, not all the steps since the last checkpoint.
-- A resume never starts from one: checkpoints stay what a job restarts at.
CREATE TABLE epoch_states (
    run_id     INTEGER NOT NULL REFERENCES runs (id),
    step       INTEGER NOT NULL CHECK (step >= 1),
    lane_state BLOB NOT NULL,
    PRIMARY KEY (run_id, step)
) STRICT, WITHOUT ROWID;
