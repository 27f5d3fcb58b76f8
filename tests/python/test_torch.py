"""ordo.torch: the Dataset's items (labels shifted with nothing lost,
position ids, sources against the ledger), through torch's DataLoader, and
the Stateful DataLoader's merged state resuming at other world sizes (in one
process, and gathered over a real 2-process gloo group); bad configurations
refused naming the numbers.

Run as `python3 test_torch.py gloo RECIPE OUT PORT` it is the 2-process gloo
job the tests start."""
import io
import json
import os
import pickle
import subprocess
import sys
import unittest

import common

try:
    import torch
    import torch.utils.data
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

EOT = 256  # the bytes tokenizer's end of text
STEPS = 12  # the uninterrupted stream compared with resumes


def write_recipe(folder, name, **fields):
    """A recipe over common.corpus's two sources (short 0.7, long 0.3)."""
    recipe = {"name": name, "seed": 7, "seq_len": 32, "global_batch": 16, "lanes": 8,
              "flush_every": 2, "shuffle": True, "labels": "shifted",
              "tokenizer": {"kind": "bytes"},
              "sources": [{"name": "short", "paths": ["data/short.jsonl"], "weight": 0.7},
                          {"name": "long", "paths": ["data/long.jsonl"], "weight": 0.3}]}
    recipe.update(fields)
    path = os.path.join(folder, name + ".json")
    with open(path, "w") as f:
        json.dump(recipe, f)
    return path


def tiny_corpus(folder):
    """Two small sources of distinct short documents (a lane's pass over a
    source is a few samples) and a shifted recipe in order (no shuffle)."""
    os.makedirs(os.path.join(folder, "tiny"), exist_ok=True)
    docs = {}
    for name, count in (("a", 48), ("b", 40)):
        docs[name] = [f"{name}{i} " + "é步" * (i % 4) + "x" * (i % 7) for i in range(count)]
        with open(os.path.join(folder, "tiny", name + ".jsonl"), "w") as f:
            for text in docs[name]:
                f.write(json.dumps({"text": text}) + "\n")
    recipe = {"name": "tiny", "seed": 3, "seq_len": 16, "global_batch": 16, "lanes": 8,
              "flush_every": 2, "shuffle": False, "labels": "shifted",
              "tokenizer": {"kind": "bytes"}, "chunk_records": 4,
              "sources": [{"name": "a", "paths": ["tiny/a.jsonl"], "weight": 0.6},
                          {"name": "b", "paths": ["tiny/b.jsonl"], "weight": 0.4}]}
    path = os.path.join(folder, "tiny.json")
    with open(path, "w") as f:
        json.dump(recipe, f)
    return path, docs


def take(iterator, count):
    return [next(iterator) for _ in range(count)]


def same_items(test, a, b):
    """Items equal field by field (tensors by value)."""
    test.assertEqual(len(a), len(b))
    for x, y in zip(a, b):
        test.assertEqual(sorted(x), sorted(y))
        for key in x:
            if isinstance(x[key], torch.Tensor):
                test.assertEqual(x[key].dtype, y[key].dtype, key)
                test.assertTrue(torch.equal(x[key], y[key]), (key, x["step"], x["microbatch"]))
            else:
                test.assertEqual(x[key], y[key], key)


def global_steps(loaders, steps):
    """{step: (global batch rows [B, sample_len], lane digests)} from one
    DataLoader per dp rank (in rank order), `steps` steps each."""
    out = {}
    for _ in range(steps):
        rows, digests, step = [], [], None
        for loader in loaders:
            for _ in range(loader.dataset.grad_accum):
                item = next(loader)
                step = item["step"]
                full = item["input"]
                if "labels" in item:
                    full = torch.cat([item["input"], item["labels"][:, -1:]], dim=1)
                rows.append(full)
            digests += item["lane_digests"]
        out[step] = (torch.cat(rows), digests)
    return out


def loaders(recipe, world, grad_accum=1, state=None, **options):
    import ordo.torch
    out = [ordo.torch.DataLoader(recipe, r, world, grad_accum=grad_accum, **options)
           for r in range(world)]
    if state is not None:
        for loader in out:
            loader.load_state_dict(state)
    return out


