"""The second published experiment at small scale, on CPU: a tiny causal
language model trained from scratch on the demo corpus for a grid of two
recipes (identical but for one filter threshold) x world sizes x {ordo's
logical lanes, the standard rank-bound loader}, every cell reporting to
ordo serve; then the held-out loss of each cell, its spread over the world
sizes per recipe and loader, and the recipe effect.

Each cell is a data-parallel run with W ranks simulated in one process:
every rank has its own ordo loader over its lanes (ordo.loader.Loader at
rank r of W) and the gradient of the global batch's mean token loss (the
mean DDP's all-reduce computes) is reduced lane by lane in global lane
order, at every W the same order (W loaders in one process rather than W
gloo processes: 16 cells fit in minutes on two cores, and the reduction is
one fixed order, so ordo's cells of a recipe agree exactly; the cells run
two at a time, one per core). Everything else (model initialisation, seeds,
held-out documents) is the same in every cell, so what differs between
the cells of a recipe is only the order of the data.

  /usr/bin/python3 scripts/experiment.py --out build/experiment
      [--reduced] [--url URL --token TOKEN] [--steps N]

Without --url it starts `ordo serve` on a ledger in OUT. --reduced runs
2 recipes x W in {1, 2} x both loaders for a few steps (the test).
"""
import argparse
import concurrent.futures
import glob
import json
import math
import multiprocessing
import os
import platform
import re
import subprocess
import sys
import time

# One BLAS thread, as torch.set_num_threads(1) below: the same arithmetic
# in every cell and every run.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402

import ordo  # noqa: E402
from ordo.loader import Loader  # noqa: E402

VOCAB = 258  # the byte tokenizer: 256 bytes, end-of-text, pad
SEQ_LEN = 64
GLOBAL_BATCH = 32
LANES = 8
GROUP = "filter-ablation"
# The one knob the two recipes differ in: the first year of the State of the
# Union addresses they keep.
THRESHOLDS = {"sotu-from-1850": 1850, "sotu-from-1900": 1900}


# ---- the corpus: the demo's documents, with fixed held-out ones left out

def held_out(source, index, record):
    """Every 8th Moby-Dick chapter (its files in name order) and the
    addresses of years ending in 5."""
    if source == "moby-dick":
        return index % 8 == 7
    return int(record["year"]) % 10 == 5


def prepare(peers, out):
    """Writes OUT/data/<source>/train.jsonl and OUT/heldout.jsonl from the
    npm datasets the demo uses; returns the held-out texts."""
    held = []
    for source, folder in (("moby-dick", "datasets-moby-dick"), ("sotu", "datasets-sotu")):
        files = sorted(glob.glob(os.path.join(peers, "@stdlib", folder, "data", "*.json")))
        if not files:
            raise SystemExit(f"experiment: no {source} documents under {peers} (scripts/peers.sh)")
        os.makedirs(os.path.join(out, "data", source), exist_ok=True)
        with open(os.path.join(out, "data", source, "train.jsonl"), "w", encoding="utf-8") as f:
            records = []
            for path in files:
                with open(path, encoding="utf-8") as g:
                    record = json.load(g)
                if isinstance(record, dict) and record.get("text"):  # not the index files
                    records.append(record)
            for index, record in enumerate(records):
                if held_out(source, index, record):
                    held.append(record["text"])
                else:
                    f.write(json.dumps(record, ensure_ascii=False) + "\n")
    with open(os.path.join(out, "heldout.jsonl"), "w", encoding="utf-8") as f:
        for text in held:
            f.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
    return held


def write_recipe(out, name, year):
    recipe = {"name": name, "seed": 2026, "seq_len": SEQ_LEN, "labels": "shifted",
              "global_batch": GLOBAL_BATCH, "lanes": LANES, "flush_every": 4, "shuffle": True,
              # two documents a chunk: the rank-bound loader interleaves its
              # sources chunk by chunk, so its chunks must be small here
              "chunk_records": 2, "tokenizer": {"kind": "bytes"},
              "sources": [{"name": "moby-dick", "weight": 0.4,
                           "paths": [os.path.join(out, "data", "moby-dick", "*.jsonl")]},
                          {"name": "sotu", "weight": 0.6,
                           "paths": [os.path.join(out, "data", "sotu", "*.jsonl")],
                           "filter": {"field": "year", "ge": year}}]}
    path = os.path.join(out, name + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(recipe, f, indent=1)
    return path, recipe


# ---- the model: a small causal transformer

class TinyLM(torch.nn.Module):
    def __init__(self, width=64, layers=2):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, width)
        self.position = torch.nn.Embedding(SEQ_LEN, width)
        layer = torch.nn.TransformerEncoderLayer(width, 4, 4 * width, dropout=0.0,
                                                 batch_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, layers)
        self.out = torch.nn.Linear(width, VOCAB)
        self.register_buffer("mask", torch.triu(torch.full((SEQ_LEN, SEQ_LEN), float("-inf")),
                                                diagonal=1))

    def forward(self, tokens):
        n = tokens.shape[1]
        x = self.embed(tokens) + self.position(torch.arange(n))
        return self.out(self.blocks(x, mask=self.mask[:n, :n]))


