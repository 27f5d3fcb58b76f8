"""The ctypes binding: batches, digests, elastic resume through state dicts."""
import ctypes
import json
import os
import shutil
import subprocess
import sys
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



class StructSizes(unittest.TestCase):
    def test_a_library_of_other_struct_sizes_is_refused(self):
        """The binding's ctypes copies are the library's structs; one of
        another size (another version's library) is refused by name."""
        from ordo import loader
        lib = loader.lib()
        loader._check_structs(lib, "libordo.so")  # this build: the same sizes
        class Smaller(ctypes.Structure):
            _fields_ = loader._RunInfo._fields_[:-1]
        saved = loader._MIRRORS["ordo_run_info"]
        loader._MIRRORS["ordo_run_info"] = Smaller
        try:
            with self.assertRaisesRegex(OSError, r"libordo.so: struct ordo_run_info is \d+ bytes "
                                                 r"there, \d+ in this binding"):
                loader._check_structs(lib, "libordo.so")
        finally:
            loader._MIRRORS["ordo_run_info"] = saved

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
        # each sample's source: an int64 per row, accounting for every token
        self.assertEqual(b["source"].shape, (8,))
        self.assertEqual(str(b["source"].dtype), "int64")
        counts = [int((b["source"] == s).sum()) * 64 for s in range(len(b["source_tokens"]))]
        self.assertEqual(counts, b["source_tokens"])
        self.assertEqual(b["pad_tokens"], 0)
        l.close()
        import torch
        plain = Loader(self.recipe, 0, 1)
        first_starts = next(plain)["doc_start"].tolist()
        plain.close()
        tl = Loader(self.recipe, 0, 1, as_torch=True)
        t = next(tl)
        self.assertEqual(t["source"].dtype, torch.int64)
        self.assertEqual(tuple(t["source"].shape), (16,))
        # doc_start is a tensor too (bool), the same flags as numpy's
        self.assertEqual(t["doc_start"].dtype, torch.bool)
        self.assertEqual(t["doc_start"].to(torch.uint8).tolist(), first_starts)
        tl.close()

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

    def test_a_ranks_own_state_resumes_it_at_the_same_world_size(self):
        """What a trainer saves per rank (state_dict) loads back into that
        rank at the same W, for every shape and both bindings."""
        shapes = [(lanes, world, binding) for lanes in (4, 8) for world in (1, 2, 4)
                  for binding in ("logical", "rank") if lanes % world == 0]
        shapes += [(8, 8, "logical"), (8, 8, "rank")]
        refused = []
        for lanes, world, binding in shapes:
            folder = os.path.join(self.dir, f"own-{lanes}-{world}-{binding}")
            os.makedirs(folder)
            shutil.copytree(os.path.join(self.dir, "data"), os.path.join(folder, "data"))
            with open(self.recipe) as f:
                recipe = json.load(f)
            recipe["lanes"] = lanes
            path = os.path.join(folder, "recipe.json")
            with open(path, "w") as f:
                json.dump(recipe, f)
            for rank in range(world):
                a = Loader(path, rank, world, lane_binding=binding)
                for _ in range(3):
                    next(a)
                saved = a.state_dict()
                expected = [next(a)["lane_digests"] for _ in range(3)]
                a.close()
                b = Loader(path, rank, world, lane_binding=binding)
                try:
                    b.load_state_dict(saved)
                except OrdoError as e:
                    refused.append(f"{lanes}/{world}/{binding}/{rank}: {e}")
                    b.close()
                    continue
                self.assertEqual([next(b)["lane_digests"] for _ in range(3)], expected)
                b.close()
        self.assertEqual(refused, [],
                         msg=f"{len(refused)} of {sum(w for _, w, _ in shapes)} ranks refused")

    def test_another_ranks_state_names_merge_states(self):
        a = Loader(self.recipe, 0, 2)
        next(a)
        saved = a.state_dict()
        a.close()
        b = Loader(self.recipe, 1, 2)
        with self.assertRaisesRegex(OrdoError, "merge_states"):
            b.load_state_dict(saved)
        b.close()
        wider = Loader(self.recipe, 0, 4)  # rank 0 of 4 owns lanes 0-1 of 0-3: enough
        wider.load_state_dict(saved)
        self.assertEqual(next(wider)["step"], 2)
        wider.close()

    def test_the_index_is_cached_next_to_the_recipe(self):
        folder = os.path.join(self.dir, "cached")
        os.makedirs(folder)
        shutil.copytree(os.path.join(self.dir, "data"), os.path.join(folder, "data"))
        recipe = os.path.join(folder, "recipe.json")
        shutil.copy(self.recipe, recipe)
        first = Loader(recipe, 0, 2)
        self.assertEqual(first.indexed_shards, 2)  # nothing cached yet: both indexed
        cache = first.index_cache
        self.assertTrue(cache and os.path.exists(cache))
        self.assertEqual(os.path.dirname(cache), folder)
        expected = [next(first)["lane_digests"] for _ in range(3)]
        first.close()
        self.assertEqual(first.hashed_shards, 2)
        second = Loader(recipe, 0, 2)
        self.assertEqual(second.indexed_shards, 0)  # every chunk table from the cache
        # and every shard's digest: no shard is hashed whole to open it again
        self.assertEqual((second.hashed_shards, second.hashed_bytes), (0, 0))
        self.assertEqual([next(second)["lane_digests"] for _ in range(3)], expected)
        second.close()
        # a changed shard is another shard: indexed again, the other one reused
        with open(os.path.join(folder, "data", "short.jsonl"), "a") as f:
            f.write(json.dumps({"text": "one more document"}) + "\n")
        third = Loader(recipe, 0, 2)
        self.assertEqual(third.indexed_shards, 1)
        self.assertEqual(third.hashed_shards, 1)  # only the changed one
        third.close()
        # a given ledger is the cache; index_cache=False turns caching off
        db = os.path.join(folder, "given.db")
        self.assertEqual(Loader(recipe, 0, 2, db=db).indexed_shards, 2)
        self.assertEqual(Loader(recipe, 0, 2, db=db).indexed_shards, 0)
        self.assertEqual(Loader(recipe, 0, 2, index_cache=False).indexed_shards, 2)
        # a cache that is not a ledger is left alone: the loader indexes without it
        bad = os.path.join(folder, "not-a-ledger.db")
        with open(bad, "wb") as f:
            f.write(b"this is not SQLite" * 100)
        with self.assertLogs("ordo", level="WARNING") as logs:
            l = Loader(recipe, 0, 2, index_cache=bad)
        self.assertEqual((l.indexed_shards, l.index_cache), (2, None))
        self.assertEqual(next(l)["step"], 1)
        l.close()
        self.assertTrue(any("no index cache" in line for line in logs.output))
        with open(bad, "rb") as f:
            self.assertEqual(f.read(), b"this is not SQLite" * 100)

    def test_without_numpy_or_torch(self):
        """Batches without numpy are lists with doc_start too; as_torch
        without torch is an error, not lists."""
        program = (
            "import sys\n"
            "sys.modules['numpy'] = None\n"
            "sys.modules['torch'] = None\n"
            "sys.path.insert(0, sys.argv[1])\n"
            "from ordo.loader import Loader\n"
            "b = next(Loader(sys.argv[2], 0, 2))\n"
            "assert isinstance(b['tokens'], list) and len(b['tokens']) == 8, b['tokens']\n"
            "assert len(b['tokens'][0]) == 64\n"
            "assert isinstance(b['doc_start'], list) and len(b['doc_start'][0]) == 64\n"
            "assert b['doc_start'][0][0] in (0, 1)\n"
            "try:\n"
            "    Loader(sys.argv[2], 0, 2, as_torch=True)\n"
            "except ImportError as e:\n"
            "    print('refused:', e)\n"
            "else:\n"
            "    raise SystemExit('as_torch without torch was accepted')\n")
        out = subprocess.run([sys.executable, "-c", program, os.path.join(common.ROOT, "python"),
                              self.recipe], capture_output=True, text=True, timeout=300)
        self.assertEqual(out.returncode, 0, msg=out.stderr)
        self.assertIn("torch", out.stdout)
    def test_load_state_dict_checks_the_replay_against_the_ledger(self):
        """A state whose packer position was moved does not reproduce the
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
        fields = varints(state)  # version, binding, tag, step, stride, S, lane count,
        offset = 6 + 1 + 1 + 2  # then lane 0: lane, source 0's unit, document, token offset
        fields[offset] += 1
        with self.assertRaisesRegex(OrdoError, r"refused: the checkpoint at step 9 .*lane 0"):
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
