"""The installed wheel on its own: run by tests/wheel.sh with the venv's
python, from a folder outside the checkout, with a clean environment (no
PYTHONPATH, no ORDO_LIB; ORDO_URL and ORDO_TOKEN of a real `ordo serve`
with an empty ledger). Checks that ordo and ordo.torch import from the
venv, that libordo.so is the package's own copy (its soname resolving to
it), that a small recipe reads through ordo.Loader and ordo.torch.DataLoader,
and that the README's "From PyTorch" example runs as written, reporting
what the loader feeds.
  python wheel_smoke.py README.md
Prints ok/FAIL lines and, last, "N passed, N failed"."""
import ctypes
import glob
import json
import os
import random
import re
import subprocess
import sys
import traceback

README = sys.argv[1]
SITE = os.path.realpath(sys.prefix)  # the venv
results = []


def check(fn):
    """Runs one check; an exception (or a failed assert) is its failure."""
    try:
        detail = fn()
        results.append(True)
        print(f"ok   {fn.__doc__}" + (f": {detail}" if detail else ""))
    except Exception:
        results.append(False)
        print(f"FAIL {fn.__doc__}:\n" + traceback.format_exc(limit=3).rstrip())
    return fn


def write_documents(path, name, count=120, seed=3):
    """A .jsonl shard of `count` short documents with a "text" field."""
    rng = random.Random(f"{seed}:{path}")
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    words = ["order", "lane", "rank", "batch", "token", "step", "é", "数据", name]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(count):
            text = " ".join(rng.choice(words) for _ in range(rng.randint(10, 120)))
            f.write(json.dumps({"text": f"{name} {i}: {text}"}) + "\n")


def make_corpus(recipe):
    """Writes a shard at every path (a glob's first match) of a recipe file."""
    folder = os.path.dirname(os.path.abspath(recipe))
    with open(recipe, encoding="utf-8") as f:
        for source in json.load(f)["sources"]:
            for path in source["paths"]:
                write_documents(os.path.join(folder, re.sub(r"[*?]", "0", path)), source["name"])


def readme_blocks():
    """The ```json and ```python blocks of the README's "From PyTorch" section."""
    with open(README, encoding="utf-8") as f:
        text = f.read()
    section = re.search(r"^## From PyTorch\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert section, f"{README}: no '## From PyTorch' section"
    blocks = re.findall(r"^```(\w+)\n(.*?)^```$", section.group(1), re.M | re.S)
    kinds = [k for k, _ in blocks]
    assert kinds.count("json") == 1 and kinds.count("python") == 1, \
        f"{README}: 'From PyTorch' should hold one json and one python block, has {kinds}"
    return dict(blocks)


@check
def imports_from_the_venv():
    """import ordo, ordo.torch from the venv, without ORDO_LIB or PYTHONPATH"""
    assert "ORDO_LIB" not in os.environ and "PYTHONPATH" not in os.environ
    import ordo
    import ordo.torch
    for module in (ordo, ordo.torch):
        where = os.path.realpath(module.__file__)
        assert where.startswith(SITE + os.sep), f"{module.__name__} from {where}, not {SITE}"
    return os.path.relpath(os.path.realpath(ordo.__file__), SITE)


@check
def library_is_the_packages_own():
    """libordo.so is the package's copy, and its soname resolves to it"""
    import ordo
    import ordo.loader
    lib = ordo.loader.lib()
    own = os.path.join(os.path.dirname(os.path.realpath(ordo.__file__)), "_lib", "libordo.so")
    assert os.path.realpath(lib._name) == own, f"loaded {lib._name}, not {own}"
    # what asks for the soname gets the loaded copy, not another one
    by_soname = ctypes.CDLL("libordo.so.0")
    assert by_soname._handle == lib._handle, "libordo.so.0 resolves to another library"
    version = ctypes.CDLL(own).ordo_version_string
    version.restype = ctypes.c_char_p
    return f"{os.path.relpath(own, SITE)}, version {version().decode()}"


@check
def version_is_the_librarys():
    """the installed distribution's version is libordo's"""
    import importlib.metadata
    import ordo.loader
    version = ordo.loader.lib().ordo_version_string
    version.restype = ctypes.c_char_p
    installed = importlib.metadata.version("ordo")
    assert installed == version().decode(), f"ordo {installed}, libordo {version().decode()}"
    return installed


@check
def ordo_lib_wins():
    """ORDO_LIB still comes before the package's own libordo.so"""
    import shutil
    import ordo
    own = os.path.join(os.path.dirname(os.path.realpath(ordo.__file__)), "_lib", "libordo.so")
    other = os.path.abspath("elsewhere/libordo.so")
    os.makedirs(os.path.dirname(other))
    shutil.copy(own, other)
    run = subprocess.run([sys.executable, "-c", "import ordo.loader; print(ordo.loader.lib()._name)"],
                         env=dict(os.environ, ORDO_LIB=other), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == other, f"with ORDO_LIB={other} it loaded {run.stdout.strip()}"


RECIPE = {"name": "wheel", "seed": 11, "seq_len": 32, "global_batch": 8, "lanes": 4,
          "labels": "shifted", "tokenizer": {"kind": "bytes"},
          "sources": [{"name": "a", "paths": ["data/a.jsonl"], "weight": 0.5},
                      {"name": "b", "paths": ["data/b.jsonl"], "weight": 0.5}]}


def small_recipe(folder):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "recipe.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(RECIPE, f)
    make_corpus(path)
    return path


@check
def loader_reads_two_batches():
    """ordo.Loader reads 2 batches of a small recipe"""
    import ordo
    loader = ordo.Loader(small_recipe("loader"), 0, 1)
    batches = [next(loader), next(loader)]
    steps = [b["step"] for b in batches]
    assert steps == [1, 2], f"steps {steps}"
    for b in batches:
        assert b["tokens"].shape == (8, 33), b["tokens"].shape
    return f"tokens {tuple(batches[0]['tokens'].shape)} per step"


@check
def tokenizer_encodes_from_the_package():
    """ordo.Tokenizer opens a tokenizer.json and encodes with the package's library"""
    import ordo
    os.makedirs("tokenizer", exist_ok=True)
    path = os.path.join("tokenizer", "tokenizer.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2},
                             "merges": ["a b"]}}, f)
    with ordo.Tokenizer.from_file(path) as tok:
        ids = tok.encode("abab a")
    assert ids == [2, 2, 0], f"ids {ids}"
    return f"ids {ids}"


