"""A REST client for ``ordo serve`` (standard library only).

``report_step`` and ``report_lane`` never raise and never block the training
step: each report is checked and encoded at once (a non-finite loss or
metric is sent as null; an argument that cannot be sent is logged, counted
in ``refused`` and dropped) and goes through a bounded queue to a background
thread that sends reports in batches. What the service refuses is narrowed
down to the refused reports alone (the batch is split until each refusal is
one report): those are logged and dropped, every other report is still sent.
Network errors, 5xx, 408/429 and answers that cannot be read are retried
with exponential backoff, as are 401/403/404 (a token or run that may yet
appear), so a service that restarts gets everything queued meanwhile. The
thread never dies: whatever goes wrong is caught, counted (``failures``,
``errors``) and retried. A full queue drops the new report, counts it in
``dropped`` and says so in the log. ``close()`` returns how many reports
were not stored (refused, dropped or still unsent)."""
import base64
import hashlib
import json
import logging
import math
import operator
import os
import queue
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

log = logging.getLogger("ordo")

# The largest request body the client sends: half the service's 64 MiB.
MAX_BODY = 32 << 20
# Statuses that say nothing about the reports themselves: kept and retried.
_RETRIED = frozenset((401, 403, 404, 408, 429))


class ClientError(Exception):
    """An answer of the service with a 4xx or 5xx status."""

    def __init__(self, status, body):
        self.status = status
        self.body = body
        try:
            message = json.loads(body).get("error", body)
        except (ValueError, AttributeError):
            message = body
        super().__init__(f"{status}: {message}")


def quote(value):
    """One URL path segment or query value, percent-encoded (a run name may
    hold spaces, '?', '#', '%' or any Unicode)."""
    return urllib.parse.quote(str(value), safe="")


def _query(values):
    """A query string, every value percent-encoded (a space as %20)."""
    return urllib.parse.urlencode(values, quote_via=urllib.parse.quote)


# ---- the canonical JSON the library hashes (Jansson's compact, sorted
# dump): the same bytes for the same value on both sides

_STRING_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n",
                   "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


def _string(text):
    def escape(match):
        ch = match.group(0)
        return _STRING_ESCAPES.get(ch) or "\\u%04X" % ord(ch)
    return '"' + _NEEDS_ESCAPE.sub(escape, text) + '"'


def _real(value):
    """A double as Jansson writes it: %.17g, a ".0" when it would read as an
    integer, the exponent without '+' or leading zeros."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} has no JSON form")
    text = "%.17g" % value
    if "." not in text and "e" not in text:
        text += ".0"
    mantissa, e, exponent = text.partition("e")
    if e:
        sign = "-" if exponent.startswith("-") else ""
        text = mantissa + "e" + sign + (exponent.lstrip("+-").lstrip("0") or "0")
    return text


def canonical_json(value):
    """The canonical text of a JSON value as libordo hashes it: keys sorted
    bytewise, no whitespace, reals in %.17g form, UTF-8 unescaped."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _real(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-8"))
        return "{" + ",".join(_string(k) + ":" + canonical_json(value[k]) for k in keys) + "}"
    raise TypeError(f"{type(value).__name__} has no JSON form")


def manifest_sha256(manifest):
    """The SHA-256 (hex) a recovery manifest carries: over its canonical
    text without its "sha256" member."""
    body = {k: v for k, v in manifest.items() if k != "sha256"}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def verify_manifest(manifest):
    """Checks a recovery manifest's own SHA-256; returns it or raises
    ValueError."""
    if not isinstance(manifest, dict) or not isinstance(manifest.get("sha256"), str):
        raise ValueError("recovery manifest: not an object with a \"sha256\"")
    if manifest["sha256"] != manifest_sha256(manifest):
        raise ValueError("recovery manifest: its SHA-256 does not match its content")
    return manifest


# ---- checking report arguments (in the caller's thread)

