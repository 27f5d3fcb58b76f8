"""Background reporting against a real ordo serve: bad items are dropped
alone, non-finite losses are sent as null, the worker survives anything
and a service that restarts gets everything that was queued."""
import json
import math
import os
import socket
import threading
import time
import unittest

import ordo

import common

LANES = 8


def lanes(step, count=LANES):
    return [f"{step:056x}{lane:08x}" for lane in range(count)]


def wait_for(condition, deadline_s=60.0):
    """Polls a state of the client (not a duration) until it holds."""
    deadline = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


class GarbagePeer:
    """A TCP listener on 127.0.0.1 that answers every request with bytes
    that are not HTTP, then closes: what a wrong service or a proxy in a
    bad state looks like to the client."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.answered = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.recv(65536)
                    conn.sendall(b"\x00\x01 this is not HTTP\r\n\r\n")
                except OSError:
                    pass
            self.answered += 1

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() in the thread
        except OSError:
            pass
        self.sock.close()
        self.thread.join(timeout=10)


class ReportingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = common.tempdir()
        cls.recipe = common.corpus(cls.dir, lanes=LANES)
        cls.db = os.path.join(cls.dir, "l.db")
        cls.server = common.Server(cls.db)
        cls.token = common.token(cls.db)
        setup = ordo.Client(cls.server.url, token=cls.token)
        with open(cls.recipe) as f:
            cls.recipe_id = setup.register_recipe(json.load(f))
        setup.close()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def client(self, name, url=None, **options):
        c = ordo.Client(url or self.server.url, token=self.token, **options)
        c.create_run(name, self.recipe_id, world_size=1)
        return c

    def test_non_finite_losses_are_sent_as_null(self):
        c = self.client("nan-loss")
        losses = {3: float("nan"), 5: float("inf"), 7: -math.inf}
        for step in range(1, 11):
            c.report_step(step, lane_digests=lanes(step), loss=losses.get(step, 1.0 / step),
                          metrics={"grad_norm": float("nan") if step == 4 else 2.0})
        self.assertTrue(c.flush(60))
        self.assertEqual(c.close(), 0)
        recorded = common.steps(self.server.url, "nan-loss")
        self.assertEqual([s["step"] for s in recorded], list(range(1, 11)))
        self.assertEqual([s["step"] for s in recorded if s["loss"] is None], [3, 5, 7])
        self.assertIsNone(recorded[3]["metrics"]["grad_norm"])
        self.assertEqual(c.sent, 10)

    def test_a_refused_item_is_dropped_alone(self):
        c = self.client("bad-lanes")
        with self.assertLogs("ordo", level="ERROR") as logs:
            for step in range(1, 6):
                # step 1 and 4 have the wrong number of lanes: refused
                c.report_step(step, lane_digests=lanes(step, 3 if step in (1, 4) else LANES))
            self.assertTrue(c.flush(60))
        recorded = common.steps(self.server.url, "bad-lanes")
        self.assertEqual([s["step"] for s in recorded], [2, 3, 5])
        self.assertEqual(c.refused, 2)
        self.assertEqual(c.sent, 3)
        self.assertTrue(any("refused" in line and "step 1" in line for line in logs.output))
        # the worker is still there: later reports still arrive
        c.report_step(6, lane_digests=lanes(6))
        self.assertTrue(c.flush(60))
        self.assertEqual(len(common.steps(self.server.url, "bad-lanes")), 4)
        self.assertEqual(c.close(), 2)

    def test_report_step_never_raises(self):
        c = self.client("odd-arguments")
        with self.assertLogs("ordo", level="ERROR"):
            c.report_step("seven", batch_digest="00" * 32)
            c.report_step(1, lane_digests=5)
            c.report_step(2, batch_digest="00" * 32, loss=object())
            c.report_step(3, batch_digest="00" * 32, tokens="many")
            c.report_lane("x", 0, "00" * 32)
        c.report_step(4, batch_digest="44" * 32, loss=0.5)
        self.assertTrue(c.flush(60))
        self.assertEqual([s["step"] for s in common.steps(self.server.url, "odd-arguments")], [4])
        self.assertEqual(c.refused, 5)
        self.assertEqual(c.close(), 5)

    def test_a_batch_over_the_body_limit_is_sent_in_parts(self):
        """1,000 steps of 1,024 lanes queued at once would be a 68 MB body,
        over the service's 64 MiB: the service closes such a connection
        (the client sees a broken pipe, not a 413), so the client must cut
        the batch itself instead of retrying it forever."""
        c = ordo.Client(self.server.url, token=self.token, max_backoff=1.0)
        wide = c.register_recipe({"name": "wide", "lanes": 1024, "global_batch": 1024})
        c.create_run("wide", wide, world_size=1)
        digests = ["%064x" % lane for lane in range(1024)]
        for step in range(1, 1001):
            c.report_step(step, lane_digests=digests)
        self.assertTrue(c.flush(120), f"sent {c.sent}, failures {c.failures}: {c.last_error!r}")
        self.assertEqual((c.sent, c.refused, c.failures), (1000, 0, 0))
        self.assertEqual(c.close(), 0)
        run = ordo.Client(self.server.url, token=self.token)._request("GET", "/api/runs/wide")
        self.assertEqual(run["steps"], 1000)

    def test_a_full_queue_says_so(self):
        port = common.free_port()  # nobody listens: nothing can be sent
        c = ordo.Client(f"http://127.0.0.1:{port}", token=self.token, run="nowhere",
                        queue_size=4, batch_size=4, max_backoff=0.2)
        started = time.monotonic()
        with self.assertLogs("ordo", level="ERROR") as logs:
            for step in range(1, 101):
                c.report_step(step, batch_digest=f"{step:064x}")
        # never blocks the training step for long (generous bound: 100 calls)
        self.assertLess(time.monotonic() - started, 20.0)
        self.assertGreaterEqual(c.dropped, 92)
        self.assertTrue(any("queue full" in line for line in logs.output))
        with self.assertLogs("ordo", level="ERROR") as logs:
            self.assertEqual(c.close(timeout=0.5), 100)
        self.assertTrue(any(f"{c.dropped} dropped" in line for line in logs.output))

    def test_the_worker_survives_a_peer_that_answers_garbage(self):
        garbage = GarbagePeer()
        port = garbage.port
        c = ordo.Client(f"http://127.0.0.1:{port}", token=self.token, run="garbage",
                        max_backoff=0.2)
        for step in range(1, 4):
            c.report_step(step, batch_digest=f"{step:064x}")
        self.assertTrue(wait_for(lambda: c.errors >= 2))
        self.assertTrue(c._thread.is_alive())
        garbage.close()
        server = common.Server(self.db, port)
        try:
            setup = ordo.Client(server.url, token=self.token)
            setup.create_run("garbage", self.recipe_id, world_size=1)
            setup.close()
            self.assertTrue(c.flush(60))
            self.assertEqual(c.close(), 0)
            self.assertEqual(len(common.steps(server.url, "garbage")), 3)
        finally:
            server.stop()

    def test_everything_queued_reaches_a_service_that_restarts(self):
        db = os.path.join(common.tempdir(), "restart.db")
        first = common.Server(db)
        token = common.token(db)
        port = first.port
        c = ordo.Client(first.url, token=token, max_backoff=0.2)
        with open(self.recipe) as f:
            rid = c.register_recipe(json.load(f))
        c.create_run("restart", rid, world_size=1)
        for step in range(1, 6):
            c.report_step(step, lane_digests=lanes(step), loss=1.0)
        self.assertTrue(c.flush(60))
        first.kill()
        # queued while the service is down, bad items among them
        with self.assertLogs("ordo", level="WARNING"):
            for step in range(6, 21):
                c.report_step(step, lane_digests=lanes(step, 2 if step == 9 else LANES),
                              loss=float("nan") if step == 12 else 1.0)
            self.assertTrue(wait_for(lambda: c.failures >= 1))
        second = common.Server(db, port)
        try:
            self.assertTrue(c.flush(60))
            recorded = common.steps(second.url, "restart")
            self.assertEqual([s["step"] for s in recorded],
                             [s for s in range(1, 21) if s != 9])
            self.assertIsNone(recorded[10]["loss"])  # step 12
            self.assertEqual(c.refused, 1)
            self.assertEqual(c.close(), 1)
        finally:
            second.stop()


if __name__ == "__main__":
    unittest.main()
