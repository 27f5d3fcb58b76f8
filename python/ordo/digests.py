"""Lane and batch digests (docs/recipe.md, "How a lane's data is decided")
from a token batch, for jobs whose
loader is not ordo: a lane's digest is the SHA-256 of its rows' token ids
as unsigned 32-bit little-endian integers, row after row; the batch digest
is the SHA-256 of the lane digests in lane order."""
import hashlib
import struct


def _rows(batch):
    """The batch as a list of rows of ints (lists, numpy arrays or tensors)."""
    if hasattr(batch, "tolist"):
        batch = batch.tolist()
    return [list(row) for row in batch]


def lane_digests(batch, lanes):
    """Hex digests of the `lanes` lanes of a global batch [B][seq_len]
    (lane l holds rows l*B/L .. (l+1)*B/L - 1)."""
    rows = _rows(batch)
    if lanes < 1 or len(rows) % lanes:
        raise ValueError(f"the batch's {len(rows)} rows do not split into {lanes} lanes")
    per = len(rows) // lanes
    out = []
    for lane in range(lanes):
        h = hashlib.sha256()
        for row in rows[lane * per:(lane + 1) * per]:
            if any(t < 0 or t > 0xFFFFFFFF for t in row):
                raise ValueError("token ids must fit in 32 bits")
            h.update(struct.pack(f"<{len(row)}I", *row))
        out.append(h.hexdigest())
    return out


def batch_digest(lane_digest_hex):
    """The batch digest (hex) of lane digests (hex) in lane order."""
    h = hashlib.sha256()
    for d in lane_digest_hex:
        raw = bytes.fromhex(d)
        if len(raw) != 32:
            raise ValueError("a lane digest is 64 hex characters")
        h.update(raw)
    return h.hexdigest()
