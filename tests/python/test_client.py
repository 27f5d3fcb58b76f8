"""The REST client against a real ordo serve."""
import ctypes
import json
import os
import random
import shutil
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

    def test_lane_states_are_sent_and_batches_replay_from_their_epoch(self):
        from ordo.loader import merge_states
        c = ordo.Client(self.server.url, token=self.token)
        c.create_run("epochs", self.recipe_id(c), world_size=2)
        loaders = [Loader(self.recipe, r, 2) for r in range(2)]
        flush = loaders[0].recipe_info()["flush_every"]
        self.assertEqual(flush, 2)
        states = {}
        for _ in range(9):
            batches = [next(l) for l in loaders]
            step = batches[0]["step"]
            lane_state = None
            if step > flush and (step - 1) % flush == 0:  # the first step of an epoch
                lane_state = merge_states([l.state() for l in loaders])
                states[step] = lane_state
            c.report_step(step, lane_digests=[d for b in batches for d in b["lane_digests"]],
                          lane_state=lane_state)
        for l in loaders:
            l.close()
        self.assertTrue(c.flush(30))
        self.assertEqual((c.sent, c.refused), (9, 0))
        self.assertEqual(common.epoch_states(self.db, "epochs"), [3, 5, 7, 9])
        common.index(self.db, self.recipe)
        for step in (2, 4, 5, 8, 9):
            b = common.batch(self.db, "epochs", step, self.dir)
            self.assertEqual((b["from"], b["from_step"]),
                             ("epoch" if step > flush else "start", (step - 1) // flush * flush))
        # refused: a state of another step (the service's), not bytes (the client's)
        with self.assertLogs("ordo", level="ERROR") as logs:
            c.report_step(11, batch_digest="00" * 32, lane_state=states[3])
            c.report_step(12, batch_digest="00" * 32, lane_state="AAAA")
            self.assertTrue(c.flush(30))
        self.assertEqual(c.refused, 2)
        self.assertTrue(any("step 11: its lane state was taken after step 3" in line
                            for line in logs.output), logs.output)
        self.assertTrue(any("lane_state must be bytes" in line for line in logs.output))
        self.assertEqual(common.epoch_states(self.db, "epochs"), [3, 5, 7, 9])
        self.assertEqual(c.close(), 2)

    def test_ranks_report_their_lanes(self):
        c = ordo.Client(self.server.url, token=self.token)
        rid = self.recipe_id(c)
        c.create_run("lanes", rid, world_size=2)
        # one client per rank, as in a job: each sends its rank with its lanes
        ranks = [ordo.Client(self.server.url, token=self.token, run="lanes", rank=r)
                 for r in range(2)]
        loaders = [Loader(self.recipe, r, 2) for r in range(2)]
        composed = []
        for _ in range(10):
            digests = {}
            for client, l in zip(ranks, loaders):
                b = next(l)
                for lane, d in zip(b["lanes"], b["lane_digests"]):
                    client.report_lane(b["step"], lane, d)
                    digests[lane] = d
            composed.append(ordo.batch_digest([digests[i] for i in range(8)]))
        for client in ranks:
            self.assertTrue(client.flush(30))
            self.assertEqual(client.close(), 0)
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
        ranks = [ordo.Client(self.server.url, token=self.token, run="ckpt", rank=r)
                 for r in range(2)]
        for _ in range(4):
            for client, l in zip(ranks, loaders):
                b = next(l)
                for lane, d in zip(b["lanes"], b["lane_digests"]):
                    client.report_lane(b["step"], lane, d)
        for client in ranks:  # a checkpoint follows the steps it covers
            self.assertTrue(client.flush(30))
            self.assertEqual(client.close(), 0)
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

    def manifest_with_weights(self, name, weights):
        folder = os.path.join(self.dir, name)
        os.makedirs(folder)
        shutil.copytree(os.path.join(self.dir, "data"), os.path.join(folder, "data"))
        with open(self.recipe) as f:
            recipe = json.load(f)
        paths = ["data/short.jsonl", "data/long.jsonl", "data/long.jsonl"]
        recipe["sources"] = [{"name": f"s{i}", "paths": [paths[i]], "weight": w}
                             for i, w in enumerate(weights)]
        path = os.path.join(folder, "recipe.json")
        with open(path, "w") as f:
            json.dump(recipe, f)
        c = ordo.Client(self.server.url, token=self.token)
        c.create_run(name, c.register_recipe(recipe), world_size=2)
        loaders = [Loader(path, r, 2) for r in range(2)]
        for _ in range(2):
            for l in loaders:
                c.report_step(next(l)["step"], batch_digest="00" * 32)
        self.assertTrue(c.flush())  # a checkpoint needs its step reported first
        from ordo.loader import merge_states
        c.checkpoint(2, 8, merge_states([l.state() for l in loaders]))
        for l in loaders:
            l.close()
        try:
            return c.recovery_manifest(world_size=4, step=2)
        finally:
            c.close()

    def test_manifests_with_weights_that_binary_cannot_hold_verify(self):
        for name, weights in (("w73", [0.7, 0.3]), ("w127", [0.1, 0.2, 0.7])):
            m = self.manifest_with_weights(name, weights)
            self.assertEqual([s["weight"] for s in m["recipe"]["sources"]], weights)
            self.assertEqual(m["rank_lanes"], [[0, 1], [2, 3], [4, 5], [6, 7]])

    def test_the_canonical_form_is_the_librarys(self):
        """Python's canonical JSON of awkward values hashes as libordo's:
        the library accepts every manifest signed in Python."""
        from ordo.loader import lib
        lib().ordo_recovery_manifest_check.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                                       ctypes.c_void_p]
        rng = random.Random(12)
        floats = [0.7, 0.3, 0.1, 0.2, 1e-7, 1e300, 5e-324, -0.0, 123456789.0, 1e16, 1e22,
                  2.0 ** 60, 0.1 + 0.2, 1 / 3, -2.5e-310]
        floats += [rng.uniform(-1e6, 1e6) for _ in range(200)]
        floats += [rng.random() * 10 ** rng.randint(-300, 300) for _ in range(200)]
        strings = ["é 步骤", "\x01\x1f\x7f", "quote \" and \\ and /", "tab\tnl\ncr\r\b\f",
                   "\u2028\u2029", "😀", ""]
        for i in range(0, len(floats), 7):
            body = {"format": "ordo-recovery-1", "weights": floats[i:i + 7],
                    "nested": {"z": strings, "a": [True, False, None, -1, 2 ** 62]},
                    "é": 1, "b": {"x": floats[i]}}
            body["sha256"] = ordo.client.manifest_sha256(body)
            text = json.dumps(body).encode("utf-8")
            self.assertEqual(lib().ordo_recovery_manifest_check(text, len(text), None), 0,
                             msg=ordo.client.canonical_json(body))

    def test_names_with_spaces_and_url_characters_are_quoted(self):
        c = ordo.Client(self.server.url, token=self.token)
        rid = self.recipe_id(c)
        for name in ("ablation a?b#c&d=1 %41+", "ablation é 2"):
            c.create_run(name, rid, world_size=1)
            c.report_step(1, batch_digest="11" * 32, tokens=10)
            self.assertTrue(c.flush(30))
            self.assertEqual(c._request("GET", "/api/runs/" + ordo.client.quote(name))["name"],
                             name)
            self.assertEqual(c.compare(name, name)["matched"], 1)
        self.assertEqual(c.close(), 0)

    def test_source_and_pad_tokens_are_reported(self):
        c = ordo.Client(self.server.url, token=self.token)
        c.create_run("shares", self.recipe_id(c), world_size=1)
        l = Loader(self.recipe, 0, 1)
        sent = []
        for _ in range(3):
            b = next(l)
            c.report_step(b["step"], lane_digests=b["lane_digests"], tokens=b["rows"] * b["seq_len"],
                          source_tokens=b["source_tokens"], pad_tokens=b["pad_tokens"])
            sent.append((b["source_tokens"], b["pad_tokens"]))
        l.close()
        self.assertTrue(c.flush(30))
        steps = common.steps(self.server.url, "shares")
        self.assertEqual([(s["source_tokens"], s["pad_tokens"]) for s in steps], sent)
        self.assertEqual(c.close(), 0)

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
