"""examples/torch_train.py, run as a user would (gloo, CPU, ranks started by
torch.multiprocessing, or by torchrun for the resume at W = 1): trained at
W = 2 with a checkpoint after step 20, resumed from one rank's checkpoint
file at W = 1 and 4 (new runs) and 8 (a job stopped after step 20 going on
in a new segment of its run), every batch digest after the resume equals
the uninterrupted W = 2 run's as ordo serve compares them, and the
reported all-reduced losses agree to 1e-4; every lane's state is recorded
once per flush epoch after the first, and `ordo batch` regenerates a step
from its epoch. The same with the rank-bound loader diverges right after
the resume (and records no lane states: rank-bound lanes are no one run's)."""
import json
import os
import subprocess
import sys
import unittest

import common

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

EXAMPLE = os.path.join(common.ROOT, "examples", "torch_train.py")
SAVE_AT = 20
STEPS = 24  # the steps after the resume: 21 .. 24
GRAD_ACCUM = 2  # at W = 8: one row per microbatch (global batch 16); the contrast: 1


class TrainingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not HAVE_TORCH:
            raise unittest.SkipTest("python3-torch is not installed")
        cls.dir = common.tempdir()
        cls.recipe = common.corpus(cls.dir, lanes=8, global_batch=16)
        with open(cls.recipe) as f:
            recipe = json.load(f)
        recipe["labels"] = "shifted"
        with open(cls.recipe, "w") as f:
            json.dump(recipe, f)
        cls.db = os.path.join(cls.dir, "l.db")
        cls.server = common.Server(cls.db)
        cls.token = common.token(cls.db)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def train(self, run, world, *extra, torchrun=False, grad_accum=GRAD_ACCUM, steps=STEPS):
        """Runs the example at `world` ranks: started by torchrun (python3 -m
        torch.distributed.run), or by the example itself (--nproc)."""
        env = dict(os.environ, PYTHONPATH=os.path.join(common.ROOT, "python"))
        for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
            env.pop(name, None)
        if torchrun:  # a rendezvous on a free port of its own; see the example's docstring
            cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                   f"--nproc_per_node={world}", "--redirects", "1", "--tee", "1", EXAMPLE]
        else:
            cmd = [sys.executable, EXAMPLE, "--nproc", str(world)]
        cmd += ["--recipe", self.recipe, "--url", self.server.url, "--token", self.token,
                "--run", run, "--steps", str(steps), "--grad-accum", str(grad_accum), *extra]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])

    def get(self, path):
        import ordo
        c = ordo.Client(self.server.url, token=self.token)
        out = c._request("GET", path)
        c.close()
        return out

    def compare(self, a, b):
        return self.get(f"/api/compare?a={a}&b={b}")

    def losses(self, run):
        return {s["step"]: s["loss"] for s in common.steps(self.server.url, run)}

    def check_resumed(self, run, first, base):
        """`run`'s steps first .. STEPS have w2's batch digests (ordo serve's
        compare) and its losses to 1e-4."""
        cmp = self.compare("w2", run)
        self.assertEqual(cmp["steps_compared"], STEPS - first + 1, cmp)
        self.assertEqual(cmp["matched"], STEPS - first + 1, cmp)
        losses = self.losses(run)
        self.assertEqual(sorted(losses), list(range(first, STEPS + 1)))
        for step in losses:
            self.assertAlmostEqual(losses[step], base[step], delta=1e-4 * abs(base[step]),
                                   msg=f"{run} step {step}")

    def check_lane_states(self, run, first):
        """`run` (steps first .. STEPS) has a lane state in each flush epoch
        after the first, none in the first, and its batches are regenerated
        from their epoch, matching the reported digests."""
        flush = 2  # common.corpus's flush_every
        states = common.epoch_states(self.db, run)
        epochs = {(s - 1) // flush for s in range(max(first, flush + 1), STEPS + 1)}
        self.assertEqual({(s - 1) // flush for s in states}, epochs, states)
        self.assertEqual(len(states), len(epochs), states)  # one each: never a second one
        common.index(self.db, self.recipe)
        digests = {s["step"]: s["batch_digest"] for s in common.steps(self.server.url, run)}
        for n in (first + 2, STEPS - 1, STEPS):
            b = common.batch(self.db, run, n, self.dir)
            self.assertEqual((b["from"], b["from_step"], b["batch_digest"]),
                             ("epoch", (n - 1) // flush * flush, digests[n]), f"{run} step {n}")

    def test_logical_lanes_resume_at_other_world_sizes(self):
        ckpt = os.path.join(self.dir, "ckpt")
        self.train("w2", 2, "--save-at", str(SAVE_AT), "--checkpoints", ckpt)
        base = self.losses("w2")
        self.assertEqual(sorted(base), list(range(1, STEPS + 1)))
        self.assertLess(base[STEPS], base[1])  # the model learned from these batches
        self.check_lane_states("w2", 1)
        # each rank wrote its file; a resume reads any one of them
        self.assertEqual(sorted(os.listdir(ckpt)), ["step20-rank0.pt", "step20-rank1.pt"])
        # W = 1 and 4: new runs from w2's checkpoint, compared with it
        for world in (1, 4):
            run = f"resume-w{world}"
            self.train(run, world, "--resume", os.path.join(ckpt, "step20-rank1.pt"),
                       "--baseline", "w2", torchrun=world == 1)
            self.check_resumed(run, SAVE_AT + 1, base)
            self.check_lane_states(run, SAVE_AT + 1)
        # W = 8: a job stopped after step 20 goes on in a new segment of its run
        job_ckpt = os.path.join(self.dir, "job-ckpt")
        self.train("job", 2, "--save-at", str(SAVE_AT), "--checkpoints", job_ckpt, steps=SAVE_AT)
        self.train("job", 8, "--resume", os.path.join(job_ckpt, "step20-rank1.pt"))
        self.check_resumed("job", 1, base)
        self.check_lane_states("job", 1)
        segments = self.get("/api/runs/job")["segments"]
        self.assertEqual([(s["start_step"], s["world_size"]) for s in segments],
                         [(1, 2), (SAVE_AT + 1, 8)])
        # the dashboard shows these runs, loss curves overlaid
        shots = os.path.join(common.BUILD, "screenshots")
        os.makedirs(shots, exist_ok=True)
        done = subprocess.run(["node", os.path.join(common.ROOT, "tests", "web", "shot.mjs"),
                               os.path.join(common.BUILD, "peers", "node_modules"), self.server.url,
                               "#/compare?runs=w2,resume-w1,resume-w4,job",
                               os.path.join(shots, "training-compare.png")],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)

    def test_rank_bound_resume_diverges(self):
        ckpt = os.path.join(self.dir, "rank-ckpt")
        self.train("rank-w2", 2, "--lane-binding", "rank", "--save-at", str(SAVE_AT),
                   "--checkpoints", ckpt, grad_accum=1)
        self.train("rank-resume-w4", 4, "--lane-binding", "rank", "--baseline", "rank-w2",
                   "--resume", os.path.join(ckpt, "step20-rank0.pt"), grad_accum=1)
        cmp = self.compare("rank-w2", "rank-resume-w4")
        self.assertEqual(cmp["steps_compared"], STEPS - SAVE_AT)
        self.assertEqual(cmp["first_divergent_step"], SAVE_AT + 1)
        self.assertEqual(common.epoch_states(self.db, "rank-w2"), [])
        self.assertEqual(common.epoch_states(self.db, "rank-resume-w4"), [])


if __name__ == "__main__":
    unittest.main()
