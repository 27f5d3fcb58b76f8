"""ordo.torch.report against a real ordo serve: in a world of one (no
process group) and in a 2-process gloo group (real processes), it stores
the step's lane digests in lane order, the token-weighted mean loss of the
global batch, and the tokens, source tokens and pad tokens summed over the
ranks; a NaN loss is stored as no loss; it returns while the service has
not answered; a rank called with a wrong item, or ranks at different
steps, or some ranks with a lane state and others without, make every rank
raise (no rank is left waiting in a collective). A job of
ordo.torch.DataLoader at W = 2 (grad_accum 2), resumed in the middle of a
flush epoch at W = 1 under torch.utils.data.DataLoader, records every
lane's state with the first step of each epoch after the first and with
the resume's first step, and `ordo batch` regenerates its steps from
their epoch.

Run as `test_torch_report.py --rank R WORLD STORE URL TOKEN RUN RECIPE`, it
is one rank of the 2-process group (`--epochs R ... STATE` a rank of the
DataLoader job, writing its state after EPOCH_STEPS to STATE)."""
import json
import math
import os
import socket
import subprocess
import sys
import unittest

import common

import ordo
from ordo.loader import Loader

try:
    import torch
    import torch.utils.data
    import ordo.torch
    from ordo.torch import report
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

STEPS = 3
EPOCH_STEPS = 5  # the DataLoader job's steps before the resume (flush_every 2)
RESUMED_STEPS = 9  # the resumed job plays 6 .. 9


def rank_loss(step, rank):
    """The loss rank `rank` reports at `step`: NaN at step 2 on rank 1."""
    if step == 2 and rank == 1:
        return float("nan")
    return 1.0 + step + 0.25 * rank


