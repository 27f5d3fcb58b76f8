-- Shards of every format, read through filters. A chunk table is now made
-- for a shard under a text field, a filter (its canonical JSON, '' for
-- none) and a chunk size, so the filter joins the key; each chunk also
-- records the physical index of its first record and where its locator
-- lies in chunk_aux (gzip access points, Parquet column ranges): 20 bytes
-- a chunk in chunk_extra (first record u64, aux offset u64, aux length
-- u32, little-endian). Rows indexed before this migration have no
-- chunk_extra (NULL): the next run that uses them indexes them again.
-- SQLite cannot change a UNIQUE constraint, so shards (and recipe_shards,
-- which refers to it) are made again and their rows copied.
CREATE TABLE shards_v6 (
    id            INTEGER PRIMARY KEY,
    path          TEXT NOT NULL,
    sha256        BLOB NOT NULL CHECK (length(sha256) = 32),
    text_field    TEXT NOT NULL,
    filter        TEXT NOT NULL DEFAULT '',
    chunk_records INTEGER NOT NULL CHECK (chunk_records >= 0),
    size_bytes    INTEGER NOT NULL CHECK (size_bytes >= 0),
    records       INTEGER NOT NULL CHECK (records >= 0),
    skipped       INTEGER NOT NULL CHECK (skipped >= 0),
    filtered      INTEGER NOT NULL DEFAULT 0 CHECK (filtered >= 0),
    chunks        INTEGER NOT NULL CHECK (chunks >= 0),
    chunk_table   BLOB NOT NULL CHECK (length(chunk_table) = 32 * chunks),
    indexed_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    chunk_digests BLOB CHECK (chunk_digests IS NULL OR length(chunk_digests) = 32 * chunks),
    chunk_extra   BLOB CHECK (chunk_extra IS NULL OR length(chunk_extra) = 20 * chunks),
    chunk_aux     BLOB,
    UNIQUE (path, sha256, text_field, filter, chunk_records)
) STRICT;
INSERT INTO shards_v6 (id, path, sha256, text_field, chunk_records, size_bytes, records,
                       skipped, chunks, chunk_table, indexed_at, chunk_digests)
    SELECT id, path, sha256, text_field, chunk_records, size_bytes, records, skipped, chunks,
           chunk_table, indexed_at, chunk_digests FROM shards;
CREATE TABLE recipe_shards_v6 (
    recipe_id TEXT NOT NULL REFERENCES recipes (id),
    source    TEXT NOT NULL,
    position  INTEGER NOT NULL CHECK (position >= 0),
    shard_id  INTEGER NOT NULL REFERENCES shards_v6 (id),
    PRIMARY KEY (recipe_id, source, position)
) STRICT, WITHOUT ROWID;
INSERT INTO recipe_shards_v6 SELECT recipe_id, source, position, shard_id FROM recipe_shards;
DROP TABLE recipe_shards;
DROP TABLE shards;
ALTER TABLE shards_v6 RENAME TO shards;
ALTER TABLE recipe_shards_v6 RENAME TO recipe_shards;
