-- 0001: the ledger's first schema (design §8).
-- Digests are stored as 32-byte BLOBs (hex only at the edges); a step's lane
-- digests are one BLOB of lanes × 32 bytes, so a step row costs little more
-- than its bytes. Times are UTC ISO-8601 text and never feed into data.

PRAGMA application_id = 1869767791; -- 'ordo'

-- A recipe is identified by the SHA-256 of its canonical JSON.
CREATE TABLE recipes (
    id         TEXT PRIMARY KEY CHECK (length(id) = 64),
    name       TEXT,
    canonical  TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT, WITHOUT ROWID;

-- One input file's index, identified by its content and by what shapes the
-- index (the text field read, lines per chunk of a plain .jsonl file; 0 for
-- formats whose chunks are intrinsic). chunk_table holds per chunk four
-- 8-byte little-endian numbers: offset, length in the file, length of its
-- records, records. skipped counts empty documents left out.
CREATE TABLE shards (
    id            INTEGER PRIMARY KEY,
    path          TEXT NOT NULL,
    sha256        BLOB NOT NULL CHECK (length(sha256) = 32),
    text_field    TEXT NOT NULL,
    chunk_records INTEGER NOT NULL CHECK (chunk_records >= 0),
    size_bytes    INTEGER NOT NULL CHECK (size_bytes >= 0),
    records       INTEGER NOT NULL CHECK (records >= 0),
    skipped       INTEGER NOT NULL CHECK (skipped >= 0),
    chunks        INTEGER NOT NULL CHECK (chunks >= 0),
    chunk_table   BLOB NOT NULL CHECK (length(chunk_table) = 32 * chunks),
    indexed_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (path, sha256, text_field, chunk_records)
) STRICT;

-- Which shards, in which order, make up each source of a recipe.
CREATE TABLE recipe_shards (
    recipe_id TEXT NOT NULL REFERENCES recipes (id),
    source    TEXT NOT NULL,
    position  INTEGER NOT NULL CHECK (position >= 0),
    shard_id  INTEGER NOT NULL REFERENCES shards (id),
    PRIMARY KEY (recipe_id, source, position)
) STRICT, WITHOUT ROWID;

-- Tokens per byte measured once per recipe and source on a seeded sample.
CREATE TABLE token_estimates (
    recipe_id       TEXT NOT NULL REFERENCES recipes (id),
    source          TEXT NOT NULL,
    tokens_per_byte REAL NOT NULL CHECK (tokens_per_byte > 0),
    sample_records  INTEGER NOT NULL CHECK (sample_records >= 0),
    sample_bytes    INTEGER NOT NULL CHECK (sample_bytes >= 0),
    sample_tokens   INTEGER NOT NULL CHECK (sample_tokens >= 0),
    PRIMARY KEY (recipe_id, source)
) STRICT, WITHOUT ROWID;

-- A training job's data stream. lanes is the recipe's L; digest_kind says
-- which digests it reports ('ordo' lane/batch digests, or a foreign kind
-- that is compared only with its own kind). data_root is the folder the
-- recipe's relative shard paths were resolved in (not part of the data:
-- moving a corpus keeps its recipe id). step_count is the number of
-- its steps rows, kept by the recording transaction (count(*) would read
-- every step row of the run).
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY CHECK (id BETWEEN 1 AND 8388607), -- fits a step key
    name        TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 255),
    recipe_id   TEXT NOT NULL REFERENCES recipes (id),
    group_tag   TEXT CHECK (group_tag IS NULL OR length(group_tag) BETWEEN 1 AND 255),
    baseline_id INTEGER REFERENCES runs (id),
    lanes       INTEGER NOT NULL CHECK (lanes >= 1),
    digest_kind TEXT NOT NULL DEFAULT 'ordo',
    data_root   TEXT,
    step_count  INTEGER NOT NULL DEFAULT 0 CHECK (step_count >= 0),
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;
CREATE INDEX runs_by_recipe ON runs (recipe_id, group_tag);

