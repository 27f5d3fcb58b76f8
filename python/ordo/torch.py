"""ordo for PyTorch trainers: a Dataset and a Stateful DataLoader over one
data-parallel rank's lanes (TorchTitan's BaseDataLoader shape), whose state
resumes at any world size dividing the recipe's lanes.

- ``Dataset(recipe, dp_rank, dp_world_size, grad_accum=1, ...)``: a
  ``torch.utils.data.IterableDataset``; each item is one microbatch of
  ``B / (dp_world_size * grad_accum)`` rows, ``grad_accum`` items a step.
  Use it as is, or under ``torch.utils.data.DataLoader(dataset,
  batch_size=None, num_workers=0 or 1, pin_memory=True)``: the loader is
  opened in ``__iter__`` (in the worker process), never pickled.
- ``DataLoader(recipe, dp_rank, dp_world_size, grad_accum=1, ...)``:
  ``__iter__``, ``state_dict()``, ``load_state_dict(sd)``. ``state_dict()``
  gathers every rank's lane states over the process group and returns the
  same merged state on every rank; ``load_state_dict`` takes it at any
  ``dp_world_size`` dividing the lanes and continues the uninterrupted
  stream.

An item is a dict:

- ``input``: int64 [rows, seq_len], the token ids.
- ``labels``: int64 [rows, seq_len], only under the recipe's ``"labels":
  "shifted"``: each sample is packed as seq_len + 1 tokens ``row``, and
  ``input = row[:, :-1]``, ``labels = row[:, 1:]`` (no token lost; the lane
  digests cover the seq_len + 1 tokens).
- ``position_ids``: int64 [rows, seq_len]; ``position_ids="document"`` (the
  default) counts from 0 at the start of every row and again at every
  document start; ``"sample"`` counts 0 .. seq_len - 1 in every row.
- ``doc_start``: bool [rows, seq_len], True where a document starts (input
  positions).
- ``source``: int64 [rows], the recipe source index of each row (-1 for a
  rank-bound sample holding several sources), for per-source losses.
- ``step`` (from 1), ``microbatch`` (0 .. grad_accum - 1), ``microbatches``
  (grad_accum).
- On the step's last item only (microbatch == grad_accum - 1), the rank's
  whole step: ``lanes`` (its lane numbers), ``lane_digests`` (hex, one per
  lane, in lane order), ``source_tokens`` (tokens per recipe source) and
  ``pad_tokens``; and, with logical lanes, on the first step of each flush
  epoch after the first (step > flush_every and (step - 1) % flush_every
  == 0) and on the first step a resumed Dataset delivers after the first
  epoch, ``lane_state``: the rank's lanes' state right after the step
  (bytes). ``ordo.torch.report`` joins the ranks' states and sends them
  with the step, so that the step's batch is regenerated from its epoch
  (``ordo batch``); nothing else needs it.

How a rank's step splits into microbatches: the rank's B / dp_world_size
rows are its lanes' rows in lane order (each lane B / L consecutive rows);
microbatch m holds the consecutive rows m * R .. (m + 1) * R - 1, with
R = B / (dp_world_size * grad_accum). A microbatch may span lanes, and a
lane may span microbatches.

Extra keyword arguments go to ``ordo.loader.Loader`` (``db=``,
``index_cache=``, ``read_workers=``, ...)."""
import base64
import json

import torch
import torch.utils.data

from . import loader as _loader

POSITION_IDS = ("document", "sample")
STATE_FORMAT = 1  # the layout of DataLoader.state_dict(); a newer one is refused
STATE_KEYS = ("ordo_state", "format", "recipe_id", "data_algorithm", "step", "microbatch",
              "dp_world_size", "grad_accum", "lane_binding")