def token_losses(model, rows):
    """Per-token cross-entropy of rows [r, SEQ_LEN + 1]: [r, SEQ_LEN]."""
    inputs, labels = rows[:, :-1], rows[:, 1:]
    logits = model(inputs)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1),
                                             reduction="none").reshape(labels.shape)


def heldout_windows(texts):
    """The held-out documents as byte-tokenizer windows of SEQ_LEN + 1
    tokens (each document with its end-of-text, cut end to end)."""
    stream = []
    for text in texts:
        stream.extend(text.encode("utf-8"))
        stream.append(256)
    n = (len(stream) // (SEQ_LEN + 1)) * (SEQ_LEN + 1)
    return torch.tensor(stream[:n], dtype=torch.int64).reshape(-1, SEQ_LEN + 1)


def heldout_loss(model, windows):
    with torch.no_grad():
        total = 0.0
        for i in range(0, windows.shape[0], 64):
            total += float(token_losses(model, windows[i:i + 64]).double().sum())
        return total / (windows.shape[0] * SEQ_LEN)


# ---- one cell: W ranks, each with its own loader

def train_cell(recipe_path, world, binding, steps, windows, client, sources, eval_every):
    """Trains one cell; returns its final held-out and training loss and
    its batch digests. The gradient of a step is reduced lane by lane in
    global lane order (each lane's rows' summed token loss over the global
    batch's tokens, accumulated into .grad), which is the mean DDP computes,
    in one fixed order at every W: ranks own consecutive lanes, so rank by
    rank, lane by lane is lane order."""
    torch.manual_seed(1234)
    model = TinyLM()
    optim = torch.optim.AdamW(model.parameters(), lr=2e-3)
    loaders = [Loader(recipe_path, r, world, lane_binding=binding, as_torch=True)
               for r in range(world)]
    digests, metrics = [], {}
    loss, tokens = math.nan, GLOBAL_BATCH * SEQ_LEN
    for step in range(1, steps + 1):
        optim.zero_grad()
        total, lanes, per_source, source_tokens = 0.0, [], {}, None
        for loader in loaders:
            batch = next(loader)
            assert batch["step"] == step
            per_lane = batch["rows"] // len(batch["lanes"])
            for i in range(len(batch["lanes"])):
                rows = slice(i * per_lane, (i + 1) * per_lane)
                losses = token_losses(model, batch["tokens"][rows])
                (losses.sum() / tokens).backward()
                total += float(losses.detach().double().sum())
                row_loss = losses.detach().double().sum(dim=1)
                for s, got in enumerate(batch["source"][rows].tolist()):
                    if got >= 0:
                        acc = per_source.setdefault(got, [0.0, 0])
                        acc[0] += float(row_loss[s])
                        acc[1] += SEQ_LEN
            lanes.extend(zip(batch["lanes"], batch["lane_digests"]))
            counts = batch["source_tokens"]
            source_tokens = counts if source_tokens is None else [
                a + b for a, b in zip(source_tokens, counts)]
        optim.step()
        loss = total / tokens
        ordered = [d for _, d in sorted(lanes)]
        digest = ordo.batch_digest(ordered)
        digests.append(digest)
        metrics = {f"loss/{sources[s]}": v[0] / v[1] for s, v in sorted(per_source.items())}
        if step % eval_every == 0 or step == steps:
            metrics["heldout_loss"] = heldout_loss(model, windows)
        client.report_step(step, batch_digest=digest, loss=loss, metrics=metrics,
                           source_tokens=source_tokens, tokens=GLOBAL_BATCH * (SEQ_LEN + 1))
    for loader in loaders:
        loader.close()
    return {"heldout_loss": metrics["heldout_loss"], "final_loss": loss, "digests": digests}


def run_cell(job):
    """One cell in a worker process: its run in the service, its training,
    its reports delivered. Returns the cell's row of results.json."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    client = ordo.Client(job["url"], token=job["token"])
    client.create_run(job["run"], job["recipe_id"], world_size=job["world"], group=GROUP,
                      lane_binding="rank" if job["binding"] == "rank" else None)
    began = time.monotonic()
    cell = train_cell(job["path"], job["world"], job["binding"], job["steps"], job["windows"],
                      client, job["sources"], job["eval_every"])
    if not client.flush() or client.refused or client.dropped:
        raise RuntimeError(f"experiment: reports of {job['run']} were not all stored "
                           f"({client.refused} refused, {client.dropped} dropped; last error: "
                           f"{client.last_error})")
    client.close()
    return {"recipe": job["recipe"], "lane_binding": job["binding"], "world_size": job["world"],
            "run": job["run"], "heldout_loss": cell["heldout_loss"],
            "final_loss": cell["final_loss"], "digests": cell["digests"],
            "seconds": time.monotonic() - began}


# ---- the service

def start_server(out, ordo_bin):
    db = os.path.join(out, "ordo.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    token = subprocess.run([ordo_bin, "token", "create", "--role", "writer", "--db", db],
                           check=True, capture_output=True, text=True).stdout.strip()
    proc = subprocess.Popen([ordo_bin, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()  # the bound address, once it listens
    found = re.search(r"http://[0-9.]+:[0-9]+", line)
    if not found:
        proc.kill()
        raise SystemExit("experiment: ordo serve did not start: " + line)
    return proc, found.group(0), token


# ---- the summary

def summarize(cells, recipes, bindings):
    rows = {}
    for c in cells:
        rows.setdefault((c["recipe"], c["lane_binding"]), []).append(c)
    summary = {}
    for (recipe, binding), members in rows.items():
        values = [m["heldout_loss"] for m in members]
        summary[(recipe, binding)] = {"by_world": {m["world_size"]: m["heldout_loss"] for m in members},
                                      "mean": sum(values) / len(values),
                                      "spread": max(values) - min(values)}
    effects = {}
    for b in bindings:
        means = [summary[(r, b)]["mean"] for r in recipes]
        effects[b] = means[1] - means[0]
    return summary, effects


def conclusion(binding, spreads, effect):
    noise = max(spreads)
    if noise == 0:
        return (f"the recipe effect ({effect:+.4f}) is measured with no data-order noise at all: "
                "every world size saw the same batches")
    ratio = abs(effect) / noise
    if ratio > 1:
        return (f"the recipe effect ({effect:+.4f}) is {ratio:.1f}x the spread over world sizes "
                f"({noise:.4f}): the ablation's conclusion holds at any GPU count")
    return (f"the recipe effect ({effect:+.4f}) is only {ratio:.2f}x the spread over world sizes "
            f"({noise:.4f}): which recipe looks better depends on the GPU count")


def report_text(summary, effects, recipes, bindings, worlds, command, elapsed):
    names = {"logical": "ordo (logical lanes)", "rank": "rank-bound loader"}
    lines = ["# The filter-threshold ablation across GPU counts", "",
             f"`{command}` on {platform.machine()}, {os.cpu_count()} cores, PyTorch "
             f"{torch.__version__}, {elapsed:.0f} s. Generated by scripts/experiment.py.", "",
             "A tiny causal LM (2 transformer layers of width 64, byte tokenizer, "
             f"seq_len {SEQ_LEN}, global batch {GLOBAL_BATCH}, {LANES} lanes) trained from "
             "scratch on the demo corpus (Moby-Dick 0.4, State of the Union 0.6) by two recipes "
             "that differ only in the State of the Union filter (`year ge 1850` against "
             "`year ge 1900`); W ranks in one process, each with its own loader, the "
             "gradient reduced lane by lane in lane order (the mean DDP computes, in one fixed "
             "order at every W). Held-out loss: mean token loss on fixed "
             "documents in neither recipe's training data (every 8th chapter, addresses of "
             "years ending in 5).", "",
             "| recipe | loader | " + " | ".join(f"W={w}" for w in worlds) + " | spread |",
             "|---|---|" + "---|" * (len(worlds) + 1)]
    for b in bindings:
        for r in recipes:
            s = summary[(r, b)]
            lines.append(f"| {r} | {names[b]} | " +
                         " | ".join(f"{s['by_world'][w]:.4f}" for w in worlds) +
                         f" | {s['spread']:.6f} |")
    lines.append("")
    for b in bindings:
        spreads = [summary[(r, b)]["spread"] for r in recipes]
        lines.append(f"- **{names[b]}**: recipe effect (mean of {recipes[1]} − mean of "
                     f"{recipes[0]}) {effects[b]:+.4f}; spreads {', '.join(f'{x:.6f}' for x in spreads)}: "
                     + conclusion(b, spreads, effects[b]) + ".")
    ordo_spread = max(summary[(r, "logical")]["spread"] for r in recipes)
    rank_spread = min(summary[(r, "rank")]["spread"] for r in recipes)
    if ordo_spread == 0:
        lines += ["", f"ordo's spread is exactly 0 (its cells of a recipe saw the same batches "
                  f"and reduced them in the same order); the rank-bound loader's is "
                  f"{rank_spread:.4f} or more."]
    else:
        lines += ["", f"The rank-bound spread is {rank_spread / ordo_spread:.0f}× ordo's (the "
                  "smallest rank-bound spread over the largest of ordo's)."]
    # Two runs of an ablation often get different GPU counts: compare recipe
    # B at one W with recipe A at another, and count the pairs whose effect
    # has the opposite sign of the one measured at equal W with ordo.
    truth = effects["logical"]
    lines.append("")
    for b in bindings:
        a_by, b_by = summary[(recipes[0], b)]["by_world"], summary[(recipes[1], b)]["by_world"]
        pairs = [(wa, wb) for wa in worlds for wb in worlds]
        flipped = [(wa, wb) for wa, wb in pairs if (b_by[wb] - a_by[wa]) * truth < 0]
        lines.append(f"- {names[b]}: {recipes[1]} at one W against {recipes[0]} at another: "
                     f"the effect's sign is reversed in {len(flipped)} of {len(pairs)} pairs"
                     + (f" (e.g. W={flipped[0][1]} against W={flipped[0][0]})" if flipped else "")
                     + ".")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=os.path.join(ROOT, "build", "experiment"))
    p.add_argument("--peers", default=os.path.join(ROOT, "build", "peers", "node_modules"))
    p.add_argument("--ordo", default=os.path.join(ROOT, "build", "ordo"))
    p.add_argument("--url")
    p.add_argument("--token")
    p.add_argument("--steps", type=int)
    p.add_argument("--reduced", action="store_true")
    p.add_argument("--jobs", type=int, default=2, help="cells trained at once (processes)")
    p.add_argument("--doc", help="also write the summary to this Markdown file")
    args = p.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    worlds = [1, 2] if args.reduced else [1, 2, 4, 8]
    steps = args.steps or (6 if args.reduced else 240)
    eval_every = max(1, steps // 4)
    bindings = ["logical", "rank"]
    texts = prepare(args.peers, out)
    # a fixed sample of the held-out windows: every k-th, the same in every cell
    windows = heldout_windows(texts)
    keep = 64 if args.reduced else 1024
    windows = windows[::max(1, windows.shape[0] // keep)][:keep]
    server = None
    url, token = args.url, args.token
    if not url:
        server, url, token = start_server(out, args.ordo)
    start = time.monotonic()
    cells = []
    try:
        client = ordo.Client(url, token=token)
        recipes = list(THRESHOLDS)
        jobs = []
        for name in recipes:
            path, recipe = write_recipe(out, name, THRESHOLDS[name])
            recipe_id = client.register_recipe(recipe)
            sources = [s["name"] for s in recipe["sources"]]
            # index once here: the cells' loaders reuse the index cache
            Loader(path, 0, 1).close()
            for binding in bindings:
                for w in worlds:
                    jobs.append({"url": url, "token": token, "run": f"{name}-{binding}-w{w}",
                                 "recipe": name, "recipe_id": recipe_id, "path": path,
                                 "binding": binding, "world": w, "steps": steps,
                                 "windows": windows, "sources": sources,
                                 "eval_every": eval_every})
        client.close()
        # the cells are independent: one per core at a time
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
            for cell in pool.map(run_cell, jobs):
                cells.append(cell)
        for cell in cells:
            first = next(c for c in cells if c["recipe"] == cell["recipe"] and
                         c["lane_binding"] == cell["lane_binding"] and c["world_size"] == worlds[0])
            cell["same_batches_as_w1"] = cell["digests"] == first["digests"]
            print(f"{cell['run']:28s} held-out {cell['heldout_loss']:.6f}  train "
                  f"{cell['final_loss']:.4f}  same batches as W=1: {cell['same_batches_as_w1']}  "
                  f"({cell['seconds']:.1f} s)", flush=True)
        for cell in cells:
            del cell["digests"], cell["seconds"]
    finally:
        if server:
            server.terminate()
            server.wait(timeout=30)
    elapsed = time.monotonic() - start
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"group": GROUP, "steps": steps, "cells": cells}, f, indent=1)
    summary, effects = summarize(cells, recipes, bindings)
    command = "make experiment" if not args.reduced else "scripts/experiment.py --reduced"
    text = report_text(summary, effects, recipes, bindings, worlds, command, elapsed)
    print()
    print(text)
    if args.doc:
        with open(args.doc, "w") as f:
            f.write(text)
    if server:
        print(f"The grid: ordo serve --db {os.path.join(out, 'ordo.db')}, then "
              f"#/ablation?group={GROUP}")


if __name__ == "__main__":
    main()