def rank_weight(rank):
    return 3.0 + rank  # tokens behind each rank's mean: unequal on purpose


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not HAVE_TORCH:
            raise unittest.SkipTest("python3-torch is not installed")
        cls.dir = common.tempdir()
        cls.recipe = common.corpus(cls.dir, lanes=4, global_batch=8)
        cls.db = os.path.join(cls.dir, "l.db")
        cls.server = common.Server(cls.db)
        cls.token = common.token(cls.db)
        # the global batches of STEPS steps, as one rank of a world of one sees them
        loader = Loader(cls.recipe, 0, 1)
        cls.batches = [next(loader) for _ in range(STEPS)]
        loader.close()
        cls.recipe_id = register(cls.server.url, cls.token, cls.recipe)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def new_run(self, name, world):
        c = ordo.Client(self.server.url, token=self.token)
        c.create_run(name, self.recipe_id, world_size=world)
        return c

    def check_stored(self, run, losses):
        steps = {s["step"]: s for s in common.steps(self.server.url, run)}
        self.assertEqual(sorted(steps), list(range(1, STEPS + 1)))
        for b, want in zip(self.batches, losses):
            got = steps[b["step"]]
            self.assertEqual(got["lane_digests"], b["lane_digests"])
            self.assertEqual(got["batch_digest"], ordo.batch_digest(b["lane_digests"]))
            self.assertEqual(got["source_tokens"], b["source_tokens"])
            self.assertEqual(got["pad_tokens"], b["pad_tokens"])
            self.assertEqual(got["tokens"], b["rows"] * b["sample_len"])
            if want is None:
                self.assertIsNone(got["loss"])
            else:
                self.assertAlmostEqual(got["loss"], want, places=12)

    def test_world_of_one(self):
        c = self.new_run("one", 1)
        for b in self.batches:
            loss = torch.tensor(rank_loss(b["step"], 1), requires_grad=True) * 1
            out = report(c, b, loss)  # a tensor that needs grad: detached
            self.assertEqual(out["batch_digest"], ordo.batch_digest(b["lane_digests"]))
            self.assertEqual(math.isnan(out["loss"]), b["step"] == 2)
        self.assertEqual(c.close(), 0)
        self.check_stored("one", [None if b["step"] == 2 else rank_loss(b["step"], 1)
                                  for b in self.batches])

    def test_never_waits_on_the_network(self):
        # a service that takes the connection and never answers: report
        # returns while the client's request is still unanswered
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        c = ordo.Client(f"http://127.0.0.1:{silent.getsockname()[1]}", token=self.token,
                        run="nobody", timeout=60.0)
        for b in self.batches:
            report(c, b, 1.0)
        self.assertEqual((c.sent, c.failures), (0, 0))
        silent.close()  # the pending connection is reset: the thread gives up, retries, stops
        self.assertEqual(c.close(timeout=0), STEPS)  # all still unsent

    def test_not_a_last_item(self):
        item = {k: v for k, v in self.batches[0].items() if k != "lane_digests"}
        with self.assertRaisesRegex(ValueError, "step 1: the item has no lane_digests"):
            report(None, item, 1.0)

    def test_two_ranks(self):
        store = os.path.join(self.dir, "store-two")
        procs = [subprocess.Popen([sys.executable, __file__, "--rank", str(r), "2", store,
                                   self.server.url, self.token, "two", self.recipe],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for r in range(2)]
        outs = [p.communicate(timeout=300) for p in procs]
        for p, (out, err) in zip(procs, outs):
            self.assertEqual(p.returncode, 0, err[-3000:])
        # every rank got the same figures, and the wrong item raised on both
        self.assertEqual(outs[0][0], outs[1][0])
        self.assertIn("raised: ValueError: ordo.torch.report: rank 1: ValueError: step 1",
                      outs[0][0])
        self.assertIn("raised: RuntimeError: ordo.torch.report: the ranks are at different "
                      f"steps: rank 0 at {STEPS}, rank 1 at {STEPS + 1}", outs[0][0])
        self.assertIn(f"raised: RuntimeError: ordo.torch.report: at step {STEPS} rank(s) 1 "
                      "have a lane state and rank(s) 0 have none", outs[0][0])
        w = [rank_weight(r) for r in range(2)]
        losses = []
        for b in self.batches:
            s = b["step"]
            losses.append(None if s == 2 else
                          (rank_loss(s, 0) * w[0] + rank_loss(s, 1) * w[1]) / (w[0] + w[1]))
        self.check_stored("two", losses)


    def test_lane_states_of_a_job_and_its_resume(self):
        store = os.path.join(self.dir, "store-epochs")
        state_file = os.path.join(self.dir, "epochs-state.json")
        procs = [subprocess.Popen([sys.executable, __file__, "--epochs", str(r), "2", store,
                                   self.server.url, self.token, "epochs", self.recipe,
                                   state_file],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for r in range(2)]
        outs = [p.communicate(timeout=300) for p in procs]
        for p, (out, err) in zip(procs, outs):
            self.assertEqual(p.returncode, 0, err[-3000:])
        # the lane state is on the steps' last items only, and only on the
        # first step of each flush epoch after the first
        self.assertEqual(outs[0][0].split(), ["3:1", "5:1"])
        self.assertEqual(common.epoch_states(self.db, "epochs"), [3, 5])
        # resumed after step 5 (the middle of epoch 5-6) at W = 1, through
        # torch's DataLoader and a worker process
        with open(state_file) as f:
            state = json.load(f)
        c = ordo.Client(self.server.url, token=self.token, run="epochs")
        c.resume_segment(EPOCH_STEPS + 1, 1)
        dataset = ordo.torch.Dataset(self.recipe, 0, 1, state=state)
        carried = []
        for item in torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=1):
            if item["step"] > RESUMED_STEPS:
                break
            if "lane_state" in item:
                self.assertIsInstance(item["lane_state"], bytes)
                carried.append(item["step"])
            out = report(c, item, 1.0)
            self.assertEqual(out["lane_state"] is None, item["step"] not in carried)
        self.assertEqual(c.close(), 0)
        self.assertEqual(carried, [6, 7, 9])
        stored = common.epoch_states(self.db, "epochs")
        self.assertEqual(stored, [3, 5, 6, 7, 9])
        flush = dataset.flush_every
        self.assertEqual(len({(s - 1) // flush for s in stored}),
                         (RESUMED_STEPS - 1) // flush)  # one for each epoch after the first
        # what the model saw at a step, regenerated from the step's epoch
        # and checked against the lane digests reported
        common.index(self.db, self.recipe)
        steps = {s["step"]: s for s in common.steps(self.server.url, "epochs")}
        for n in (4, 6, 8, 9):
            b = common.batch(self.db, "epochs", n, self.dir)
            self.assertEqual((b["from"], b["from_step"]), ("epoch", (n - 1) // flush * flush))
            self.assertEqual(b["batch_digest"], steps[n]["batch_digest"])


def epochs_main(argv):
    """One rank of the DataLoader job at W = 2, grad_accum 2 (see the
    module's docstring): prints STEP:RANKS for each step whose report
    carried a lane state, of how many ranks' items."""
    import torch.distributed as dist
    rank, world, store, url, token, run, recipe, state_file = (int(argv[0]), int(argv[1]),
                                                               *argv[2:])
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world)
    client = None
    if rank == 0:
        client = ordo.Client(url, token=token)
        client.create_run(run, register(url, token, recipe), world_size=world)
    data = ordo.torch.DataLoader(recipe, rank, world, grad_accum=2)
    for item in data:
        if item["microbatch"] == 0:
            assert "lane_state" not in item, item["step"]
            continue
        out = report(client, item, 1.0)
        if out["lane_state"] is not None:
            print(f"{out['step']}:{int('lane_state' in item)}")
        if item["step"] == EPOCH_STEPS:
            break
    state = data.state_dict()  # a collective
    if rank == 0:
        with open(state_file, "w") as f:
            json.dump(state, f)
    data.close()
    if client is not None:
        assert client.close() == 0
    dist.destroy_process_group()


def rank_main(argv):
    """One rank of the 2-process group (see the module's docstring)."""
    import torch.distributed as dist
    rank, world, store, url, token, run, recipe = (int(argv[0]), int(argv[1]), *argv[2:])
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world)
    client = None
    if rank == 0:
        client = ordo.Client(url, token=token)
        client.create_run(run, register(url, token, recipe), world_size=world)
    loader = Loader(recipe, rank, world)
    for _ in range(STEPS):
        b = next(loader)
        out = report(client, b, rank_loss(b["step"], rank), weight=rank_weight(rank))
        print(out["step"], out["batch_digest"], out["loss"], out["tokens"])
    # a rank with an item that is no step's last: both ranks raise
    bad = dict(b, step=1)
    if rank == 1:
        del bad["lane_digests"]
    try:
        report(client, bad, 1.0)
    except ValueError as e:
        print("raised: ValueError:", e)
    # ranks at different steps: both raise
    try:
        report(client, dict(b, step=b["step"] + rank), 1.0)
    except RuntimeError as e:
        print("raised: RuntimeError:", e)
    # a lane state on some ranks and not on others: both raise
    try:
        report(client, dict(b, lane_state=loader.state()) if rank == 1 else b, 1.0)
    except RuntimeError as e:
        print("raised: RuntimeError:", e)
    loader.close()
    if client is not None:
        assert client.close() == 0
    dist.destroy_process_group()


def register(url, token, recipe):
    """Stores the recipe in ordo serve; returns its id."""
    c = ordo.Client(url, token=token)
    with open(recipe) as f:
        recipe_id = c.register_recipe(json.load(f))
    c.close()
    return recipe_id


if __name__ == "__main__":
    if sys.argv[1:2] == ["--rank"]:
        rank_main(sys.argv[2:])
    elif sys.argv[1:2] == ["--epochs"]:
        epochs_main(sys.argv[2:])
    else:
        unittest.main()
