"""A PyTorch job (gloo, CPU) trained with the ordo loader at W = 2,
checkpointed at step 20 and resumed at W = 1 and W = 4: every batch digest
after the resume equals the uninterrupted W = 2 run's as ordo serve
recorded them, and the losses agree to floating-point noise. The same with
the rank-bound loader diverges right after the resume."""
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

JOB = os.path.join(os.path.dirname(__file__), "train_job.py")


class TrainingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not HAVE_TORCH:
            raise unittest.SkipTest("python3-torch is not installed")
        cls.dir = common.tempdir()
        cls.recipe = common.corpus(cls.dir, lanes=8, global_batch=16)
        cls.db = os.path.join(cls.dir, "l.db")
        cls.server = common.Server(cls.db)
        cls.token = common.token(cls.db)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def job(self, run, world, first, last, binding="logical", save=None, load=None,
            baseline=None):
        cmd = [sys.executable, JOB, self.recipe, self.server.url, self.token, run, str(world),
               str(first), str(last), binding, "--port", str(common.free_port())]
        for flag, value in (("--save", save), ("--load", load), ("--baseline", baseline)):
            if value:
                cmd += [flag, value]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])

    def steps(self, run):
        import ordo
        c = ordo.Client(self.server.url, token=self.token)
        out = {s["step"]: s for s in c._request("GET", f"/api/runs/{run}/steps?limit=1000")["steps"]}
        c.close()
        return out

    def compare(self, a, b):
        import ordo
        c = ordo.Client(self.server.url, token=self.token)
        out = c.compare(a, b)
        c.close()
        return out

    def test_logical_lanes_resume_at_other_world_sizes(self):
        ckpt = os.path.join(self.dir, "step20.pt")
        self.job("w2", 2, 1, 40)
        self.job("w2-first-half", 2, 1, 20, save=ckpt)
        for world in (1, 4):
            self.job(f"resume-w{world}", world, 21, 40, load=ckpt, baseline="w2")
            cmp = self.compare("w2", f"resume-w{world}")
            self.assertEqual(cmp["steps_compared"], 20)
            self.assertEqual(cmp["matched"], 20, cmp)
            base, resumed = self.steps("w2"), self.steps(f"resume-w{world}")
            for step in range(21, 41):
                self.assertAlmostEqual(base[step]["loss"], resumed[step]["loss"], delta=1e-4 *
                                       abs(base[step]["loss"]))
        # the loss went down: the model learned from these batches
        base = self.steps("w2")
        self.assertLess(base[40]["loss"], base[1]["loss"])
        # the dashboard shows these runs, loss curves overlaid
        shots = os.path.join(common.BUILD, "screenshots")
        os.makedirs(shots, exist_ok=True)
        done = subprocess.run(["node", os.path.join(common.ROOT, "tests", "web", "shot.mjs"),
                               os.path.join(common.BUILD, "peers", "node_modules"), self.server.url,
                               "#/compare?runs=w2,resume-w1,resume-w4",
                               os.path.join(shots, "training-compare.png")],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)

    def test_rank_bound_resume_diverges(self):
        ckpt = os.path.join(self.dir, "rank20.pt")
        self.job("rank-w2", 2, 1, 40, binding="rank")
        self.job("rank-first-half", 2, 1, 20, binding="rank", save=ckpt)
        self.job("rank-resume-w4", 4, 21, 40, binding="rank", load=ckpt, baseline="rank-w2")
        cmp = self.compare("rank-w2", "rank-resume-w4")
        self.assertEqual(cmp["steps_compared"], 20)
        self.assertEqual(cmp["first_divergent_step"], 21)


if __name__ == "__main__":
    unittest.main()
