-- Lane digests reported one lane at a time (by the ranks of a job that
-- does not link libordo) wait here until every lane of their step is in;
-- then the step's batch digest is composed, the step recorded and these
-- rows removed.
CREATE TABLE lane_reports (
    run_id INTEGER NOT NULL REFERENCES runs (id),
    step   INTEGER NOT NULL CHECK (step >= 1),
    lane   INTEGER NOT NULL CHECK (lane >= 0),
    digest BLOB    NOT NULL CHECK (length(digest) = 32),
    PRIMARY KEY (run_id, step, lane)
) STRICT, WITHOUT ROWID;
