-- Chunk digests: for every indexed shard, the SHA-256 of each chunk's bytes
-- as they lie in the file (the compressed frame for .jsonl.zst), 32 bytes a
-- chunk in chunk-table order. The loader checks every chunk it reads
-- against them, so a shard changed during a run stops the run instead of
-- feeding other data. Shards indexed before this migration have none
-- (NULL); the next run that uses them indexes them again and fills it in.
ALTER TABLE shards ADD COLUMN chunk_digests BLOB
    CHECK (chunk_digests IS NULL OR length(chunk_digests) = 32 * chunks);
