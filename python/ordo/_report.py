"""``ordo.torch.report``: one training step reported to ``ordo serve`` from
a torch.distributed job.

Every rank calls ``report(client, item, loss)`` once per step with the
step's last item (the one that carries ``lane_digests``). One collective
(``all_gather_object`` over the process group, the only synchronisation)
brings every rank's lanes, lane digests, token counts, loss and, on the
first step of a flush epoch, lanes' state to every rank; rank 0 then
queues the step on its ``ordo.Client``, whose background thread sends it:
nothing here waits on the network, and nothing the service does can raise
into training. Without torch.distributed initialised the job is a world
of one and there is no collective."""
import math

from .digests import batch_digest
from .loader import merge_states

__all__ = ["report"]


def _dist():
    """torch.distributed when a process group is up, else None."""
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    if not dist.is_available() or not dist.is_initialized():
        return None
    return dist


def _number(value, what):
    """A Python float from a float, int or one-element tensor (detached)."""
    if hasattr(value, "detach"):
        value = value.detach()
        if value.numel() != 1:
            raise ValueError(f"{what} must be one number, not a tensor of shape "
                             f"{tuple(value.shape)}")
        value = value.item()
    return float(value)


def _counts(value):
    """A list of ints from a list, numpy array or tensor (None stays None)."""
    if value is None:
        return None
    if hasattr(value, "tolist"):
        value = value.tolist()
    return [int(v) for v in value]


def _mine(item, loss, weight):
    """This rank's part of the step: what the collective carries."""
    if not isinstance(item, dict) or item.get("lane_digests") is None:
        step = item.get("step") if isinstance(item, dict) else None
        raise ValueError(f"step {step!r}: the item has no lane_digests; "
                         "call report once per step with the step's last item")
    lanes = _counts(item.get("lanes"))
    digests = list(item["lane_digests"])
    if lanes is None or len(lanes) != len(digests):
        raise ValueError(f"step {item.get('step')!r}: the item's lanes "
                         f"({lanes!r}) do not match its {len(digests)} lane digests")
    lane_state = item.get("lane_state")
    if lane_state is not None and not isinstance(lane_state, (bytes, bytearray)):
        raise TypeError(f"step {item.get('step')!r}: the item's lane_state is "
                        f"{type(lane_state).__name__}, not bytes")
    return {"step": int(item["step"]), "lanes": lanes, "digests": digests,
            "lane_state": None if lane_state is None else bytes(lane_state),
            "source_tokens": _counts(item.get("source_tokens")),
            "pad_tokens": None if item.get("pad_tokens") is None else int(item["pad_tokens"]),
            "loss": _number(loss, "loss"), "weight": 1.0 if weight is None else
            _number(weight, "weight")}


def _sum_counts(parts, key):
    """The ranks' counts summed (element-wise for lists); None unless every
    rank has them."""
    values = [p[key] for p in parts]
    if any(v is None for v in values):
        return None
    if isinstance(values[0], list):
        if any(len(v) != len(values[0]) for v in values):
            return None
        return [sum(column) for column in zip(*values)]
    return sum(values)


def _lane_state(parts, step):
    """Every lane's state from the ranks' states (None when no rank has
    one), joined in the order of the ranks' lanes."""
    having = [r for r, p in enumerate(parts) if p["lane_state"] is not None]
    if not having:
        return None
    if len(having) != len(parts):
        lacking = [r for r in range(len(parts)) if r not in having]
        raise RuntimeError(f"ordo.torch.report: at step {step} rank(s) "
                           f"{', '.join(map(str, having))} have a lane state and rank(s) "
                           f"{', '.join(map(str, lacking))} have none: the ranks' loaders are "
                           f"not of one run")
    ordered = sorted(parts, key=lambda p: min(p["lanes"], default=-1))
    return merge_states([p["lane_state"] for p in ordered])


