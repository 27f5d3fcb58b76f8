"""ordo.Tokenizer: the library's ids from Python, held to the `ordo tokens`
command on the same texts and to ids Hugging Face's library gives the
tiny file; its bad inputs."""
import json
import os
import pathlib
import random
import shutil
import subprocess
import tempfile
import threading
import unittest

import common  # first: it puts the package on the path
import ordo.loader
from ordo import Tokenizer
from ordo.loader import OrdoError
from test_tokenizers import TINY

TEXTS = ["Hello world", "", " leading  spaces\tand\nlines\n", "é步骤 ünïcödé 😀 Ǆ",
         "<|endoftext|> is ordinary text here", "x" * 5000, "0.7/0.3 and 0.6/0.3/0.1"]


class TokenizerApi(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ordo py tokenizer ")  # a name with spaces
        self.ranks = os.path.join(self.dir, "cl100k base.tiktoken")
        shutil.copy(os.path.join(common.BUILD, "vocab", "cl100k_base.tiktoken"), self.ranks)
        self.json = os.path.join(self.dir, "tiny tokenizer.json")
        with open(self.json, "w") as f:
            json.dump(TINY, f)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def cli_ids(self, args, texts):
        """`ordo tokens ... --jsonl` over texts: one list of ids per text."""
        corpus = os.path.join(self.dir, "texts.jsonl")
        with open(corpus, "w") as f:
            for t in texts:
                f.write(json.dumps({"text": t}) + "\n")
        out = subprocess.run([common.ORDO, "tokens", *args, "--jsonl", corpus], check=True,
                             capture_output=True, text=True).stdout
        return [[int(x) for x in line.split()] for line in out.split("\n")[:len(texts)]]

    def test_tiktoken_ids_are_the_commands(self):
        with Tokenizer.from_tiktoken("cl100k_base", self.ranks) as tok:
            self.assertEqual(tok.encode("hello world"), [15339, 1917])
            got = [tok.encode(t) for t in TEXTS]
            self.assertEqual(got, self.cli_ids(["--encoding", "cl100k_base", "--path",
                                                self.ranks], TEXTS))
            # special tokens are never produced from text
            self.assertNotIn(tok.eot, tok.encode("a <|endoftext|> b"))
            self.assertEqual(tok.eot, 100257)
            self.assertEqual(tok.token_to_id("<|endoftext|>"), 100257)
            self.assertEqual(tok.vocab_size, 100277)
            for t in TEXTS:
                self.assertEqual(tok.decode(tok.encode(t)), t)

    def test_tokenizer_json_ids_are_the_libraries(self):
        # "abcab" is abc ab, as Hugging Face's library gives it (tests/test_tokenizers.py)
        with Tokenizer.from_file(self.json) as tok:
            self.assertEqual(tok.encode("abcab"), [4, 2])
            self.assertEqual(tok.encode("<s>abc</s>"), [4])  # specials never produced
            self.assertEqual(tok.token_to_id("<s>"), 5)
            self.assertIsNone(tok.token_to_id("nope"))
            self.assertIsNone(tok.eot)
            self.assertEqual(tok.vocab_size, 7)
            # no decoder in the file: its tokens joined by spaces, as the library does
            self.assertEqual(tok.decode([4, 2]), "abc ab")
            for variant in (pathlib.Path(self.json), os.path.relpath(self.json),
                            os.fsencode(self.json), self.dir + "//./tiny tokenizer.json"):
                with Tokenizer.from_file(variant) as again:
                    self.assertEqual(again.encode("abcab"), [4, 2])
            texts = ["abcab", "ab c", "cab"]
            self.assertEqual([tok.encode(t) for t in texts],
                             self.cli_ids(["--tokenizer", self.json], texts))

    def test_invalid_utf8_reads_as_replacement_characters(self):
        with Tokenizer.from_tiktoken("cl100k_base", self.ranks) as tok:
            self.assertEqual(tok.encode(b"a\xff\xfeb"), tok.encode("a\ufffd\ufffdb"))
            self.assertEqual(tok.encode(b"\xe6\xad"), tok.encode("\ufffd"))  # truncated
            # a str's surrogates as tiktoken reads them: a pair is its
            # character, a lone one U+FFFD
            self.assertEqual(tok.encode("\ud800x"), tok.encode("\ufffdx"))
            self.assertEqual(tok.encode("a\ud83d\ude00b"), tok.encode("a\U0001F600b"))
            self.assertEqual(tok.encode("\ude00\ud83d"), tok.encode("\ufffd\ufffd"))

    def test_random_bytes_get_the_commands_ids(self):
        """Random bytes (invalid UTF-8 among them), each through Python and
        through `ordo tokens FILE`, under both kinds."""
        rng = random.Random(16)
        pieces = [b"\xff", b"\xe6\xad", b"\xed\xa0\x80", b"\xf0\x9f\x98", b" ", b"  ", b"\n",
                  "é".encode(), "步骤".encode(), b"abc", b"<s>", b"<|endoftext|>", b"0.7", b"'s"]
        texts = [b"".join(rng.choice(pieces) if rng.random() < 0.7 else bytes([rng.randrange(256)])
                          for _ in range(rng.randrange(1, 40))) for _ in range(12)]
        path = os.path.join(self.dir, "random text")
        for args, tok in ((["--encoding", "cl100k_base", "--path", self.ranks],
                           Tokenizer.from_tiktoken("cl100k_base", self.ranks)),
                          (["--tokenizer", self.json], Tokenizer.from_file(self.json))):
            with tok:
                for text in texts:
                    with open(path, "wb") as f:
                        f.write(text)
                    out = subprocess.run([common.ORDO, "tokens", *args, path], check=True,
                                         capture_output=True, text=True).stdout
                    self.assertEqual(tok.encode(text), [int(x) for x in out.split()], text)

    def test_threads_get_the_ids_one_thread_gets(self):
        with Tokenizer.from_tiktoken("cl100k_base", self.ranks) as tok:
            want = [tok.encode(t) for t in TEXTS]
            results, errors = {}, []

            def work(k):
                try:
                    results[k] = [[tok.encode(t) for t in TEXTS] for _ in range(20)]
                except Exception as e:  # reported below
                    errors.append(e)
            threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(errors, [])
            for k in range(4):
                self.assertEqual(results[k], [want] * 20)

    def test_close_leaves_a_call_in_progress_its_tokenizer(self):
        """close() while another thread is inside a call: that call still
        gets its ids (the last call frees the tokenizer), later ones are
        refused. Made deterministic by holding the call at its start."""
        from ordo.tokenizer import _lib
        import ctypes
        tok = Tokenizer.from_tiktoken("cl100k_base", self.ranks)
        want = tok.encode("hello world " * 1000)
        inside, release, got = threading.Event(), threading.Event(), []

        def held(handle):
            inside.set()
            release.wait()
            ids, count, err = ctypes.POINTER(ctypes.c_uint32)(), ctypes.c_size_t(), \
                ordo.loader._Error()
            data = ("hello world " * 1000).encode()
            status = _lib().ordo_tokenizer_encode(handle, data, len(data), ctypes.byref(ids),
                                                  ctypes.byref(count), ctypes.byref(err))
            got.append((status, ids[:count.value]))
            _lib().ordo_free(ids)
        worker = threading.Thread(target=tok._call, args=(held,))
        worker.start()
        inside.wait()
        tok.close()  # the call in progress keeps it
        with self.assertRaises(OrdoError):
            tok.encode("refused: closed")
        release.set()
        worker.join()
        self.assertEqual(got, [(0, want)])
        tok.close()  # closing again does nothing

    def test_threads_closing_and_encoding_at_once_never_crash(self):
        for _ in range(5):
            tok = Tokenizer.from_tiktoken("cl100k_base", self.ranks)
            want = tok.encode(TEXTS[3] * 200)
            barrier, outcomes = threading.Barrier(6), []

            def encode():
                barrier.wait()
                for _ in range(20):
                    try:
                        outcomes.append(tok.encode(TEXTS[3] * 200) == want)
                    except OrdoError as e:
                        outcomes.append("closed" in str(e))

            def close():
                barrier.wait()
                tok.close()
            threads = [threading.Thread(target=encode) for _ in range(3)] + \
                [threading.Thread(target=close) for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(outcomes, [True] * 60)

    def test_copies_pickles_and_handles_are_refused(self):
        import copy
        import pickle
        with Tokenizer.from_file(self.json) as tok:
            for attempt in (lambda: copy.copy(tok), lambda: copy.deepcopy(tok),
                            lambda: pickle.dumps(tok)):
                with self.assertRaises(TypeError):
                    attempt()
            self.assertEqual(tok.encode("abcab"), [4, 2])
        with self.assertRaises(TypeError):
            Tokenizer(12345)

    def test_decode_takes_numpy_and_torch_integers(self):
        import numpy
        with Tokenizer.from_tiktoken("cl100k_base", self.ranks) as tok:
            self.assertEqual(tok.decode(numpy.array([15339, 1917], dtype=numpy.int64)),
                             "hello world")
            self.assertEqual(tok.decode([numpy.uint32(15339)]), "hello")
            for wrong in (b"abc", "abc", bytearray(b"ab"), [True], [1.0]):
                with self.assertRaises(TypeError):
                    tok.decode(wrong)

    def test_bad_inputs_are_named(self):
        missing = os.path.join(self.dir, "no such.json")
        with self.assertRaises(OrdoError) as caught:
            Tokenizer.from_file(missing)
        self.assertIn("no such.json", str(caught.exception))
        broken = os.path.join(self.dir, "broken.json")
        with open(broken, "w") as f:
            f.write('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [')
        with self.assertRaises(OrdoError) as caught:
            Tokenizer.from_file(broken)
        self.assertIn("broken.json", str(caught.exception))
        with self.assertRaises(OrdoError) as caught:
            Tokenizer.from_tiktoken("cl99k", self.ranks)
        self.assertIn("cl99k", str(caught.exception))
        # C would read these only up to the NUL: a different file or token
        with self.assertRaises(ValueError):
            Tokenizer.from_file(self.json + "\0.ignored")
        with self.assertRaises(ValueError):
            Tokenizer.from_tiktoken("cl100k_base\0x", self.ranks)
        with Tokenizer.from_file(self.json) as tok:
            with self.assertRaises(ValueError):
                tok.token_to_id("<s>\0")
            for wrong in (None, 5, True):
                with self.assertRaises(TypeError):
                    tok.token_to_id(wrong)
        with self.assertRaises(TypeError):
            Tokenizer.from_file(None)
        with Tokenizer.from_file(self.json) as tok:
            with self.assertRaises(TypeError):
                tok.encode(12)
            with self.assertRaises(OrdoError) as caught:
                tok.decode([5])  # a special id
            self.assertIn("5", str(caught.exception))
            with self.assertRaises(OrdoError):
                tok.decode([-1])
            with self.assertRaises(OrdoError):
                tok.decode([70000000000])
        tok.close()
        with self.assertRaises(OrdoError):
            tok.encode("abc")


if __name__ == "__main__":
    unittest.main()
