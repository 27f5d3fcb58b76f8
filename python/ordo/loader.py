"""libordo's loader through ctypes: an iterable of batches for (recipe,
rank, world size), with state_dict() / load_state_dict() in the form
PyTorch trainers expect (TorchTitan's Stateful protocol).

Each batch is a dict: ``tokens`` and ``doc_start`` [rows, sample_len] (numpy
uint32 and uint8 arrays; lists of lists without numpy; ``tokens`` a torch
int64 tensor with ``as_torch=True``, which needs torch), ``step``,
``seq_len``, ``sample_len`` (seq_len, or seq_len + 1 under the recipe's
``"labels": "shifted"``), ``lanes``, ``lane_digests`` (hex), ``pad_tokens``, ``source_tokens``, and
``source`` [rows]: the recipe source index of each sample (every token of
a sample is of one source; -1 for a rank-bound sample holding several), a
numpy int64 array (a list without numpy, an int64 tensor with
``as_torch=True``) for per-source losses. With ``as_torch=True``
``doc_start`` is a bool tensor.
libordo.so is found through $ORDO_LIB, inside the installed package
(ordo/_lib/libordo.so, as the wheel ships it), next to this package's build
(build/libordo.so), or the system's library path, in that order.

Opening a loader indexes the recipe's shards (chunk tables, token
estimates); the index is kept in the ledger ``db`` when one is given, else
in a cache file ``.ordo-index.db`` next to the recipe (or the path given as
``index_cache``; ``index_cache=False`` turns it off), so later opens and
restarts reuse it instead of reading every shard again. It is keyed by the
recipe id and each shard's path and SHA-256, so a changed shard is indexed
again."""
import base64
import ctypes
import logging
import os

log = logging.getLogger("ordo")
INDEX_CACHE_NAME = ".ordo-index.db"

ERROR_MESSAGE_SIZE = 512


class _Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * ERROR_MESSAGE_SIZE)]


class _Options(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int), ("world_size", ctypes.c_int),
                ("read_workers", ctypes.c_int), ("tokenize_workers", ctypes.c_int),
                ("prefetch", ctypes.c_int), ("lane_binding", ctypes.c_int),
                ("resume", ctypes.c_void_p), ("resume_size", ctypes.c_size_t),
                ("ledger", ctypes.c_void_p), ("run_id", ctypes.c_int64)]


NAME_MAX = 255


class _RunInfo(ctypes.Structure):
    """ordo_run_info, field for field (ordo.h)."""
    _fields_ = [("id", ctypes.c_int64), ("name", ctypes.c_char * (NAME_MAX + 1)),
                ("recipe_id", ctypes.c_char * 65), ("recipe_name", ctypes.c_char * (NAME_MAX + 1)),
                ("group_tag", ctypes.c_char * (NAME_MAX + 1)),
                ("baseline", ctypes.c_char * (NAME_MAX + 1)), ("digest_kind", ctypes.c_char * 32),
                ("created_at", ctypes.c_char * 32), ("data_root", ctypes.c_char * 4096),
                ("lanes", ctypes.c_int), ("world_size", ctypes.c_int),
                ("segments", ctypes.c_int64), ("steps", ctypes.c_int64),
                ("first_step", ctypes.c_int64), ("last_step", ctypes.c_int64),
                ("checkpoints", ctypes.c_int64), ("conflicts", ctypes.c_int64),
                ("lane_states", ctypes.c_int64)]


class _Batch(ctypes.Structure):
    _fields_ = [("step", ctypes.c_int64), ("rows", ctypes.c_int), ("seq_len", ctypes.c_int),
                ("sample_len", ctypes.c_int),
                ("tokens", ctypes.POINTER(ctypes.c_uint32)),
                ("doc_start", ctypes.POINTER(ctypes.c_uint8)),
                ("lane_count", ctypes.c_int), ("lanes", ctypes.POINTER(ctypes.c_int)),
                ("lane_digests", ctypes.POINTER(ctypes.c_ubyte)),
                ("pad_tokens", ctypes.c_int64), ("source_count", ctypes.c_int),
                ("source_tokens", ctypes.POINTER(ctypes.c_int64)),
                ("sources", ctypes.POINTER(ctypes.c_int32))]