class Dataset(torch.utils.data.IterableDataset):
    """One data-parallel rank's microbatches (see the module's docstring for
    an item's fields). Iterating starts at the beginning of the stream, or
    at `state` (a DataLoader.state_dict()) when given."""

    def __init__(self, recipe, dp_rank, dp_world_size, grad_accum=1, lane_binding="logical",
                 position_ids="document", global_batch=None, seq_len=None, state=None,
                 **loader_options):
        """Checks the configuration and refuses a bad one naming the
        numbers: lanes not divisible by dp_world_size, a rank outside the
        world (the library's refusals), a global batch not divisible by
        dp_world_size * grad_accum, and, when the trainer states them,
        a `global_batch` or `seq_len` that is not the recipe's."""
        super().__init__()
        if position_ids not in POSITION_IDS:
            raise ValueError(f"position_ids '{position_ids}' must be 'document' or 'sample'")
        for name, value in (("dp_rank", dp_rank), ("dp_world_size", dp_world_size),
                            ("grad_accum", grad_accum)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{name} must be an int, not {value!r}")
        if grad_accum < 1:
            raise ValueError(f"grad_accum ({grad_accum}) must be at least 1")
        if "state" in loader_options or "as_torch" in loader_options:
            raise TypeError("state and as_torch are the Dataset's own: pass a DataLoader "
                            "state_dict() as state=")
        self.recipe = recipe
        self.dp_rank, self.dp_world_size, self.grad_accum = dp_rank, dp_world_size, grad_accum
        self.lane_binding, self.position_ids = lane_binding, position_ids
        self._options = loader_options
        self._start, self._skip = None, 0
        # Opening checks rank, world size, lanes and binding; the loader is
        # closed again so that nothing live is pickled into a worker.
        probe = self._open()
        try:
            info = probe.recipe_info()
        finally:
            probe.close()
        self.recipe_id, self.recipe_name = info["id"], info["name"]
        self.data_algorithm = json.loads(info["canonical"]).get("data_algorithm")
        self.seq_len, self.sample_len = info["seq_len"], info["sample_len"]
        self.labels_shifted = bool(info["labels_shifted"])
        self.global_batch, self.lanes = info["global_batch"], info["lanes"]
        self.sources = info["sources"]
        self.flush_every = info["flush_every"]
        self._check_shape(global_batch, seq_len)
        self.rows = self.global_batch // dp_world_size
        self.microbatch_rows = self.rows // grad_accum
        if state is not None:
            self.load_state_dict(state)

    def _check_shape(self, global_batch, seq_len):
        """Refuses a split of the global batch that does not come out even,
        and a trainer's global batch or seq_len that is not the recipe's."""
        B, W, G = self.global_batch, self.dp_world_size, self.grad_accum
        if global_batch is not None and global_batch != B:
            raise ValueError(f"global batch {global_batch} is not the recipe's global_batch "
                             f"({B}) of recipe {self.recipe_id}")
        if seq_len is not None and seq_len != self.seq_len:
            raise ValueError(f"seq_len {seq_len} is not the recipe's seq_len ({self.seq_len}) "
                             f"of recipe {self.recipe_id}")
        if B % (W * G):
            raise ValueError(f"global batch ({B}) must be divisible by dp_world_size ({W}) x "
                             f"grad_accum ({G}) = {W * G}: each microbatch is "
                             f"B / (dp_world_size x grad_accum) rows")

    def _open(self):
        """A library loader of this rank at the start point (the caller
        closes it)."""
        return _loader.Loader(self.recipe, self.dp_rank, self.dp_world_size,
                              lane_binding=self.lane_binding, state=self._start, as_torch=True,
                              **self._options)

    def load_state_dict(self, state_dict):
        """Makes iteration start where `state_dict` (a DataLoader.state_dict(),
        taken at any dp_world_size) left off. Refuses, naming both values, a
        state of another recipe, of another data-algorithm version or state
        format, of another lane binding, and one taken in the middle of a
        step (grad_accum > 1) at another dp_world_size or grad_accum; the
        library refuses a state missing a lane of this rank."""
        state, skip = self._check_state(state_dict)
        previous = self._start, self._skip
        self._start, self._skip = state, skip
        try:
            self._open().close()  # the library's checks of the state, now
        except Exception:
            self._start, self._skip = previous
            raise

    def _check_state(self, sd):
        """The lane state (bytes) and microbatches to skip of a state dict,
        after checking it belongs to this loader's recipe and split."""
        if not isinstance(sd, dict) or any(k not in sd for k in STATE_KEYS):
            keys = sorted(sd) if isinstance(sd, dict) else type(sd).__name__
            raise ValueError(f"not a state of ordo.torch.DataLoader (it needs the keys "
                             f"{', '.join(STATE_KEYS)}; got {keys})")
        if sd["format"] != STATE_FORMAT:
            raise ValueError(f"the state is of state format {sd['format']}; this ordo reads "
                             f"state format {STATE_FORMAT}")
        if sd["data_algorithm"] != self.data_algorithm:
            raise ValueError(f"the state is of data algorithm {sd['data_algorithm']}; recipe "
                             f"{self.recipe_id} is of data algorithm {self.data_algorithm}, "
                             f"so the state's batches cannot be reproduced")
        if sd["recipe_id"] != self.recipe_id:
            raise ValueError(f"the state is of recipe {sd['recipe_id']} "
                             f"({sd.get('recipe_name', '?')}); this loader's recipe is "
                             f"{self.recipe_id} ({self.recipe_name})")
        if sd["lane_binding"] != self.lane_binding:
            raise ValueError(f"the state was taken with lane_binding '{sd['lane_binding']}'; "
                             f"this loader's is '{self.lane_binding}'")
        skip = sd["microbatch"]
        if skip and (sd["dp_world_size"], sd["grad_accum"]) != (self.dp_world_size,
                                                                self.grad_accum):
            raise ValueError(
                f"the state was taken in the middle of step {sd['step'] + 1} (after microbatch "
                f"{skip} of {sd['grad_accum']}) at dp_world_size {sd['dp_world_size']}, "
                f"grad_accum {sd['grad_accum']}; it resumes only at those, not at dp_world_size "
                f"{self.dp_world_size}, grad_accum {self.grad_accum} (take the state at a step's "
                f"end to change them)")
        try:
            state = base64.b64decode(sd["ordo_state"], validate=True)
        except (TypeError, ValueError) as e:
            raise ValueError(f"the state's ordo_state is not base64 ({e})") from None
        lanes, step = _loader.describe_state(state)
        if step != sd["step"]:
            raise ValueError(f"the state's lanes follow step {step}, the state says step "
                             f"{sd['step']}")
        return state, skip

    def __iter__(self):
        worker = torch.utils.data.get_worker_info()
        if worker is not None and worker.num_workers > 1:
            raise RuntimeError(f"ordo.torch.Dataset takes num_workers 0 or 1, not "
                               f"{worker.num_workers}: a rank's lanes are one ordered stream, "
                               f"which each worker would deliver again")
        return _Stream(self)

    def _item(self, step, microbatch):
        """Microbatch `microbatch` of the step `step` (a _Step)."""
        lo = microbatch * self.microbatch_rows
        hi = lo + self.microbatch_rows
        S = self.seq_len
        rows = step.tokens[lo:hi]
        starts = step.doc_start[lo:hi, :S].contiguous()
        item = {"input": rows[:, :S].contiguous()}
        if self.labels_shifted:
            item["labels"] = rows[:, 1:].contiguous()
        item["position_ids"] = (_document_positions(starts) if self.position_ids == "document"
                                else torch.arange(S, dtype=torch.int64).repeat(hi - lo, 1))
        item["doc_start"] = starts
        item["source"] = step.source[lo:hi].clone()
        item["step"], item["microbatch"] = step.number, microbatch
        item["microbatches"] = self.grad_accum
        if microbatch == self.grad_accum - 1:
            item.update(step.totals)
        return item


def _document_positions(starts):
    """Positions [rows, S] counting from 0 at each row's start and at every
    True of `starts` (bool [rows, S])."""
    rows, S = starts.shape
    index = torch.arange(S, dtype=torch.int64).repeat(rows, 1)
    marks = torch.where(starts, index, torch.zeros_like(index))
    return index - torch.cummax(marks, dim=1).values


class _Step:
    """One batch of the library (the loader's as_torch tensors: tokens and
    source int64, doc_start bool), with the lanes' state after it when it
    is to carry one (`lane_state`, bytes, or None)."""

    def __init__(self, batch, lane_state=None):
        self.number = batch["step"]
        self.tokens, self.doc_start = batch["tokens"], batch["doc_start"]
        self.source = batch["source"]
        self.totals = {"lanes": list(batch["lanes"]), "lane_digests": list(batch["lane_digests"]),
                       "source_tokens": [int(t) for t in batch["source_tokens"]],
                       "pad_tokens": int(batch["pad_tokens"])}
        if lane_state is not None:
            self.totals["lane_state"] = lane_state


class _Stream:
    """An iterator over a Dataset's items from its start point; knows its
    position (the lane state of the last whole step, and the microbatches
    of the next step already delivered)."""

    def __init__(self, dataset):
        self.dataset = dataset
        self.loader = dataset._open()
        self.before = self.loader.state()  # the lanes' state before self.step
        self.step = None
        self.delivered = dataset._skip  # microbatches of the next step already out

    def __iter__(self):
        return self

    def _carries_state(self, number, first):
        """Whether step `number` carries the lanes' state after it: the
        first step of each flush epoch after the first, and the first step
        this stream delivers after the first epoch (a resume in the middle
        of an epoch: every state of an epoch holds the same positions).
        Logical lanes only: rank-bound lanes are no one run's."""
        flush = self.dataset.flush_every
        return (self.dataset.lane_binding == "logical" and flush > 0 and number > flush
                and (first or (number - 1) % flush == 0))

    def __next__(self):
        G = self.dataset.grad_accum
        if self.step is None or self.delivered == G:
            first = self.step is None
            if not first:
                self.before = self.loader.state()
                self.delivered = 0
            batch = next(self.loader)
            state = self.loader.state() if self._carries_state(batch["step"], first) else None
            self.step = _Step(batch, state)
        item = self.dataset._item(self.step, self.delivered)
        self.delivered += 1
        return item

    def position(self):
        """(state bytes, whole steps done, microbatches of the next step
        delivered)."""
        G = self.dataset.grad_accum
        if self.step is not None and self.delivered == G:
            return self.loader.state(), self.step.number, 0
        if self.step is not None:
            return self.before, self.step.number - 1, self.delivered
        return self.before, _loader.describe_state(self.before)[1], self.delivered

    def close(self):
        self.loader.close()


def merge_state_dicts(parts):
    """Joins the per-rank states (DataLoader.local_state_dict() of every
    dp rank; duplicates of one rank, e.g. from tensor-parallel peers, are
    fine) into the state every rank returns from state_dict(). Refuses,
    naming them, ranks missing, or ranks at different positions."""
    first = parts[0]
    W = first["dp_world_size"]
    by_rank = {}
    for part in parts:
        for key in ("recipe_id", "step", "microbatch", "dp_world_size", "grad_accum",
                    "lane_binding", "data_algorithm"):
            if part[key] != first[key]:
                raise ValueError(f"dp rank {part['dp_rank']} has {key} {part[key]!r}, dp rank "
                                 f"{first['dp_rank']} has {first[key]!r}: the ranks' states "
                                 f"are of different positions")
        by_rank.setdefault(part["dp_rank"], part)
    missing = [r for r in range(W) if r not in by_rank]
    if missing:
        raise ValueError(f"no state of dp rank(s) {missing} of dp_world_size {W}")
    merged = _loader.merge_states([base64.b64decode(by_rank[r]["ordo_state"])
                                   for r in range(W)])
    out = {k: v for k, v in first.items() if k != "dp_rank"}
    out["ordo_state"] = base64.b64encode(merged).decode("ascii")
    return out


def _gather(obj, group):
    """Every process's `obj` (all_gather_object over `group`, the default
    process group when None); None when torch.distributed is not
    initialised."""
    import torch.distributed as dist
    if not (dist.is_available() and dist.is_initialized()):
        return None
    out = [None] * dist.get_world_size(group)
    dist.all_gather_object(out, obj, group=group)
    return out


class DataLoader:
    """The Stateful loader of one dp rank: iterate for items (the
    Dataset's), checkpoint with state_dict(), resume with
    load_state_dict() at any dp_world_size dividing the lanes.
    `process_group` (default: torch.distributed's default group, when
    initialised) is the group state_dict() gathers the ranks' states over."""

    def __init__(self, recipe, dp_rank, dp_world_size, grad_accum=1, lane_binding="logical",
                 position_ids="document", process_group=None, **options):
        """Checks the configuration (see Dataset) and refuses a bad one
        naming the numbers; extra keyword arguments go to Dataset."""
        self.dataset = Dataset(recipe, dp_rank, dp_world_size, grad_accum=grad_accum,
                               lane_binding=lane_binding, position_ids=position_ids, **options)
        self.process_group = process_group
        self._stream = None

    def __iter__(self):
        return self

    def __next__(self):
        if self._stream is None:
            self._stream = _Stream(self.dataset)
        return next(self._stream)

    def local_state_dict(self):
        """This rank's part of the state (plain types): its lanes' state and
        its position; merge_state_dicts joins the ranks' parts."""
        if self._stream is None:
            self._stream = _Stream(self.dataset)
        state, step, microbatch = self._stream.position()
        ds = self.dataset
        return {"ordo_state": base64.b64encode(state).decode("ascii"), "format": STATE_FORMAT,
                "recipe_id": ds.recipe_id, "recipe_name": ds.recipe_name,
                "data_algorithm": ds.data_algorithm, "step": step, "microbatch": microbatch,
                "dp_world_size": ds.dp_world_size, "grad_accum": ds.grad_accum,
                "dp_rank": ds.dp_rank, "lanes": ds.lanes, "global_batch": ds.global_batch,
                "lane_binding": ds.lane_binding}

    def state_dict(self):
        """Stateful: the merged state of every rank (all_gather_object over
        the process group; every rank calls it at the same position and gets
        the same dict of plain types, which torch.save keeps): `step` whole
        steps done and `microbatch` microbatches of the next one, the
        recipe's id and data-algorithm version, and every lane's state."""
        mine = self.local_state_dict()
        parts = _gather(mine, self.process_group)
        if parts is None and self.dataset.dp_world_size == 1:
            parts = [mine]  # a world of one: nothing to gather
        if parts is None:
            raise RuntimeError(f"state_dict() at dp_world_size {self.dataset.dp_world_size} "
                               f"gathers the ranks' states over torch.distributed, which is not "
                               f"initialised (or merge the ranks' local_state_dict() with "
                               f"ordo.torch.merge_state_dicts)")
        return merge_state_dicts(parts)

    def load_state_dict(self, state_dict):
        """Stateful: continues from `state_dict` (any rank's state_dict(),
        taken at any dp_world_size dividing the lanes): the next item is the
        one the uninterrupted stream would have given. Refusals: see
        Dataset.load_state_dict."""
        self.dataset.load_state_dict(state_dict)
        self.close()

    def close(self):
        """Stops the loader (iterating again reopens it at its start point)."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None


try:  # the reporting helper lives beside this module
    from ._report import report  # noqa: F401,E402
except ModuleNotFoundError as e:  # only its absence; an error inside it is raised
    if e.name != __package__ + "._report":
        raise

__all__ = ["Dataset", "DataLoader", "merge_state_dicts"] + (["report"] if "report" in globals()
                                                           else [])
