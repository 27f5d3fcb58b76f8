"""A REST client for ``ordo serve`` (standard library only).

Reports go through a bounded queue to a background thread that sends them
in batches and retries with exponential backoff, so the training step never
waits on the network. What cannot be sent is kept and retried; nothing is
dropped silently: ``close()`` reports what is still unsent (and a queue that
stays full is counted in ``dropped`` and logged)."""
import hashlib
import json
import logging
import queue
import threading
import time
import urllib.error
import urllib.request

log = logging.getLogger("ordo")


class ClientError(Exception):
    """An answer of the service that retrying will not change (4xx)."""

    def __init__(self, status, body):
        self.status = status
        self.body = body
        try:
            message = json.loads(body).get("error", body)
        except ValueError:
            message = body
        super().__init__(f"{status}: {message}")


def _canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def verify_manifest(manifest):
    """Checks a recovery manifest's own SHA-256; returns it or raises."""
    claimed = manifest.get("sha256")
    body = {k: v for k, v in manifest.items() if k != "sha256"}
    actual = hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()
    if claimed != actual:
        raise ValueError("recovery manifest: its SHA-256 does not match its content")
    return manifest


class Client:
    """Talks to ordo serve at `url` with an optional bearer `token`."""

    def __init__(self, url, token=None, run=None, batch_size=1000, queue_size=100000,
                 timeout=10.0, max_backoff=30.0):
        self.url = url.rstrip("/")
        self.token = token
        self.run = run
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_backoff = max_backoff
        self.dropped = 0
        self.sent = 0
        self.failures = 0
        self.last_error = None
        self.divergences = []
        self._queue = queue.Queue(maxsize=queue_size)
        self._pending = []  # taken from the queue, not yet acknowledged
        self._stop = threading.Event()
        self._idle = threading.Condition()
        self._thread = threading.Thread(target=self._worker, name="ordo-client", daemon=True)
        self._thread.start()

    # ---- synchronous calls

    def _request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode("utf-8")
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
        return self._request("POST", f"/api/runs/{self._run()}/segments", body)

    def recovery_manifest(self, world_size, step=None, run=None):
        """The recovery manifest for resuming at `world_size`, verified."""
        path = f"/api/runs/{run or self._run()}/recovery?world_size={int(world_size)}"
        if step:
            path += f"&step={int(step)}"
        return verify_manifest(self._request("GET", path))

    def compare(self, a, b):
        return self._request("GET", f"/api/compare?a={a}&b={b}")

    def checkpoint(self, step, lanes, state):
        """Records a checkpoint (bytes from the loader) synchronously."""
        import base64
        return self._request("POST", f"/api/runs/{self._run()}/checkpoints",
                             {"step": step, "lanes": lanes,
                              "state": base64.b64encode(state).decode("ascii")})

    # ---- reports through the background thread

    def report_step(self, step, batch_digest=None, lane_digests=None, loss=None, tokens=None,
                    metrics=None):
        """Queues a whole step (batch digest and/or lane digests, loss...)."""
        item = {"step": int(step)}
        for key, value in (("batch_digest", batch_digest), ("lane_digests", lane_digests),
                           ("loss", loss), ("tokens", tokens), ("metrics", metrics)):
            if value is not None:
                item[key] = value
        self._put(("steps", item))

    def report_lane(self, step, lane, digest, rank):
        """Queues one lane's digest of a step, reported by `rank` (each rank
        reports the lanes it owns under the lane plan)."""
        self._put(("lanes", {"step": int(step), "lane": int(lane), "digest": digest,
                             "rank": int(rank)}))

    def _put(self, item):
        try:
            self._queue.put(item, timeout=1.0)
        except queue.Full:
            self.dropped += 1
            log.error("ordo: report queue full (service unreachable?): %d reports dropped",
                      self.dropped)

    def flush(self, timeout=30.0):
        """Waits until every queued report is acknowledged; True when so."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._queue.unfinished_tasks or self._pending:
                if not self._thread.is_alive():
                    return False
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(min(left, 0.5))
        return True

    def close(self, timeout=30.0):
        """Sends what is queued (up to `timeout` s), stops the thread and
        returns the number of reports that could not be sent."""
        self.flush(timeout)
        self._stop.set()
        self._thread.join(timeout=5.0)
        unsent = len(self._pending) + self._queue.qsize() + self.dropped
        if unsent:
            log.error("ordo: %d reports could not be sent (last error: %s)", unsent,
                      self.last_error)
        return unsent

    def _run(self):
        if not self.run:
            raise ValueError("no run: call create_run or pass run=")
        return self.run

    def _take(self):
        """Fills the pending list up to a batch, waiting briefly for more."""
        while len(self._pending) < self.batch_size:
            try:
                item = self._queue.get(timeout=0.05 if self._pending else 0.2)
            except queue.Empty:
                break
            self._pending.append(item)
            self._queue.task_done()

    def _send(self, batch):
        steps = [body for kind, body in batch if kind == "steps"]
        ranks = {}
        for kind, body in batch:
            if kind == "lanes":
                ranks.setdefault(body["rank"], []).append(
                    {k: v for k, v in body.items() if k != "rank"})
        path = f"/api/runs/{self._run()}/steps"
        bodies = [{"steps": steps}] if steps else []
        bodies += [{"rank": rank, "lanes": items} for rank, items in sorted(ranks.items())]
        for body in bodies:
            answer = self._request("POST", path, body)
            self.divergences.extend(answer.get("divergences", []))

    def _worker(self):
        backoff = 0.1
        give_up_at = None
        while True:
            if self._stop.is_set():
                give_up_at = give_up_at or time.monotonic() + 5.0  # last attempts
                if (not self._pending and self._queue.empty()) or time.monotonic() > give_up_at:
                    return
            self._take()
            if not self._pending:
                with self._idle:
                    self._idle.notify_all()
                continue
            try:
                self._send(self._pending)
                self.sent += len(self._pending)
                self._pending = []
                backoff = 0.1
                with self._idle:
                    self._idle.notify_all()
                continue
            except ClientError as e:
                if not (e.status in (408, 429) or e.status >= 500):
                    # refused for good: kept, counted and logged, not retried
                    self.last_error = e
                    self.failures += len(self._pending)
                    log.error("ordo: the service refused %d reports: %s", len(self._pending), e)
                    return
                self.last_error = e
            except (OSError, ValueError) as e:
                self.last_error = e
            delay = backoff if not self._stop.is_set() else min(backoff, 0.2)
            log.warning("ordo: sending reports failed (%s); retrying in %.1f s",
                        self.last_error, delay)
            time.sleep(delay)
            backoff = min(backoff * 2, self.max_backoff)