class _RecipeInfo(ctypes.Structure):
    """ordo_recipe_info, field for field (ordo.h)."""
    _fields_ = [("name", ctypes.c_char_p), ("seed", ctypes.c_uint64), ("seq_len", ctypes.c_int),
                ("sample_len", ctypes.c_int), ("labels_shifted", ctypes.c_int),
                ("global_batch", ctypes.c_int), ("lanes", ctypes.c_int),
                ("flush_every", ctypes.c_int), ("shuffle", ctypes.c_int),
                ("source_count", ctypes.c_int), ("vocab_size", ctypes.c_int),
                ("eot_id", ctypes.c_uint32), ("pad_id", ctypes.c_uint32),
                ("bos_id", ctypes.c_uint32)]


def _library():
    here = os.path.dirname(__file__)
    candidates = [os.environ.get("ORDO_LIB"),
                  os.path.join(here, "_lib", "libordo.so"),  # the wheel's own copy
                  os.path.join(here, "..", "..", "build", "libordo.so"),
                  "libordo.so.0", "libordo.so"]
    for path in candidates:
        if not path:
            continue
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError:
            continue
    else:
        raise OSError("libordo.so not found: build it (make) or set ORDO_LIB")
    P, E = ctypes.c_void_p, ctypes.POINTER(_Error)
    sig = {
        "ordo_recipe_load_with": ([ctypes.c_char_p, P, ctypes.POINTER(P), E], ctypes.c_int),
        "ordo_recipe_hashed": ([P, ctypes.POINTER(ctypes.c_int),
                                ctypes.POINTER(ctypes.c_uint64)], None),
        "ordo_recipe_index": ([P, P, P, P, E], ctypes.c_int),
        "ordo_recipe_open_plan": ([ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                   ctypes.c_char_p, ctypes.POINTER(P), E], ctypes.c_int),
        "ordo_recipe_open_stored": ([P, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(P), E],
                                    ctypes.c_int),
        "ordo_recipe_free": ([P], None),
        "ordo_recipe_id": ([P], ctypes.c_char_p),
        "ordo_recipe_canonical": ([P], ctypes.c_char_p),
        "ordo_recipe_describe": ([P, ctypes.POINTER(_RecipeInfo)], None),
        "ordo_recipe_source_name": ([P, ctypes.c_int], ctypes.c_char_p),
        "ordo_checkpoint_describe": ([P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int),
                                      ctypes.POINTER(ctypes.c_int64), E], ctypes.c_int),
        "ordo_recipe_indexed_shards": ([P], ctypes.c_int),
        "ordo_ledger_open": ([ctypes.c_char_p, ctypes.c_uint, ctypes.POINTER(P), E], ctypes.c_int),
        "ordo_ledger_close": ([P], None),
        "ordo_loader_open": ([P, ctypes.POINTER(_Options), ctypes.POINTER(P), E], ctypes.c_int),
        "ordo_loader_next": ([P, ctypes.POINTER(_Batch), E], ctypes.c_int),
        "ordo_loader_checkpoint": ([P, ctypes.POINTER(ctypes.POINTER(ctypes.c_ubyte)),
                                    ctypes.POINTER(ctypes.c_size_t), E], ctypes.c_int),
        "ordo_checkpoint_merge": ([ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                                   ctypes.c_int, ctypes.POINTER(ctypes.POINTER(ctypes.c_ubyte)),
                                   ctypes.POINTER(ctypes.c_size_t), E], ctypes.c_int),
        "ordo_loader_close": ([P], None),
        "ordo_free": ([P], None),
        "ordo_run_get": ([P, ctypes.c_char_p, ctypes.POINTER(_RunInfo), E], ctypes.c_int),
        "ordo_lane_binding_parse": ([ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), E],
                                    ctypes.c_int),
        "ordo_version_string": ([], ctypes.c_char_p),
    }
    for name, (args, result) in sig.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, result
    _check_structs(lib, path)
    return lib


# The structs mirrored here, by their names in ordo.h.
_MIRRORS = {"ordo_error": _Error, "ordo_recipe_info": _RecipeInfo,
            "ordo_loader_options": _Options, "ordo_batch": _Batch, "ordo_run_info": _RunInfo}


def _check_structs(lib, path):
    """Refuses a library whose structs are not the size of this binding's
    copies (another version): the library would write past them."""
    size = lib.ordo_struct_size
    size.argtypes, size.restype = [ctypes.c_char_p], ctypes.c_size_t
    for name, mirror in _MIRRORS.items():
        theirs, ours = size(name.encode()), ctypes.sizeof(mirror)
        if theirs != ours:
            raise OSError(f"{path}: struct {name} is {theirs} bytes there, {ours} in this "
                          f"binding (ordo {lib.ordo_version_string().decode()} and another "
                          "version's Python package); use the package's own library")


