"""Recipes with a BPE tokenizer through the Python face: bos and eos
packing, and the huggingface kind's refusals."""
import json
import os
import shutil
import tempfile
import unittest

from ordo.loader import Loader, OrdoError

import common


def recipe_with(folder, tokenizer):
    """The corpus' recipe with `tokenizer` instead of bytes; its path."""
    path = common.corpus(folder, lanes=2, global_batch=4)
    with open(path) as f:
        recipe = json.load(f)
    recipe["tokenizer"] = tokenizer
    with open(path, "w") as f:
        json.dump(recipe, f)
    return path


# A tiny tokenizer.json: "abcab" is abc ab (4 2); <s> 5 and </s> 6 special.
TINY = {"added_tokens": [{"id": 5, "content": "<s>", "special": True, "normalized": False,
                          "single_word": False, "lstrip": False, "rstrip": False},
                         {"id": 6, "content": "</s>", "special": True, "normalized": False,
                          "single_word": False, "lstrip": False, "rstrip": False}],
        "normalizer": None, "pre_tokenizer": None, "decoder": None,
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "c": 3, "abc": 4},
                  "merges": [["a", "b"], ["ab", "c"]]}}


class TokenizerRecipes(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ordo-py-tok-")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_tiktoken_bos_starts_every_document(self):
        shutil.copy(os.path.join(common.BUILD, "vocab", "cl100k_base.tiktoken"),
                    os.path.join(self.dir, "cl100k.tiktoken"))
        recipe = recipe_with(self.dir, {"kind": "tiktoken", "encoding": "cl100k_base",
                                        "path": "cl100k.tiktoken", "bos": "<|endofprompt|>",
                                        "eos": "<|fim_suffix|>"})
        loader = Loader(recipe, 0, 1, index_cache=False)
        starts = 0
        for _ in range(4):
            b = next(loader)
            for row, flags in zip(b["tokens"], b["doc_start"]):
                for token, start in zip(row, flags):
                    self.assertEqual(int(token) == 100276, bool(start))
                    starts += int(start)
        loader.close()
        self.assertGreater(starts, 0)

    def test_huggingface_recipe_packs_bos_and_eos(self):
        with open(os.path.join(self.dir, "tokenizer.json"), "w") as f:
            json.dump(TINY, f)
        recipe = recipe_with(self.dir, {"kind": "huggingface", "path": "tokenizer.json",
                                        "bos": "<s>", "eos": "</s>"})
        loader = Loader(recipe, 0, 1, index_cache=False)
        starts = 0
        for _ in range(4):
            b = next(loader)
            for row, flags in zip(b["tokens"], b["doc_start"]):
                for token, start in zip(row, flags):
                    self.assertLess(int(token), 7)
                    self.assertEqual(int(token) == 5, bool(start))
                    starts += int(start)
        loader.close()
        self.assertGreater(starts, 0)

    def test_huggingface_needs_its_eos(self):
        with open(os.path.join(self.dir, "tokenizer.json"), "w") as f:
            f.write("{}")
        recipe = recipe_with(self.dir, {"kind": "huggingface", "path": "tokenizer.json"})
        with self.assertRaises(OrdoError) as caught:
            Loader(recipe, 0, 1, index_cache=False)
        self.assertIn("needs 'eos'", str(caught.exception))
        self.assertIn("<|im_end|>", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
