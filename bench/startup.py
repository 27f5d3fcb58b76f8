"""Start-up at scale (make bench; figures in docs/benchmarks.md): the time
to the first batch of one rank of W = 64 (rank 5, logical lanes, L = 64)
over a corpus of .jsonl shards, opened

  full     from the recipe file with no index (every shard hashed and
           indexed, token estimates measured: what every rank did before
           the plan),
  ledger   from the recipe id and a ledger that indexed it
           (Loader(id, ..., db=LEDGER): the plan the ledger holds),
  service  from the recipe id and ordo serve over that ledger
           (Loader(id, ..., plan_url=URL): GET /api/recipes/{id}/plan),

each in a fresh process (warm page cache), rounds alternating, medians.
Also the bytes each open read (/proc/self/io rchar: shards, ledger,
socket) and hashed. The corpora (STARTUP_SIZES_GB, default "0.25 1") are
written deterministically into $BUILD/bench-data/startup-<size> and kept.

  BUILD=build /usr/bin/python3 bench/startup.py [--rounds 3]
"""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.abspath(os.environ.get("BUILD", os.path.join(ROOT, "build")))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("ORDO_LIB", os.path.join(BUILD, "libordo.so"))
WORLD, RANK, SHARDS = 64, 5, 64


def corpus(gb):
    """The corpus of `gb` GB (64 shards) and its recipe; written once."""
    folder = os.path.join(BUILD, "bench-data", f"startup-{gb:g}")
    recipe = os.path.join(folder, "recipe.json")
    if os.path.exists(os.path.join(folder, "done")):
        return folder, recipe
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(17)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
             for _ in range(4096)]
    per_shard = int(gb * 1e9) // SHARDS
    for s in range(SHARDS):
        with open(os.path.join(folder, f"part-{s:03d}.jsonl"), "w") as f:
            written = 0
            while written < per_shard:
                text = " ".join(rng.choices(words, k=rng.randint(40, 400)))
                line = json.dumps({"text": text}) + "\n"
                f.write(line)
                written += len(line)
    with open(recipe, "w") as f:
        json.dump({"name": "startup", "seed": 11, "seq_len": 2048, "global_batch": 128,
                   "lanes": 64, "tokenizer": {"kind": "bytes"},
                   "sources": [{"name": "web", "paths": ["part-*.jsonl"], "weight": 1}]}, f)
    open(os.path.join(folder, "done"), "w").close()
    return folder, recipe


def rchar():
    with open("/proc/self/io") as f:
        return int(re.search(r"rchar: (\d+)", f.read()).group(1))


def one(mode, recipe, folder, db, url, rid):
    """Runs in its own process: opens the rank, takes its first batch."""
    try:
        import numpy  # noqa: F401 (what the first batch imports: not part of the open)
    except ImportError:
        pass
    from ordo.loader import Loader, lib
    lib()
    before, start = rchar(), time.perf_counter()
    if mode == "full":
        loader = Loader(recipe, RANK, WORLD, index_cache=False)
    elif mode == "ledger":
        loader = Loader(rid, RANK, WORLD, db=db, data_root=folder)
    else:
        loader = Loader(rid, RANK, WORLD, plan_url=url, data_root=folder)
    batch = next(loader)
    seconds = time.perf_counter() - start
    read = rchar() - before
    print(json.dumps({"seconds": seconds, "read": read, "hashed": loader.hashed_bytes,
                      "digest": batch["lane_digests"][0]}))
    loader.close()


def measure(mode, recipe, folder, db, url, rid):
    out = subprocess.run([sys.executable, __file__, "--one", mode, recipe, folder, db, url, rid],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def bench(gb, rounds):
    folder, recipe = corpus(gb)
    size = sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder)
               if n.endswith(".jsonl"))
    db = os.path.join(folder, "index.db")
    if os.path.exists(db):
        os.remove(db)
    from ordo.loader import Loader
    start = time.perf_counter()
    indexing = Loader(recipe, 0, WORLD, db=db)  # what `ordo index` does, once
    index_seconds = time.perf_counter() - start
    rid = indexing.recipe_id
    indexing.close()
    server = subprocess.Popen([os.path.join(BUILD, "ordo"), "serve", "--db", db, "--listen",
                               "127.0.0.1:0"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    url = re.search(r"http://[0-9.]+:[0-9]+", server.stdout.readline()).group(0)
    from ordo.client import fetch_plan
    plan_bytes = len(fetch_plan(url, rid))
    modes = ("full", "ledger", "service")
    runs = {m: [] for m in modes}
    try:
        for r in range(rounds):
            for m in modes:
                runs[m].append(measure(m, recipe, folder, db, url, rid))
    finally:
        server.terminate()
        server.wait()
    digests = {run["digest"] for m in modes for run in runs[m]}
    assert len(digests) == 1, f"first batches differ: {digests}"
    print(f"startup: {size / 1e9:.2f} GB in {SHARDS} shards, rank {RANK} of W = {WORLD}, "
          f"indexed once in {index_seconds:.1f} s, plan {plan_bytes / 1e3:.0f} kB, "
          f"{rounds} rounds")
    print("mode      first batch s (rounds)                 median   read MB  hashed MB")
    medians = {}
    for m in modes:
        seconds = [run["seconds"] for run in runs[m]]
        medians[m] = statistics.median(seconds)
        read = statistics.median(run["read"] for run in runs[m]) / 1e6
        hashed = statistics.median(run["hashed"] for run in runs[m]) / 1e6
        shown = " ".join(f"{s:7.3f}" for s in seconds)
        print(f"{m:8s}  {shown:38s} {medians[m]:7.3f}  {read:8.1f}  {hashed:9.1f}")
    print(f"ratio full / ledger {medians['full'] / medians['ledger']:.0f}x, "
          f"full / service {medians['full'] / medians['service']:.0f}x")
    return medians


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        return one(*sys.argv[2:8])
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sizes = [float(s) for s in os.environ.get("STARTUP_SIZES_GB", "0.25 1").split()]
    results = {gb: bench(gb, args.rounds) for gb in sizes}
    if len(sizes) > 1:
        small, large = results[sizes[0]], results[sizes[-1]]
        print(f"growth {sizes[0]:g} -> {sizes[-1]:g} GB: " + ", ".join(
            f"{m} {large[m] / small[m]:.2f}x" for m in ("full", "ledger", "service")))


if __name__ == "__main__":
    main()