_lib = None


def lib():
    global _lib
    if _lib is None:
        _lib = _library()
    return _lib


class OrdoError(RuntimeError):
    pass


def _check(status, err):
    if status != 0:
        raise OrdoError(err.message.decode("utf-8", "replace"))


def _is_recipe_id(value):
    """A recipe id (64 lowercase hex) that is not the name of a file."""
    return (isinstance(value, str) and len(value) == 64
            and all(c in "0123456789abcdef" for c in value) and not os.path.exists(value))


def merge_states(states):
    """Joins the per-rank states (bytes) of one step into the checkpoint of
    every lane that a resume at any world size needs."""
    n = len(states)
    buffers = [ctypes.create_string_buffer(s, len(s)) for s in states]
    ptrs = (ctypes.c_void_p * n)(*[ctypes.cast(b, ctypes.c_void_p) for b in buffers])
    sizes = (ctypes.c_size_t * n)(*[len(s) for s in states])
    out, size, err = ctypes.POINTER(ctypes.c_ubyte)(), ctypes.c_size_t(), _Error()
    _check(lib().ordo_checkpoint_merge(ptrs, sizes, n, ctypes.byref(out), ctypes.byref(size),
                                       ctypes.byref(err)), err)
    try:
        return ctypes.string_at(out, size.value)
    finally:
        lib().ordo_free(out)


def describe_state(state):
    """The lanes a state (bytes) covers and the step it follows, as
    (lanes, step); OrdoError for bytes that are not a state."""
    buffer = ctypes.create_string_buffer(state, len(state))
    lanes, step, err = ctypes.c_int(), ctypes.c_int64(), _Error()
    _check(lib().ordo_checkpoint_describe(ctypes.cast(buffer, ctypes.c_void_p), len(state),
                                          ctypes.byref(lanes), ctypes.byref(step),
                                          ctypes.byref(err)), err)
    return lanes.value, step.value


