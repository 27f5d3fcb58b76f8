"""Shared set-up: a small corpus and recipe, a real ordo serve."""
import json
import os
import random
import re
import socket
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
ORDO = os.path.join(BUILD, "ordo")
os.environ.setdefault("ORDO_LIB", os.path.join(BUILD, "libordo.so"))


def corpus(folder, lanes=8, global_batch=16):
    """Two .jsonl sources and a recipe over them; returns the recipe path."""
    rng = random.Random(5)
    os.makedirs(os.path.join(folder, "data"), exist_ok=True)
    for name, lo, hi in (("short", 5, 80), ("long", 200, 900)):
        with open(os.path.join(folder, "data", name + ".jsonl"), "w") as f:
            for i in range(300):
                words = " ".join(rng.choice(["data", "order", "lane", "ranks", "ordo", "batch",
                                             "é", "步骤"]) for _ in range(rng.randint(lo, hi) // 5))
                f.write(json.dumps({"text": f"{name} {i}: {words}"}) + "\n")
    recipe = {"name": "py", "seed": 7, "seq_len": 64, "global_batch": global_batch,
              "lanes": lanes, "flush_every": 2, "shuffle": True,
              "tokenizer": {"kind": "bytes"},
              "sources": [{"name": "short", "paths": ["data/short.jsonl"], "weight": 0.5},
                          {"name": "long", "paths": ["data/long.jsonl"], "weight": 0.5}]}
    path = os.path.join(folder, "recipe.json")
    with open(path, "w") as f:
        json.dump(recipe, f)
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """ordo serve on 127.0.0.1 (port 0 unless given), stopped with SIGTERM."""

    def __init__(self, db, port=0):
        self.proc = subprocess.Popen([ORDO, "serve", "--db", db, "--listen", f"127.0.0.1:{port}"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()  # waits for the bound address
        found = re.search(r"http://[0-9.]+:[0-9]+", line)
        self.url = found.group(0) if found else None
        if not self.url:
            self.proc.kill()
            raise RuntimeError("ordo serve did not start: " + line)

    def stop(self):
        self.proc.terminate()
        assert self.proc.wait(timeout=30) == 0
        self.proc.stdout.close()

    def kill(self):
        """SIGKILL: the service dies without closing anything."""
        self.proc.kill()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()

    @property
    def port(self):
        return int(self.url.rsplit(":", 1)[1])


def token(db, role="writer"):
    return subprocess.run([ORDO, "token", "create", "--role", role, "--db", db], check=True,
                          capture_output=True, text=True).stdout.strip()


def steps(url, run, limit=1000):
    """The steps ordo serve recorded for `run`, read back over HTTP."""
    import urllib.parse
    import urllib.request
    path = f"{url}/api/runs/{urllib.parse.quote(run, safe='')}/steps?limit={limit}"
    with urllib.request.urlopen(path, timeout=30) as answer:
        return json.loads(answer.read().decode("utf-8"))["steps"]


def index(db, recipe):
    """`ordo index RECIPE --db DB`: the recipe's shards indexed in the
    ledger (what regenerating a batch reads them by)."""
    subprocess.run([ORDO, "index", recipe, "--db", db], check=True, capture_output=True,
                   timeout=300)


def batch(db, run, step, data_root):
    """`ordo batch RUN --step N --json`: the step's batch regenerated from
    the ledger, the recipe's relative shard paths resolved in `data_root`."""
    done = subprocess.run([ORDO, "batch", run, "--step", str(step), "--json", "--db", db,
                           "--data-root", data_root], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"ordo batch {run} --step {step}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def epoch_states(db, run):
    """The steps run `run` has a lane state recorded with (the ledger's
    epoch_states), in order."""
    import sqlite3
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as ledger:
        return [row[0] for row in ledger.execute(
            "SELECT step FROM epoch_states WHERE run_id = (SELECT id FROM runs WHERE name = ?) "
            "ORDER BY step", (run,))]


def tempdir():
    return tempfile.mkdtemp(prefix="ordo-py-")
