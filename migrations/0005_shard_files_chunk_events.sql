-- Shard files as last hashed: a file's SHA-256 when it had this size and
-- modification time. Opening a recipe whose shard files are unchanged takes
-- their digests from here instead of hashing every byte again; the time is
-- only a hint, the content is checked chunk by chunk as it is read against
-- the chunk digests of shards.chunk_digests. A file whose size or time
-- differs is hashed again and its row replaced.
CREATE TABLE shard_files (
    path       TEXT PRIMARY KEY, -- resolved absolute path (realpath)
    size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
    mtime_ns   INTEGER NOT NULL,
    sha256     BLOB NOT NULL CHECK (length(sha256) = 32)
) STRICT;

-- Chunk mismatches: a job stopped because a chunk's bytes differ from those
-- indexed is an event of its run (kind 'chunk_mismatch', the detail naming
-- shard, chunk and both digests). SQLite cannot change a CHECK constraint,
-- so the events table is made again with the new kind and its rows copied.
ALTER TABLE events RENAME TO events_before_0008;
CREATE TABLE events (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER REFERENCES runs (id),
    step       INTEGER CHECK (step IS NULL OR step >= 1),
    kind       TEXT NOT NULL CHECK (kind IN ('conflict', 'resume', 'divergence',
                                             'replay_mismatch', 'skip', 'chunk_mismatch')),
    digest     BLOB CHECK (digest IS NULL OR length(digest) = 32),
    detail     TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;
INSERT INTO events (id, run_id, step, kind, digest, detail, created_at)
    SELECT id, run_id, step, kind, digest, detail, created_at FROM events_before_0008;
DROP TABLE events_before_0008;
CREATE INDEX events_by_run ON events (run_id, kind, step);
CREATE UNIQUE INDEX events_once ON events (run_id, kind, step, digest)
    WHERE digest IS NOT NULL;