class Loader:
    """One rank's loader: iterate for batches; checkpoint with state_dict().
    With db (a ledger) and run (the run the states were recorded for), a
    resume (state=, load_state_dict) checks the samples it replays against
    the lane digests the ledger recorded and refuses a state that does not
    reproduce them, naming the step and the lane."""

    def __init__(self, recipe, rank, world_size, db=None, read_workers=1, tokenize_workers=1,
                 lane_binding="logical", state=None, as_torch=False, index_cache=None,
                 run=None, plan_url=None, token=None, data_root=None):
        """Opens rank `rank` of `world_size` over the recipe file `recipe`.
        The index is kept in the ledger `db` when given, else in
        `index_cache` (default: .ordo-index.db next to the recipe; False:
        none). `state` (bytes) resumes; `as_torch` hands out torch tensors
        (ImportError without torch). With `db` and `run` (the run the
        state was recorded for) a resume checks its replay against the
        ledger.

        From an existing index, hashing and indexing no shard (each chunk is
        checked against its recorded digest as it is read): `recipe` is then
        the recipe id (64 hex), opened with the plan the service at
        `plan_url` serves (GET /api/recipes/{id}/plan, bearer `token` when
        given), or else the plan the ledger `db` holds. Relative shard paths
        resolve in `data_root` (default: the current folder)."""
        if as_torch:
            try:
                import torch  # noqa: F401
            except ImportError as e:
                raise ImportError(f"Loader(as_torch=True) needs PyTorch ({e}); install torch "
                                  "(Debian: python3-torch) or pass as_torch=False") from None
        L = lib()
        err = _Error()
        self._recipe = ctypes.c_void_p()
        self._loader = ctypes.c_void_p()
        self._ledger = ctypes.c_void_p()
        self.as_torch = as_torch
        self.rank, self.world_size = rank, world_size
        self.plan_url = plan_url
        if plan_url is not None or _is_recipe_id(recipe):
            self.index_cache = None
            self._open_indexed(recipe, db, plan_url, token, data_root)
        else:
            # The ledger first: shards it already hashed are not hashed again
            # (their chunks are checked as they are read).
            self.index_cache = self._open_index(recipe, db, index_cache)
        try:
            if not self._recipe:
                _check(L.ordo_recipe_load_with(os.fsencode(recipe), self._ledger,
                                               ctypes.byref(self._recipe), ctypes.byref(err)), err)
            _check(L.ordo_recipe_index(self._recipe, self._ledger, None, None,
                                       ctypes.byref(err)), err)
        finally:
            # only indexing needs it, unless resumes are checked
            if not (db and run) and self._ledger:
                L.ordo_ledger_close(self._ledger)
                self._ledger = ctypes.c_void_p()
        self.recipe_id = L.ordo_recipe_id(self._recipe).decode("ascii")
        self.indexed_shards = L.ordo_recipe_indexed_shards(self._recipe)
        hashed, hashed_bytes = ctypes.c_int(), ctypes.c_uint64()
        L.ordo_recipe_hashed(self._recipe, ctypes.byref(hashed), ctypes.byref(hashed_bytes))
        self.hashed_shards, self.hashed_bytes = hashed.value, hashed_bytes.value
        # the library reads the binding's name ("logical", "rank") into its enum
        binding, err = ctypes.c_int(), _Error()
        _check(L.ordo_lane_binding_parse(lane_binding.encode(), ctypes.byref(binding),
                                         ctypes.byref(err)), err)
        self._binding = binding.value
        # With a ledger and the run the state was recorded for, a resume
        # checks the samples it replays against the recorded lane digests.
        self._run = run.encode() if db and run else None
        self._read, self._tokenize = read_workers, tokenize_workers
        self._open(state)

    def _open_indexed(self, recipe_id, db, plan_url, token, data_root):
        """Opens the recipe `recipe_id` from an existing index: the plan the
        service at `plan_url` serves, else the one the ledger `db` holds."""
        if not _is_recipe_id(recipe_id):
            raise ValueError(f"Loader(plan_url=...) takes the recipe id (64 lowercase hex), "
                             f"not {recipe_id!r}")
        if plan_url is None and not db:
            raise ValueError(f"Loader({recipe_id[:12]}...) opens a recipe id from an index: "
                             "give plan_url (ordo serve) or db (a ledger that indexed it)")
        err = _Error()
        root = os.fsencode(os.path.abspath(data_root or os.curdir))
        if db:  # kept for resume checks, or read for the plan
            _check(lib().ordo_ledger_open(os.fsencode(db), 0, ctypes.byref(self._ledger),
                                          ctypes.byref(err)), err)
        if plan_url is not None:
            from .client import fetch_plan
            plan = fetch_plan(plan_url, recipe_id, token=token)
            _check(lib().ordo_recipe_open_plan(plan, len(plan), recipe_id.encode(), root,
                                               ctypes.byref(self._recipe), ctypes.byref(err)), err)
        else:
            _check(lib().ordo_recipe_open_stored(self._ledger, recipe_id.encode(), root,
                                                 ctypes.byref(self._recipe), ctypes.byref(err)),
                   err)

    def _open_index(self, recipe, db, index_cache):
        """Opens the ledger that keeps the index; returns its path or None."""
        err = _Error()
        if db:
            _check(lib().ordo_ledger_open(os.fsencode(db), 0, ctypes.byref(self._ledger),
                                          ctypes.byref(err)), err)
            return db
        if index_cache is False:
            return None
        path = index_cache or os.path.join(os.path.dirname(os.path.abspath(recipe)),
                                           INDEX_CACHE_NAME)
        if lib().ordo_ledger_open(os.fsencode(path), 0, ctypes.byref(self._ledger),
                                  ctypes.byref(err)) != 0:
            log.warning("ordo: no index cache (%s): every open indexes the shards again",
                        err.message.decode("utf-8", "replace"))
            self._ledger = ctypes.c_void_p()
            return None
        return path

    def _open(self, state):
        err = _Error()
        if self._loader:
            lib().ordo_loader_close(self._loader)
            self._loader = ctypes.c_void_p()
        self._state_buffer = ctypes.create_string_buffer(state, len(state)) if state else None
        run_id = 0
        if self._run and state:  # the library takes the run's id: resolve its name once
            info = _RunInfo()
            _check(lib().ordo_run_get(self._ledger, self._run, ctypes.byref(info),
                                      ctypes.byref(err)), err)
            run_id = info.id
        opts = _Options(rank=self.rank, world_size=self.world_size, read_workers=self._read,
                        tokenize_workers=self._tokenize, prefetch=0, lane_binding=self._binding,
                        resume=ctypes.cast(self._state_buffer, ctypes.c_void_p) if state else None,
                        resume_size=len(state) if state else 0,
                        ledger=self._ledger if self._run else None, run_id=run_id)
        _check(lib().ordo_loader_open(self._recipe, ctypes.byref(opts), ctypes.byref(self._loader),
                                      ctypes.byref(err)), err)

    def __iter__(self):
        return self

    def __next__(self):
        b, err = _Batch(), _Error()
        _check(lib().ordo_loader_next(self._loader, ctypes.byref(b), ctypes.byref(err)), err)
        width = b.sample_len  # seq_len, or seq_len + 1 under "labels": "shifted"
        n = b.rows * width
        raw = ctypes.string_at(b.tokens, n * 4)
        digests = ctypes.string_at(b.lane_digests, b.lane_count * 32)
        batch = {"step": b.step, "rows": b.rows, "seq_len": b.seq_len,
                 "sample_len": width,
                 "lanes": [b.lanes[i] for i in range(b.lane_count)],
                 "lane_digests": [digests[i * 32:(i + 1) * 32].hex() for i in range(b.lane_count)],
                 "pad_tokens": b.pad_tokens,
                 "source_tokens": [b.source_tokens[i] for i in range(b.source_count)]}
        sources = [b.sources[r] for r in range(b.rows)]
        starts = ctypes.string_at(b.doc_start, n)
        try:
            import numpy as np
        except ImportError:
            np = None
        if np is not None:
            tokens = np.frombuffer(raw, dtype="<u4").reshape(b.rows, width).copy()
            batch["doc_start"] = np.frombuffer(starts, dtype=np.uint8).reshape(
                b.rows, width).copy()
            sources = np.array(sources, dtype=np.int64)
            if self.as_torch:
                import torch
                tokens = torch.from_numpy(tokens.astype(np.int64))
                sources = torch.from_numpy(sources)
                batch["doc_start"] = torch.from_numpy(batch["doc_start"].astype(bool))
        else:
            import array
            flat = array.array("I")
            flat.frombytes(raw)
            tokens = [flat[r * width:(r + 1) * width].tolist() for r in range(b.rows)]
            batch["doc_start"] = [list(starts[r * width:(r + 1) * width])
                                  for r in range(b.rows)]
            if self.as_torch:
                import torch
                tokens = torch.tensor(tokens, dtype=torch.int64)
                sources = torch.tensor(sources, dtype=torch.int64)
                batch["doc_start"] = torch.tensor(batch["doc_start"], dtype=torch.bool)
        batch["tokens"] = tokens
        batch["source"] = sources
        return batch

    def recipe_info(self):
        """The numbers that fix this loader's data (ordo_recipe_info) as a
        dict, with the recipe's ``id``, its resolved ``canonical`` JSON text
        and its ``sources`` (names in recipe order)."""
        L, info = lib(), _RecipeInfo()
        L.ordo_recipe_describe(self._recipe, ctypes.byref(info))
        out = {name: getattr(info, name) for name, _ in _RecipeInfo._fields_}
        out["name"] = (info.name or b"").decode("utf-8", "replace")
        out["id"] = self.recipe_id
        out["canonical"] = L.ordo_recipe_canonical(self._recipe).decode("utf-8")
        out["sources"] = [L.ordo_recipe_source_name(self._recipe, i).decode("utf-8")
                          for i in range(info.source_count)]
        return out

    def state(self):
        """This rank's lanes' replay state after its last batch (bytes)."""
        out, size, err = ctypes.POINTER(ctypes.c_ubyte)(), ctypes.c_size_t(), _Error()
        _check(lib().ordo_loader_checkpoint(self._loader, ctypes.byref(out), ctypes.byref(size),
                                            ctypes.byref(err)), err)
        try:
            return ctypes.string_at(out, size.value)
        finally:
            lib().ordo_free(out)

    def state_dict(self):
        """Stateful protocol: this rank's state (merge the ranks' states with
        merge_states before resuming at another world size)."""
        return {"ordo_state": base64.b64encode(self.state()).decode("ascii")}

    def load_state_dict(self, state_dict):
        """Stateful protocol: resume from a state: this rank's own (its
        state_dict) at the same world size, or one holding every lane this
        rank owns, e.g. the ranks' states joined by merge_states (what a
        resume at another world size needs). Another state is refused with
        OrdoError naming the missing lane."""
        self._open(base64.b64decode(state_dict["ordo_state"]))

    def close(self):
        L = lib()
        if self._loader:
            L.ordo_loader_close(self._loader)
            self._loader = ctypes.c_void_p()
        if self._recipe:
            L.ordo_recipe_free(self._recipe)
            self._recipe = ctypes.c_void_p()
        if self._ledger:
            L.ordo_ledger_close(self._ledger)
            self._ledger = ctypes.c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