def _combine(parts):
    """The global step from the ranks' parts (every rank computes the same:
    the parts are in rank order and summed in float64 in that order)."""
    steps = {p["step"] for p in parts}
    if len(steps) != 1:
        raise RuntimeError("ordo.torch.report: the ranks are at different steps: "
                           + ", ".join(f"rank {r} at {p['step']}" for r, p in enumerate(parts)))
    step = parts[0]["step"]
    lane_state = _lane_state(parts, step)
    by_lane = sorted((lane, d) for p in parts for lane, d in zip(p["lanes"], p["digests"]))
    weights = math.fsum(p["weight"] for p in parts)
    terms = [p["loss"] * p["weight"] for p in parts]
    if weights > 0 and all(math.isfinite(t) for t in terms):
        loss = math.fsum(terms) / weights
    else:  # a NaN or infinite loss on some rank: the step has no loss
        loss = math.nan
    sources = _sum_counts(parts, "source_tokens")
    pad = _sum_counts(parts, "pad_tokens")
    tokens = None if sources is None or pad is None else sum(sources) + pad
    digests = [d for _, d in by_lane]
    return {"step": step, "lanes": [lane for lane, _ in by_lane],
            "lane_digests": digests, "batch_digest": batch_digest(digests), "loss": loss,
            "tokens": tokens, "source_tokens": sources, "pad_tokens": pad,
            "lane_state": lane_state}


def report(client, item, loss, weight=None, metrics=None, group=None):
    """Reports one step of the global batch; call it on every rank, once per
    step, with the step's last item (an ``ordo.torch.Dataset`` /
    ``DataLoader`` item carrying ``lanes``, ``lane_digests``,
    ``source_tokens`` and ``pad_tokens`` for this rank's share of the step).

    `loss` is this rank's mean loss per predicted token over its share of
    the step (a float or a one-element tensor; detached here); `weight` the
    number of tokens it is the mean of (default: the same on every rank, as
    without a loss mask every rank predicts (B / W) × seq_len tokens). The
    reported loss is sum(loss_r × weight_r) / sum(weight_r) over the ranks:
    the token-weighted mean over the global batch, i.e. the training loss of
    the step. A NaN or infinite loss on any rank makes it NaN, which the
    client sends as null ("no loss"); nothing raises for it.

    The ranks' parts meet in one ``all_gather_object`` over `group` (default:
    the default process group; none when torch.distributed is not
    initialised: a world of one). Rank 0 queues, through `client` (an
    ``ordo.Client``; other ranks may pass None), the step with its lane
    digests in lane order (the service composes the batch digest), that
    global loss, the tokens (source tokens + pad tokens), the
    per-source tokens and pad tokens summed over the ranks, `metrics`
    (a dict of scalars), and, when the items carry ``lane_state`` (an
    ``ordo.torch.Dataset`` gives it with the first step of each flush epoch
    after the first), every lane's state: the ranks' states joined by
    ``ordo.loader.merge_states`` in the order of their lanes, so that the
    step's batch can be regenerated from its epoch. The client's queue and
    thread do the sending: this call never waits on the network, and a report the service refuses
    is logged and dropped by the client, never raised here.

    Returns the step's global figures, the same on every rank: a dict with
    step, lanes, lane_digests, batch_digest, loss, tokens, source_tokens,
    pad_tokens, lane_state (bytes or None). Raises ValueError on every rank
    alike (naming the ranks) when some rank's item has no lane digests (not
    a step's last item) or its loss is not a number, and RuntimeError when
    the ranks are at different steps or some have a lane state and others
    not."""
    try:
        mine = _mine(item, loss, weight)
    except (ValueError, TypeError) as e:  # raised on every rank, after the collective
        mine = {"error": f"{type(e).__name__}: {e}"}
    dist = _dist()
    if dist is None:
        parts, rank = [mine], 0
    else:
        parts = [None] * dist.get_world_size(group)
        dist.all_gather_object(parts, mine, group=group)
        rank = dist.get_rank(group)
    errors = [f"rank {r}: {p['error']}" for r, p in enumerate(parts) if "error" in p]
    if errors:
        raise ValueError("ordo.torch.report: " + "; ".join(errors))
    step = _combine(parts)
    if rank == 0 and client is not None:
        client.report_step(step["step"], lane_digests=step["lane_digests"], loss=step["loss"],
                           tokens=step["tokens"], source_tokens=step["source_tokens"],
                           pad_tokens=step["pad_tokens"], metrics=metrics,
                           lane_state=step["lane_state"])
    return step
