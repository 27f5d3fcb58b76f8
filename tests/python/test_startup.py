"""Opening a rank's loader from an existing index: the plan ordo serve
serves (GET /api/recipes/{id}/plan) or the plan a ledger holds. Nothing is
hashed or indexed, the batches are a normal open's, and a byte changed in a
shard after indexing still stops the loader naming shard and chunk."""
import os
import shutil
import unittest

import common  # noqa: I100 (puts python/ on the path first)
from ordo.client import ClientError
from ordo.loader import Loader, OrdoError


def first_batches(loader, steps=6):
    out = []
    for _ in range(steps):
        b = next(loader)
        out.append((b["step"], b["lane_digests"], b["tokens"].tolist(), b["source"].tolist()))
    loader.close()
    return out


class StartupTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = common.tempdir()
        cls.recipe = common.corpus(cls.dir)
        cls.db = os.path.join(cls.dir, "ledger.db")
        indexing = Loader(cls.recipe, 0, 1, db=cls.db)  # indexes into the ledger
        cls.id = indexing.recipe_id
        cls.indexed_hashed = indexing.hashed_shards
        indexing.close()
        cls.expected = first_batches(Loader(cls.recipe, 1, 2, index_cache=False))
        cls.server = common.Server(cls.db)
        cls.reader = common.token(cls.db, "reader")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def check_nothing_hashed(self, loader):
        self.assertEqual(loader.hashed_shards, 0)
        self.assertEqual(loader.hashed_bytes, 0)
        self.assertEqual(loader.indexed_shards, 0)
        self.assertEqual(loader.recipe_id, self.id)

    def test_service_plan_opens_without_hashing_and_gives_the_same_batches(self):
        self.assertEqual(self.indexed_hashed, 2)  # the first open hashed both shards
        loader = Loader(self.id, 1, 2, plan_url=self.server.url, token=self.reader,
                        data_root=self.dir)
        self.check_nothing_hashed(loader)
        self.assertEqual(first_batches(loader), self.expected)

    def test_ledger_plan_opens_without_hashing_and_gives_the_same_batches(self):
        loader = Loader(self.id, 1, 2, db=self.db, data_root=self.dir)
        self.check_nothing_hashed(loader)
        self.assertEqual(first_batches(loader), self.expected)
        # the recipe file with the ledger: its digests from the ledger too
        loader = Loader(self.recipe, 1, 2, db=self.db)
        self.check_nothing_hashed(loader)
        self.assertEqual(first_batches(loader), self.expected)

    def test_unknown_recipe_and_bad_arguments_are_named(self):
        unknown = "ab" * 32
        with self.assertRaises(ClientError) as caught:
            Loader(unknown, 0, 1, plan_url=self.server.url)
        self.assertEqual(caught.exception.status, 404)
        self.assertIn(unknown, str(caught.exception))
        with self.assertRaisesRegex(OrdoError, unknown):
            Loader(unknown, 0, 1, db=self.db)
        with self.assertRaisesRegex(ValueError, "takes the recipe id"):
            Loader(self.recipe, 0, 1, plan_url=self.server.url)
        with self.assertRaisesRegex(ValueError, "give plan_url"):
            Loader(self.id, 0, 1)

    def test_changed_byte_after_indexing_stops_the_planned_loader(self):
        copy = os.path.join(self.dir, "copy")
        shutil.copytree(os.path.join(self.dir, "data"), os.path.join(copy, "data"))
        shard = os.path.join(copy, "data", "long.jsonl")
        with open(shard, "r+b") as f:
            text = f.read()
            at = text.index(b"ordo", len(text) // 3)
            f.seek(at)
            f.write(b"odro")  # same size
        loader = Loader(self.id, 0, 1, plan_url=self.server.url, data_root=copy)
        self.check_nothing_hashed(loader)
        with self.assertRaisesRegex(OrdoError, r"long\.jsonl' changed since it was indexed: "
                                               r"chunk \d+ .*had SHA-256 [0-9a-f]{64}.*now "
                                               r"[0-9a-f]{64}"):
            for _ in range(2000):
                next(loader)
        loader.close()


if __name__ == "__main__":
    unittest.main()
