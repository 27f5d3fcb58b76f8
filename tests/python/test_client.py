"""The REST client against a real ordo serve."""
import json
import os
import unittest

import ordo
from ordo.loader import Loader

import common


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = common.tempdir()
        cls.recipe = common.corpus(cls.dir)
        cls.db = os.path.join(cls.dir, "l.db")
        cls.server = common.Server(cls.db)
        cls.token = common.token(cls.db)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def recipe_id(self, client):
        with open(self.recipe) as f:
            return client.register_recipe(json.load(f))

    def test_whole_steps_from_a_job_and_compare(self):
        c = ordo.Client(self.server.url, token=self.token)
        rid = self.recipe_id(c)
        c.create_run("whole", rid, world_size=1)
        l = Loader(self.recipe, 0, 1)
        for _ in range(30):
            b = next(l)
            c.report_step(b["step"], lane_digests=b["lane_digests"], loss=5.0 / b["step"],
                          tokens=b["rows"] * b["seq_len"])
        self.assertTrue(c.flush(30))
        self.assertEqual(c.close(), 0)
        self.assertEqual(c.sent, 30)
        run = c._request("GET", "/api/runs/whole")
        self.assertEqual(run["steps"], 30)
        l.close()

    def test_ranks_report_their_lanes(self):
        c = ordo.Client(self.server.url, token=self.token)
        rid = self.recipe_id(c)
        c.create_run("lanes", rid, world_size=2)
        loaders = [Loader(self.recipe, r, 2) for r in range(2)]
        composed = []
        for _ in range(10):
            digests = {}
            for rank, l in enumerate(loaders):
                b = next(l)
                for lane, d in zip(b["lanes"], b["lane_digests"]):
                    c.report_lane(b["step"], lane, d, rank)
                    digests[lane] = d
            composed.append(ordo.batch_digest([digests[i] for i in range(8)]))
        self.assertTrue(c.flush(30))
        steps = c._request("GET", "/api/runs/lanes/steps?limit=10")["steps"]
        self.assertEqual([s["batch_digest"] for s in steps], composed)
        c.close()
        for l in loaders:
            l.close()

    def test_manifest_is_verified(self):
        c = ordo.Client(self.server.url, token=self.token)
        rid = self.recipe_id(c)
        c.create_run("ckpt", rid, world_size=2)
        loaders = [Loader(self.recipe, r, 2) for r in range(2)]
        for _ in range(4):
            for l in loaders:
                next(l)
        from ordo.loader import merge_states
        c.checkpoint(4, 8, merge_states([l.state() for l in loaders]))
        m = c.recovery_manifest(world_size=4, step=4)
        self.assertEqual(m["rank_lanes"], [[0, 1], [2, 3], [4, 5], [6, 7]])
        m["world_size"] = 8
        with self.assertRaisesRegex(ValueError, "SHA-256"):
            ordo.verify_manifest(m)
        c.close()
        for l in loaders:
            l.close()

    def test_reports_wait_for_a_service_that_comes_back(self):
        port = common.free_port()
        c = ordo.Client(f"http://127.0.0.1:{port}", token=self.token, run="later")
        for step in range(1, 6):
            c.report_step(step, batch_digest=f"{step:064x}")
        self.assertFalse(c.flush(0.5))  # nobody listens yet: kept, not dropped
        self.assertGreater(c.failures + len(c._pending) + c._queue.qsize(), 0)
        # the service starts; the background thread's retries get through
        server = common.Server(self.db, port)
        setup = ordo.Client(server.url, token=self.token)
        setup.create_run("later", self.recipe_id(setup), world_size=1)
        setup.close()
        self.assertTrue(c.flush(60))
        self.assertEqual(c.close(), 0)
        self.assertEqual(c.sent, 5)
        server.stop()

    def test_unsent_reports_are_reported_at_shutdown(self):
        port = common.free_port()
        c = ordo.Client(f"http://127.0.0.1:{port}", token=self.token, run="nowhere")
        c.report_step(1, batch_digest="00" * 32)
        with self.assertLogs("ordo", level="ERROR") as logs:
            unsent = c.close(timeout=0.5)
        self.assertEqual(unsent, 1)
        self.assertTrue(any("could not be sent" in line for line in logs.output))

    def test_refused_reports_raise_nothing_but_are_counted(self):
        c = ordo.Client(self.server.url, token="ordo_" + "0" * 64, run="whole")
        c.report_step(1, batch_digest="00" * 32)
        with self.assertLogs("ordo", level="ERROR"):
            unsent = c.close(timeout=5)
        self.assertEqual(unsent, 1)
        self.assertEqual(c.last_error.status, 401)


if __name__ == "__main__":
    unittest.main()
