"""The ctypes binding: batches, digests, elastic resume through state dicts."""
import os
import unittest

import ordo
from ordo.loader import Loader, OrdoError, merge_states

import common


def run_steps(recipe, world, steps, state=None):
    """Global lane digests per step from `world` ranks in lockstep; and the
    merged state after the last step."""
    loaders = [Loader(recipe, r, world, state=state) for r in range(world)]
    out = []
    for _ in range(steps):
        lanes = {}
        step = None
        for l in loaders:
            b = next(l)
            step = b["step"]
            lanes.update(zip(b["lanes"], b["lane_digests"]))
        out.append((step, [lanes[i] for i in sorted(lanes)]))
    merged = merge_states([l.state() for l in loaders])
    for l in loaders:
        l.close()
    return out, merged


def varints(data):
    """The unsigned LEB128 numbers a checkpoint state is made of."""
    out, value, shift = [], 0, 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            out.append(value)
            value, shift = 0, 0
    return out


def unvarints(values):
    out = bytearray()
    for v in values:
        while True:
            out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
            v >>= 7
            if not v:
                break
    return bytes(out)


class LoaderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = common.tempdir()
        cls.recipe = common.corpus(cls.dir)

    def test_batches_and_their_digests(self):
        l = Loader(self.recipe, 1, 2)
        b = next(l)
        self.assertEqual(b["step"], 1)
        self.assertEqual(b["lanes"], [4, 5, 6, 7])
        self.assertEqual(b["tokens"].shape, (8, 64))
        self.assertEqual(str(b["tokens"].dtype), "uint32")
        # the helper for other loaders computes the same lane digests
        self.assertEqual(ordo.lane_digests(b["tokens"], 4), b["lane_digests"])
        l.close()

    def test_world_sizes_agree_and_resume_elsewhere(self):
        one, _ = run_steps(self.recipe, 1, 12)
        four, _ = run_steps(self.recipe, 4, 12)
        self.assertEqual(one, four)
        first, state = run_steps(self.recipe, 2, 5)
        rest, _ = run_steps(self.recipe, 8, 7, state=state)
        self.assertEqual(first + rest, one)

    def test_state_dict_round_trip(self):
        l = Loader(self.recipe, 0, 1)
        for _ in range(3):
            next(l)
        saved = l.state_dict()
        expected = next(l)["lane_digests"]
        l.load_state_dict(saved)
        self.assertEqual(next(l)["lane_digests"], expected)
        l.close()

    def test_load_state_dict_checks_the_replay_against_the_ledger(self):
        """A state whose delivered count was changed does not reproduce the
        lane digests the ledger holds: refused through the library, naming
        the step and the lane; the honest state resumes."""
        import base64, sqlite3, subprocess
        db = os.path.join(self.dir, "checked.db")
        subprocess.run([common.ORDO, "run", self.recipe, "--db", db, "--name", "base",
                        "--world-size", "2", "--steps", "9", "--quiet"], check=True)
        con = sqlite3.connect(db)
        state = con.execute("SELECT lane_state FROM checkpoints WHERE step = 9").fetchone()[0]
        con.close()
        honest = {"ordo_state": base64.b64encode(state).decode("ascii")}
        l = Loader(self.recipe, 0, 4, db=db, run="base")
        l.load_state_dict(honest)
        self.assertEqual(next(l)["step"], 10)
        fields = varints(state)  # version, binding, tag, step, stride, S, S bases,
        delivered = 6 + fields[5] + 1 + 2  # lane count, then lane 0: lane, epoch, delivered
        fields[delivered] -= 1
        with self.assertRaisesRegex(OrdoError, r"refused.*step \d+ of lane 0"):
            l.load_state_dict({"ordo_state": base64.b64encode(unvarints(fields)).decode()})
        l.close()

    def test_bad_arguments_are_errors(self):
        with self.assertRaisesRegex(OrdoError, r"lanes \(8\) must be divisible by world size \(3\)"):
            Loader(self.recipe, 0, 3)
        with self.assertRaises(OrdoError):
            Loader(os.path.join(self.dir, "missing.json"), 0, 1)
        with self.assertRaisesRegex(ValueError, "do not split"):
            ordo.lane_digests([[1, 2]] * 3, 2)


if __name__ == "__main__":
    unittest.main()