@check
def torch_dataloader_reads_two_batches():
    """ordo.torch.DataLoader reads 2 batches of a small recipe"""
    import torch
    import ordo.torch
    loader = ordo.torch.DataLoader(small_recipe("torch"), dp_rank=0, dp_world_size=1)
    items = []
    for item in loader:
        items.append(item)
        if len(items) == 2:
            break
    steps = [item["step"] for item in items]
    assert steps == [1, 2], f"steps {steps}"
    for item in items:
        assert item["input"].dtype == torch.int64 and tuple(item["input"].shape) == (8, 32)
        assert torch.equal(item["labels"][:, :-1], item["input"][:, 1:])
    return f"input {tuple(items[0]['input'].shape)}, labels shifted by one"


def reported_steps(url):
    """The steps of the one run `ordo serve` at `url` holds (over HTTP)."""
    import urllib.parse
    import urllib.request

    def get(path):
        with urllib.request.urlopen(url + path, timeout=30) as answer:
            return json.loads(answer.read().decode("utf-8"))
    runs = get("/api/runs")["runs"]
    assert len(runs) == 1, f"the service holds {len(runs)} runs"
    name = runs[0]["name"]
    return name, get(f"/api/runs/{urllib.parse.quote(name, safe='')}/steps?limit=10000")["steps"]


@check
def readme_example_runs():
    """the README's "From PyTorch" example runs as written, reports its steps and its checkpoint resumes"""
    import torch
    import ordo
    import ordo.torch
    blocks = readme_blocks()
    folder = os.path.abspath("readme")
    os.makedirs(folder)
    with open(os.path.join(folder, "recipe.json"), "w", encoding="utf-8") as f:
        f.write(blocks["json"])
    make_corpus(os.path.join(folder, "recipe.json"))
    with open(os.path.join(folder, "train.py"), "w", encoding="utf-8") as f:
        f.write(blocks["python"])
    run = subprocess.run([sys.executable, "train.py"], cwd=folder, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, f"train.py exited {run.returncode}:\n{run.stderr[-2000:]}"
    checkpoints = glob.glob(os.path.join(folder, "*.pt"))
    assert len(checkpoints) == 1, f"the example should leave one checkpoint, left {checkpoints}"
    saved = torch.load(checkpoints[0])
    loader = ordo.torch.DataLoader(os.path.join(folder, "recipe.json"), dp_rank=0,
                                   dp_world_size=1)
    loader.load_state_dict(saved["data"])
    first = next(iter(loader))["step"]
    last = saved["data"]["step"]
    assert last > 0 and first == last + 1, f"a checkpoint of step {last} resumes at step {first}"
    # what it reported is what the loader feeds: the batch digests of a
    # fresh loader's steps, and a loss for every step
    name, steps = reported_steps(os.environ["ORDO_URL"])
    assert [s["step"] for s in steps] == list(range(1, last + 1)), \
        f"run {name} has steps {[s['step'] for s in steps]}, not 1..{last}"
    fresh = ordo.torch.DataLoader(os.path.join(folder, "recipe.json"), dp_rank=0, dp_world_size=1)
    for reported, item in zip(steps, fresh):
        digest = ordo.batch_digest(item["lane_digests"])
        assert reported["batch_digest"] == digest, \
            f"step {item['step']}: reported {reported['batch_digest']}, the loader's is {digest}"
        assert isinstance(reported["loss"], float), f"step {item['step']}: loss {reported['loss']}"
    return (f"{os.path.basename(checkpoints[0])} of step {last} resumes at step {first}; run "
            f"{name}: {len(steps)} steps with the loader's digests, loss {steps[0]['loss']:.3f} "
            f"-> {steps[-1]['loss']:.3f}")


print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
sys.exit(0 if all(results) else 1)