-- A stretch of a run at one world size. lane_plan is the rank → lanes
-- assignment as JSON ([[lanes of rank 0], [lanes of rank 1], …]). end_step
-- is NULL while the segment is the run's open, latest one.
CREATE TABLE segments (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs (id),
    ordinal      INTEGER NOT NULL CHECK (ordinal >= 0),
    world_size   INTEGER NOT NULL CHECK (world_size >= 1),
    lanes        INTEGER NOT NULL CHECK (lanes >= 1),
    lane_binding TEXT NOT NULL CHECK (lane_binding IN ('logical', 'rank')),
    start_step   INTEGER NOT NULL CHECK (start_step >= 1),
    end_step     INTEGER CHECK (end_step IS NULL OR end_step >= start_step - 1),
    resumed_from INTEGER CHECK (resumed_from IS NULL OR resumed_from >= 1),
    lane_plan    TEXT NOT NULL,
    workers      TEXT,
    host         TEXT,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (run_id, ordinal)
) STRICT;

-- Checkpoint after step `step` was consumed: the per-lane replay state
-- (flush epoch, samples delivered, work-source cursors), lanes records long.
CREATE TABLE checkpoints (
    run_id     INTEGER NOT NULL REFERENCES runs (id),
    step       INTEGER NOT NULL CHECK (step >= 1),
    lanes      INTEGER NOT NULL CHECK (lanes >= 1),
    lane_state BLOB NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (run_id, step)
) STRICT, WITHOUT ROWID;

-- One row per step of a run, keyed by run_id * 2^40 + step in the rowid:
-- one B-tree, no separate (run_id, step) index, a run's steps stored
-- together in step order (measured: recording runs at ~0.9 of a bare
-- insert instead of ~0.75 with a unique index). run_id and step are
-- virtual columns of the key, computed only when read. This table is the
-- hot path, so its rules (run exists, step range, 32-byte digests, lane
-- count of the segment, batch digest = SHA-256 of the lane digests,
-- counts >= 0) are checked by the recording code inside the write
-- transaction rather than by foreign keys and CHECKs (measured: those cost
-- 10-15% of the insert rate). lane_digests holds lanes × 32 bytes in lane
-- order (NULL when only a whole-step digest was reported); source_tokens
-- is the per-source token counts, 8-byte little-endian each, in recipe
-- source order; metrics is a JSON object of further scalars.
CREATE TABLE steps (
    key           INTEGER PRIMARY KEY,
    run_id        INTEGER GENERATED ALWAYS AS (key >> 40) VIRTUAL,
    step          INTEGER GENERATED ALWAYS AS (key & 1099511627775) VIRTUAL,
    batch_digest  BLOB NOT NULL,
    lane_digests  BLOB,
    tokens        INTEGER,
    pad_tokens    INTEGER,
    source_tokens BLOB,
    loss          REAL,
    metrics       TEXT
) STRICT;

-- What happened besides steps: conflicts (a step re-reported with another
-- digest; the first report stays), resumes, divergences, replay mismatches.
-- digest is the reported digest of a conflict, so a retried report does not
-- add a second event.
CREATE TABLE events (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER REFERENCES runs (id),
    step       INTEGER CHECK (step IS NULL OR step >= 1),
    kind       TEXT NOT NULL CHECK (kind IN ('conflict', 'resume', 'divergence',
                                             'replay_mismatch', 'skip')),
    digest     BLOB CHECK (digest IS NULL OR length(digest) = 32),
    detail     TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;
CREATE INDEX events_by_run ON events (run_id, kind, step);
CREATE UNIQUE INDEX events_once ON events (run_id, kind, step, digest)
    WHERE digest IS NOT NULL;

-- API tokens: only the SHA-256 of the secret is kept.
CREATE TABLE api_tokens (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    role       TEXT NOT NULL CHECK (role IN ('writer', 'reader')),
    token_hash BLOB NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    revoked_at TEXT
) STRICT;