def roundtrip(state):
    """The state through torch.save / torch.load."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return torch.load(buffer)


class TorchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not HAVE_TORCH:
            raise unittest.SkipTest("python3-torch is not installed")
        import ordo.torch
        cls.ot = ordo.torch
        cls.dir = common.tempdir()
        common.corpus(cls.dir)
        cls.recipe = write_recipe(cls.dir, "mix")
        cls.base = global_steps(loaders(cls.recipe, 1), STEPS)

    def test_labels_shifted_lose_and_repeat_nothing(self):
        """Each row's seq_len + 1 tokens, concatenated per lane and source in
        order, are the documents: every document of the corpus exactly once
        in the lanes' first passes, byte for byte."""
        plain = next(iter(self.ot.Dataset(os.path.join(self.dir, "recipe.json"), 0, 1)))
        self.assertNotIn("labels", plain)  # "labels": "none" (the default): input alone
        self.assertEqual(tuple(plain["input"].shape), (16, 64))
        recipe, docs = tiny_corpus(self.dir)
        ds = self.ot.Dataset(recipe, 0, 1)
        streams, S = {}, ds.seq_len
        for item in take(iter(ds), 40):
            self.assertEqual(tuple(item["input"].shape), (16, S))
            self.assertEqual(tuple(item["labels"].shape), (16, S))
            self.assertTrue(torch.equal(item["labels"][:, :-1], item["input"][:, 1:]))
            for row in range(16):
                lane, source = row // 2, int(item["source"][row])
                full = item["input"][row].tolist() + [int(item["labels"][row, -1])]
                streams.setdefault((lane, source), []).extend(full)
        seen = {name: [] for name in docs}
        for (lane, source), tokens in streams.items():
            name = ds.sources[source]
            self.assertNotIn(257, tokens)  # no padding
            pieces, current = [], []
            for t in tokens:
                if t == EOT:
                    pieces.append(bytes(current).decode("utf-8"))
                    current = []
                else:
                    self.assertLess(t, 256)
                    current.append(t)
            first_pass = []
            for text in pieces:  # up to the first document seen again: the next pass
                if text in first_pass:
                    break
                first_pass.append(text)
            else:
                self.fail(f"lane {lane} did not finish a pass over source {name}")
            for text in first_pass:
                self.assertIn(text, docs[name])
            seen[name] += first_pass
        for name in docs:  # partitioned among the lanes: each once, none lost
            self.assertEqual(sorted(seen[name]), sorted(docs[name]))

    def test_position_ids_restart_at_document_starts(self):
        """doc_start is True exactly after an end of text (and where a lane's
        stream of a source begins); "document" positions count from the row
        start and from each document start; "sample" positions 0..S-1."""
        recipe, _ = tiny_corpus(self.dir)
        doc = take(iter(self.ot.Dataset(recipe, 0, 1)), 6)
        sample = take(iter(self.ot.Dataset(recipe, 0, 1, position_ids="sample")), 6)
        previous = {}  # (lane, source) -> last token of the lane's previous sample
        restarts = 0
        for item, other in zip(doc, sample):
            S = item["input"].shape[1]
            self.assertTrue(torch.equal(other["position_ids"],
                                        torch.arange(S).repeat(16, 1)))
            self.assertEqual(item["position_ids"].dtype, torch.int64)
            self.assertEqual(item["doc_start"].dtype, torch.bool)
            for row in range(16):
                key = (row // 2, int(item["source"][row]))
                tokens = item["input"][row].tolist()
                last = previous.get(key, EOT)
                expected_start, expected_pos, pos = [], [], 0
                for t, token in enumerate(tokens):
                    before = last if t == 0 else tokens[t - 1]
                    start = before == EOT
                    pos = 0 if (start or t == 0) else pos + 1
                    expected_start.append(start)
                    expected_pos.append(pos)
                    restarts += start and t > 0
                self.assertEqual(item["doc_start"][row].tolist(), expected_start)
                self.assertEqual(item["position_ids"][row].tolist(), expected_pos)
                previous[key] = int(item["labels"][row, -1])
        self.assertGreater(restarts, 20)  # documents start inside rows
        with self.assertRaisesRegex(ValueError, "position_ids 'token'"):
            self.ot.Dataset(recipe, 0, 1, position_ids="token")

    def test_source_matches_the_ledger(self):
        """Per step, the rows of each source (both ranks of W = 2) times the
        sample length are the source tokens `ordo run` records."""
        db = os.path.join(self.dir, "run.db")
        subprocess.run([common.ORDO, "run", self.recipe, "--db", db, "--name", "mix-run",
                        "--world-size", "2", "--steps", "6", "--quiet"], check=True,
                       capture_output=True)
        server = common.Server(db)
        try:
            recorded = {s["step"]: s["source_tokens"] for s in common.steps(server.url, "mix-run")}
        finally:
            server.stop()
        self.assertEqual(sorted(recorded), list(range(1, 7)))
        ranks = [iter(self.ot.Dataset(self.recipe, r, 2, grad_accum=2)) for r in range(2)]
        for step in range(1, 7):
            rows = [0, 0]
            totals = [0, 0]
            for it in ranks:
                for item in take(it, 2):
                    self.assertEqual(item["step"], step)
                    for source in item["source"].tolist():
                        rows[source] += 1
                for s, tokens in enumerate(item["source_tokens"]):
                    totals[s] += tokens
            self.assertEqual([n * 33 for n in rows], recorded[step])
            self.assertEqual(totals, recorded[step])
            self.assertLessEqual(abs(rows[0] - 0.7 * 16), 2)

    def test_through_torch_dataloader(self):
        """torch.utils.data.DataLoader(batch_size=None, pin_memory=True) with
        0 and 1 workers gives the items of direct iteration; the Dataset
        pickles before and after iterating; 2 workers are refused."""
        ds = self.ot.Dataset(self.recipe, 1, 2, grad_accum=2)
        direct = take(iter(ds), 8)
        for workers in (0, 1):
            dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=workers,
                                             pin_memory=True)
            same_items(self, take(iter(dl), 8), direct)
        same_items(self, take(iter(pickle.loads(pickle.dumps(ds))), 8), direct)
        # a Dataset given a state (of W = 1, after step 2) starts there, in the worker too
        single = loaders(self.recipe, 1)[0]
        take(single, 2)
        resumed = self.ot.Dataset(self.recipe, 1, 2, grad_accum=2, state=single.state_dict())
        dl = torch.utils.data.DataLoader(resumed, batch_size=None, num_workers=1)
        same_items(self, take(iter(dl), 4), direct[4:])
        self.assertEqual(direct[1]["lanes"], [4, 5, 6, 7])
        self.assertNotIn("lane_digests", direct[0])
        self.assertEqual(direct[1]["lane_digests"], self.base[1][1][4:])
        dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
        with self.assertRaisesRegex(RuntimeError, "num_workers 0 or 1, not 2"):
            next(iter(dl))

    def test_resume_at_other_world_sizes(self):
        """The merged state of W = 2 (grad_accum 2) after step 5 resumes at
        W = 1, 2 and 4, with any grad_accum, to the uninterrupted stream."""
        first = loaders(self.recipe, 2, grad_accum=2)
        before = global_steps(first, 5)
        for step in range(1, 6):
            self.assertTrue(torch.equal(before[step][0], self.base[step][0]))
        parts = [loader.local_state_dict() for loader in first]
        state = roundtrip(self.ot.merge_state_dicts(parts))
        self.assertEqual((state["step"], state["microbatch"]), (5, 0))
        for world, accum in ((1, 2), (2, 1), (4, 2), (8, 1)):
            after = global_steps(loaders(self.recipe, world, accum, state=state), STEPS - 5)
            for step in range(6, STEPS + 1):
                self.assertTrue(torch.equal(after[step][0], self.base[step][0]), (world, step))
                self.assertEqual(after[step][1], self.base[step][1])
        # a world of one gathers nothing: its state_dict is its merged state
        single = loaders(self.recipe, 1)[0]
        take(single, 3)
        state = roundtrip(single.state_dict())
        after = global_steps(loaders(self.recipe, 4, state=state), 2)
        self.assertTrue(torch.equal(after[4][0], self.base[4][0]))
        with self.assertRaisesRegex(RuntimeError, "dp_world_size 2 .*not initialised"):
            first[0].state_dict()

    def test_mid_step_state(self):
        """A state taken after 1 of 2 microbatches resumes at the same split
        with the step's second microbatch; at another split it is refused
        naming both."""
        ranks = loaders(self.recipe, 2, grad_accum=2)
        global_steps(ranks, 3)
        middle = [next(loader) for loader in ranks]
        self.assertEqual((middle[0]["step"], middle[0]["microbatch"]), (4, 0))
        state = roundtrip(self.ot.merge_state_dicts([l.local_state_dict() for l in ranks]))
        self.assertEqual((state["step"], state["microbatch"]), (3, 1))
        expected = [take(loader, 3) for loader in ranks]
        for rank, loader in enumerate(loaders(self.recipe, 2, 2, state=state)):
            got = take(loader, 3)
            # the resume's first step, in the middle of its flush epoch,
            # carries its lanes' state (the uninterrupted stream's does not)
            self.assertEqual((got[0]["step"], got[0]["microbatch"]), (4, 1))
            self.assertNotIn("lane_state", expected[rank][0])
            self.assertEqual(self.ot._loader.describe_state(got[0].pop("lane_state")), (4, 4))
            same_items(self, got, expected[rank])
        with self.assertRaisesRegex(ValueError, "middle of step 4 .*dp_world_size 2, grad_accum "
                                    "2.*not at dp_world_size 4, grad_accum 1"):
            loaders(self.recipe, 4, 1, state=state)

    def test_rank_binding_contrast(self):
        """lane_binding="rank" (the rank-sharded loader): its state resumes
        at the same world size exactly, and at another one diverges."""
        ranks = loaders(self.recipe, 2, lane_binding="rank")
        global_steps(ranks, 3)
        state = self.ot.merge_state_dicts([l.local_state_dict() for l in ranks])
        expected = global_steps(ranks, 2)
        same = global_steps(loaders(self.recipe, 2, state=state, lane_binding="rank"), 2)
        other = global_steps(loaders(self.recipe, 4, state=state, lane_binding="rank"), 2)
        self.assertTrue(torch.equal(same[4][0], expected[4][0]))
        self.assertFalse(torch.equal(other[4][0], expected[4][0]))

    def test_state_gathered_over_gloo(self):
        """Two processes in a gloo group: state_dict() gathers and merges, both
        ranks save the same dict, and either one resumes at W = 1, 2, 4."""
        out = os.path.join(self.dir, "gloo")
        os.makedirs(out, exist_ok=True)
        done = subprocess.run([sys.executable, __file__, "gloo", self.recipe, out,
                               str(common.free_port())], capture_output=True, text=True,
                              timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        saved = [torch.load(os.path.join(out, f"rank{r}.pt")) for r in range(2)]
        self.assertEqual(saved[0], saved[1])
        self.assertEqual((saved[0]["step"], saved[0]["dp_world_size"]), (5, 2))
        for world, state in ((1, saved[1]), (2, saved[0]), (4, saved[1])):
            after = global_steps(loaders(self.recipe, world, state=state), STEPS - 5)
            for step in range(6, STEPS + 1):
                self.assertTrue(torch.equal(after[step][0], self.base[step][0]), (world, step))

    def test_bad_configuration(self):
        """Refused at start-up naming the numbers."""
        ot = self.ot
        with self.assertRaisesRegex(RuntimeError, r"lanes \(8\) must be divisible by world "
                                    r"size \(3\)"):
            ot.DataLoader(self.recipe, 0, 3)
        with self.assertRaisesRegex(RuntimeError, r"rank \(2\) must be below world size \(2\)"):
            ot.DataLoader(self.recipe, 2, 2)
        with self.assertRaisesRegex(ValueError, r"global batch \(16\) must be divisible by "
                                    r"dp_world_size \(2\) x grad_accum \(3\) = 6"):
            ot.DataLoader(self.recipe, 0, 2, grad_accum=3)
        with self.assertRaisesRegex(ValueError, r"global batch 32 is not the recipe's "
                                    r"global_batch \(16\)"):
            ot.DataLoader(self.recipe, 0, 2, global_batch=32)
        with self.assertRaisesRegex(ValueError, r"grad_accum \(0\)"):
            ot.DataLoader(self.recipe, 0, 2, grad_accum=0)
        loader = ot.DataLoader(self.recipe, 0, 1)
        take(loader, 2)
        state = loader.state_dict()
        other = write_recipe(self.dir, "other", seed=8)
        other_loader = ot.DataLoader(other, 0, 2)
        with self.assertRaisesRegex(ValueError, f"state is of recipe {state['recipe_id']} "
                                    rf"\(mix\); this loader's recipe is "
                                    f"{other_loader.dataset.recipe_id} \\(other\\)"):
            other_loader.load_state_dict(state)
        newer = dict(state, data_algorithm=state["data_algorithm"] + 1)
        with self.assertRaisesRegex(ValueError, f"data algorithm {state['data_algorithm'] + 1}"
                                    f"; recipe .* is of data algorithm "
                                    f"{state['data_algorithm']}"):
            ot.DataLoader(self.recipe, 0, 2).load_state_dict(newer)
        with self.assertRaisesRegex(ValueError, "state format 2; this ordo reads state format 1"):
            ot.DataLoader(self.recipe, 0, 2).load_state_dict(dict(state, format=2))
        with self.assertRaisesRegex(ValueError, "lanes follow step 2, the state says step 3"):
            ot.DataLoader(self.recipe, 0, 2).load_state_dict(dict(state, step=3))
        with self.assertRaisesRegex(ValueError, "lane_binding 'logical'; this loader's is "
                                    "'rank'"):
            ot.DataLoader(self.recipe, 0, 2, lane_binding="rank").load_state_dict(state)
        with self.assertRaisesRegex(ValueError, "not a state of ordo.torch.DataLoader"):
            ot.DataLoader(self.recipe, 0, 2).load_state_dict({"ordo_state": state["ordo_state"]})
        # a refused state leaves the loader where it was
        kept = ot.DataLoader(self.recipe, 0, 1)
        with self.assertRaises(ValueError):
            kept.load_state_dict(newer)
        self.assertEqual(next(kept)["step"], 1)
        # one rank's part alone lacks the other's lanes: the library names one
        part = ot.DataLoader(self.recipe, 0, 2).local_state_dict()
        with self.assertRaisesRegex(RuntimeError, "lane"):
            ot.DataLoader(self.recipe, 1, 2).load_state_dict(part)
        with self.assertRaisesRegex(ValueError, r"no state of dp rank\(s\) \[1\]"):
            ot.merge_state_dicts([part])
        with self.assertRaisesRegex(ValueError, "not base64"):
            ot.DataLoader(self.recipe, 0, 2).load_state_dict(dict(state, ordo_state="@@"))
        # ranks at different positions; peers of one rank (tensor parallel) are fine
        ahead = ot.DataLoader(self.recipe, 1, 2)
        next(ahead)
        with self.assertRaisesRegex(ValueError, "dp rank 1 has step 1, dp rank 0 has 0"):
            ot.merge_state_dicts([part, ahead.local_state_dict()])
        peer = ot.DataLoader(self.recipe, 1, 2).local_state_dict()
        merged = ot.merge_state_dicts([part, part, peer, peer])
        self.assertEqual(merged, ot.merge_state_dicts([part, peer]))
        self.assertEqual(merged["step"], 0)


def rank_job(rank, recipe, out, port):
    """One rank of a 2-process gloo job: 5 steps (grad_accum 2), then the
    gathered state saved with torch.save."""
    import torch.distributed as dist
    import ordo.torch
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=2)
    loader = ordo.torch.DataLoader(recipe, rank, 2, grad_accum=2)
    for item in take(loader, 10):
        pass
    assert item["step"] == 5, item["step"]
    torch.save(loader.state_dict(), os.path.join(out, f"rank{rank}.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "gloo":
        # the ranks are forked from this process: torch is imported once
        import torch.multiprocessing as mp
        mp.start_processes(rank_job, args=tuple(sys.argv[2:]), nprocs=2, join=True,
                           start_method="fork")
    else:
        unittest.main()