def _whole(value, what):
    if isinstance(value, (str, bytes, bool)):
        raise TypeError(f"{what} must be a whole number, not {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        number = float(value)
    if not number.is_integer():
        raise ValueError(f"{what} must be a whole number, not {value!r}")
    return int(number)


def _finite_or_none(value, what):
    """A float, or None for NaN and infinities (stored as null)."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{what} must be a number, not {value!r}")
    number = float(value)
    return number if math.isfinite(number) else None


def _digest(value, what):
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a hex string, not {type(value).__name__}")
    return value


def _lane_state(value):
    """Padded base64 of a lane state (bytes, as the loader's state() and
    merge_states give them)."""
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"lane_state must be bytes, not {type(value).__name__}")
    if not len(value):
        raise ValueError("lane_state is empty")
    return base64.b64encode(bytes(value)).decode("ascii")


def _step_item(step, batch_digest, lane_digests, loss, tokens, metrics, source_tokens,
               pad_tokens, lane_state=None):
    item = {"step": _whole(step, "step")}
    if batch_digest is not None:
        item["batch_digest"] = _digest(batch_digest, "batch_digest")
    if lane_digests is not None:
        item["lane_digests"] = [_digest(d, "a lane digest") for d in lane_digests]
    if loss is not None:
        item["loss"] = _finite_or_none(loss, "loss")
    for key, value in (("tokens", tokens), ("pad_tokens", pad_tokens)):
        if value is not None:
            item[key] = _whole(value, key)
    if source_tokens is not None:
        item["source_tokens"] = [_whole(t, "source_tokens") for t in source_tokens]
    if metrics is not None:
        item["metrics"] = {str(k): _finite_or_none(v, f"metric {k}") for k, v in metrics.items()}
    if lane_state is not None:
        item["lane_state"] = _lane_state(lane_state)
    return item


def fetch_plan(url, recipe_id, token=None, timeout=60.0):
    """The plan document of recipe `recipe_id` (bytes, as the library wrote
    it) from ordo serve at `url`: GET /api/recipes/{id}/plan with the bearer
    `token` when given. ClientError for an answer other than 200 (404 names
    a recipe the service does not know or has not indexed)."""
    req = urllib.request.Request(url.rstrip("/") + "/api/recipes/" + quote(recipe_id) + "/plan",
                                 method="GET")
    req.add_header("Accept", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.read()
    except urllib.error.HTTPError as e:
        raise ClientError(e.code, e.read().decode("utf-8", "replace")) from None


class Client:
    """Talks to ordo serve at `url` with an optional bearer `token`. `rank`
    (default $RANK, else 0) is sent with this process's lane reports."""

    def __init__(self, url, token=None, run=None, rank=None, batch_size=1000,
                 queue_size=100000, timeout=10.0, max_backoff=30.0):
        self.url = url.rstrip("/")
        self.token = token
        self.run = run
        self.rank = int(os.environ.get("RANK", 0)) if rank is None else int(rank)
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_backoff = max_backoff
        self.sent = 0        # reports the service stored
        self.refused = 0     # reports refused (by the service or as arguments), dropped
        self.dropped = 0     # reports dropped because the queue was full
        self.failures = 0    # sending attempts that failed and were retried
        self.errors = 0      # of those, failures nobody expected (caught, counted)
        self.last_error = None
        self.divergences = []
        self._queue = queue.Queue(maxsize=queue_size)
        self._pending = []  # (kind, label, json text): taken from the queue, not yet settled
        self._stop = threading.Event()
        self._idle = threading.Condition()
        self._counting = threading.Lock()  # `refused` grows in both threads
        self._thread = threading.Thread(target=self._worker, name="ordo-client", daemon=True)
        self._thread.start()

    # ---- synchronous calls

    def _call(self, method, path, data=None):
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            raise ClientError(e.code, e.read().decode("utf-8", "replace")) from None

    def _request(self, method, path, body=None):
        data = None if body is None else json.dumps(body, allow_nan=False).encode("utf-8")
        return self._call(method, path, data)

    def _run_path(self, run=None, *rest):
        return "/api/runs/" + "/".join(quote(s) for s in (run or self._run(),) + rest)

    def register_recipe(self, recipe):
        """Stores a recipe (a dict); returns its id."""
        return self._request("POST", "/api/recipes", recipe)["id"]

    def create_run(self, name, recipe_id, world_size, group=None, baseline=None,
                   lane_plan=None, digest_kind=None, lane_binding=None):
        """Registers a run and its first segment; later reports go to it."""
        body = {"name": name, "recipe_id": recipe_id, "world_size": world_size}
        for key, value in (("group", group), ("baseline", baseline), ("lane_plan", lane_plan),
                           ("digest_kind", digest_kind), ("lane_binding", lane_binding)):
            if value is not None:
                body[key] = value
        self.run = name
        return self._request("POST", "/api/runs", body)

    def resume_segment(self, start_step, world_size, resumed_from=None, lane_binding=None):
        """Records a resume at a new world size from `start_step`."""
        body = {"start_step": start_step, "world_size": world_size}
        if lane_binding:
            body["lane_binding"] = lane_binding
        if resumed_from:
            body["resumed_from"] = resumed_from
        return self._request("POST", self._run_path(None, "segments"), body)

    def recovery_manifest(self, world_size, step=None, run=None):
        """The recovery manifest for resuming at `world_size`, its SHA-256
        verified (ValueError when it does not match)."""
        query = {"world_size": int(world_size)}
        if step:
            query["step"] = int(step)
        path = self._run_path(run, "recovery") + "?" + _query(query)
        return verify_manifest(self._request("GET", path))

    def compare(self, a, b):
        """The comparison of runs `a` and `b` (ordo compare --json)."""
        return self._request("GET", "/api/compare?" + _query({"a": a, "b": b}))

    def checkpoint(self, step, lanes, state):
        """Records a checkpoint (bytes from the loader) synchronously."""
        return self._request("POST", self._run_path(None, "checkpoints"),
                             {"step": step, "lanes": lanes,
                              "state": base64.b64encode(state).decode("ascii")})

    # ---- reports through the background thread

    def report_step(self, step, batch_digest=None, lane_digests=None, loss=None, tokens=None,
                    metrics=None, source_tokens=None, pad_tokens=None, lane_state=None):
        """Queues a whole step: batch digest and/or lane digests, loss (NaN
        and infinities become null), tokens, per-source tokens (the batch's
        ``source_tokens``), padding tokens, scalar metrics, and `lane_state`
        (bytes, sent as base64): every lane's state after this step, the
        ranks' loader states joined by ``ordo.loader.merge_states``, given
        with the first step of each flush epoch after the first so that the
        step's batch is regenerated from its epoch (``ordo.torch.report``
        does this). Never raises."""
        try:
            item = _step_item(step, batch_digest, lane_digests, loss, tokens, metrics,
                              source_tokens, pad_tokens, lane_state)
            text = json.dumps(item, allow_nan=False, separators=(",", ":"))
        except Exception as e:  # noqa: BLE001 - a report never stops training
            self._refuse_argument(f"step {step!r}", e)
            return
        self._put(("steps", f"step {item['step']}", text))

    def report_lane(self, step, lane, digest):
        """Queues one lane's digest of a step (each rank reports its lanes).
        Never raises."""
        try:
            item = {"step": _whole(step, "step"), "lane": _whole(lane, "lane"),
                    "digest": _digest(digest, "digest")}
            text = json.dumps(item, separators=(",", ":"))
        except Exception as e:  # noqa: BLE001
            self._refuse_argument(f"step {step!r} lane {lane!r}", e)
            return
        self._put(("lanes", f"step {item['step']} lane {item['lane']}", text))

    def _refuse(self):
        with self._counting:
            self.refused += 1
            return self.refused

    def _refuse_argument(self, label, error):
        log.error("ordo: %s cannot be reported (dropped; %d refused so far): %s", label,
                  self._refuse(), error)

    def _put(self, item):
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self.dropped += 1
            if self.dropped & (self.dropped - 1) == 0:  # 1, 2, 4, 8...: says so, not spam
                log.error("ordo: report queue full (%d waiting; is the service reachable? last "
                          "error: %s): %d reports dropped", self._queue.qsize(), self.last_error,
                          self.dropped)

    def flush(self, timeout=30.0):
        """Waits until every queued report is stored or refused; True when so."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._queue.unfinished_tasks or self._pending:
                left = deadline - time.monotonic()
                if left <= 0 or not self._thread.is_alive():
                    return False
                self._idle.wait(min(left, 0.5))
        return True

    def close(self, timeout=30.0):
        """Sends what is queued (up to `timeout` s), stops the thread and
        returns the number of reports that were not stored: refused,
        dropped, or still unsent."""
        self.flush(timeout)
        self._stop.set()
        self._thread.join(timeout=self.timeout + 5.0)
        unsent = len(self._pending) + self._queue.qsize()
        lost = unsent + self.dropped + self.refused
        if lost:
            log.error("ordo: %d reports could not be sent (%d unsent, %d refused, %d dropped; "
                      "last error: %s)", lost, unsent, self.refused, self.dropped,
                      self.last_error)
        return lost

    def _run(self):
        if not self.run:
            raise ValueError("no run: call create_run or pass run=")
        return self.run

    # ---- the background thread

    def _take(self):
        """Fills the pending list up to a batch, waiting briefly for more."""
        while len(self._pending) < self.batch_size:
            try:
                item = self._queue.get(timeout=0.05 if self._pending else 0.2)
            except queue.Empty:
                break
            self._pending.append(item)
            self._queue.task_done()

    def _post(self, kind, items):
        texts = ",".join(text for _, _, text in items)
        if kind == "lanes":
            body = '{"rank":%d,"lanes":[%s]}' % (self.rank, texts)
        else:
            body = '{"steps":[%s]}' % texts
        answer = self._call("POST", self._run_path(None, "steps"), body.encode("utf-8"))
        if isinstance(answer, dict):
            self.divergences.extend(answer.get("divergences") or [])

    def _send(self, kind, items, settled):
        """Posts `items`; a refusal is narrowed down by halves to the refused
        reports, which are logged and dropped. Adds what is settled (stored
        or refused) to `settled`; retryable errors propagate. A batch whose
        body would pass MAX_BODY is sent in halves (the service closes the
        connection on a body over its limit, which would look like a
        network error and be retried forever)."""
        size = sum(len(text) + 1 for _, _, text in items)
        if size > MAX_BODY and len(items) > 1:
            half = len(items) // 2
            self._send(kind, items[:half], settled)
            self._send(kind, items[half:], settled)
            return
        if size > MAX_BODY:
            e = ClientError(413, "a single report of %d bytes is over %d" % (size, MAX_BODY))
            self._refuse()
            self.last_error = e
            log.error("ordo: %s is too large to send (dropped): %s", items[0][1], e)
            settled.update(map(id, items))
            return
        try:
            self._post(kind, items)
        except ClientError as e:
            if e.status >= 500 or e.status in _RETRIED:
                raise
            if len(items) > 1:
                half = len(items) // 2
                self._send(kind, items[:half], settled)
                self._send(kind, items[half:], settled)
                return
            refused = self._refuse()
            self.last_error = e
            if refused <= 20 or refused % 1000 == 0:
                log.error("ordo: the service refused %s (dropped; %d refused so far): %s",
                          items[0][1], refused, e)
            settled.update(map(id, items))
            return
        self.sent += len(items)
        settled.update(map(id, items))

    def _deliver(self):
        settled = set()
        try:
            for kind in ("steps", "lanes"):
                items = [p for p in self._pending if p[0] == kind]
                if items:
                    self._send(kind, items, settled)
        finally:
            self._pending = [p for p in self._pending if id(p) not in settled]

    def _failed(self, error, backoff):
        self.failures += 1
        self.last_error = error
        expected = isinstance(error, (OSError, ClientError))
        if not expected:
            self.errors += 1
        level = logging.ERROR if isinstance(error, ClientError) and error.status < 500 \
            else logging.WARNING
        log.log(level, "ordo: sending %d reports failed (%s%s); retrying in %.1f s",
                len(self._pending), "" if expected else type(error).__name__ + ": ", error,
                backoff)

    def _notify(self):
        with self._idle:
            self._idle.notify_all()

    def _worker(self):
        backoff = 0.1
        while not self._stop.is_set():
            try:
                self._take()
                if self._pending:
                    self._deliver()
                    backoff = 0.1
                self._notify()
                continue
            except Exception as e:  # noqa: BLE001 - the thread never dies
                try:
                    self._failed(e, backoff)
                except Exception:  # noqa: BLE001 - not even while logging
                    pass
            self._notify()
            self._stop.wait(backoff)
            backoff = min(backoff * 2, self.max_backoff)
