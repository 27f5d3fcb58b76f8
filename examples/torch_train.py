"""A tiny causal language model trained data-parallel on CPU (gloo) with
ordo.torch.DataLoader, reporting every step to `ordo serve`, checkpointed
and resumed at another world size.

Start it with torchrun (the ranks read RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT from the environment):

  torchrun --nproc_per_node=2 examples/torch_train.py --recipe recipe.json \\
      --url http://127.0.0.1:8765 --token $TOKEN --run job --steps 40 \\
      --save-at 20 --checkpoints ckpt/

(Debian's torch 1.13 under Python 3.11 needs `torchrun --redirects 1 --tee 1`:
its default, 0, is lost in Python 3.11's enum flags), or let it start the
ranks itself (torch.multiprocessing): `--nproc 2` instead of torchrun.
Then resume at another world size from any one rank's checkpoint file (the
data loader's state in it is every rank's, merged):

  torchrun --nproc_per_node=4 examples/torch_train.py ... --run job \\
      --resume ckpt/step20-rank1.pt --steps 40

Resumed under the checkpoint's run name, the run goes on in a new segment;
under another name (`--run job-w4 --baseline job`) it is a new run that
ordo serve compares step by step with the baseline.

The recipe should say "labels": "shifted" (each sample is seq_len + 1
tokens, so labels are the input shifted by one with no token lost). With
python/ on PYTHONPATH (or the ordo wheel installed) and libordo.so found
(ORDO_LIB, or the wheel's)."""
import argparse
import json
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn.functional as F

import ordo
import ordo.torch

VOCAB = 258  # the byte tokenizer: 256 bytes, end-of-text, pad


class TinyLM(torch.nn.Module):
    """Embeddings (token + position), one causal self-attention block, an
    MLP and the output projection. Attention spans the whole row; a
    document mask would be built from item["doc_start"]."""

    def __init__(self, seq_len, width=32, heads=2):
        super().__init__()
        self.tokens = torch.nn.Embedding(VOCAB, width)
        self.positions = torch.nn.Embedding(seq_len, width)
        self.attention = torch.nn.MultiheadAttention(width, heads, batch_first=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 2 * width), torch.nn.GELU(),
                                       torch.nn.Linear(2 * width, width))
        self.out = torch.nn.Linear(width, VOCAB)
        causal = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1)
        self.register_buffer("causal", causal, persistent=False)

    def forward(self, input, position_ids):
        x = self.tokens(input) + self.positions(position_ids)
        n = input.shape[1]
        a, _ = self.attention(x, x, x, attn_mask=self.causal[:n, :n], need_weights=False)
        x = x + a
        x = x + self.mlp(x)
        return self.out(x)


def save_checkpoint(path, model, optim, data, step, run):
    """Every rank writes its own file, as a distributed checkpoint would
    (the model and optimizer are replicated; the data state is the merged
    state of every rank, the same in each file). Written aside and renamed,
    so a crash never leaves half a checkpoint."""
    state = {"model": model.state_dict(), "optim": optim.state_dict(),
             "data": data.state_dict(),  # a collective: every rank calls it
             "step": step, "run": run}
    torch.save(state, path + ".tmp")
    os.replace(path + ".tmp", path)


def open_run(args, rank, world, resumed):
    """Rank 0's ordo.Client, with the run created or a new segment of it
    recorded; None on the other ranks (only rank 0 reports)."""
    if rank != 0:
        return None
    client = ordo.Client(args.url, token=args.token)
    binding = args.lane_binding if args.lane_binding != "logical" else None
    if resumed and resumed["run"] == args.run:  # the same run goes on at the new world size
        client.run = args.run
        client.resume_segment(resumed["step"] + 1, world, lane_binding=binding)
    else:  # a new run (from the start, or a branch of a checkpoint)
        with open(args.recipe) as f:
            recipe_id = client.register_recipe(json.load(f))
        client.create_run(args.run, recipe_id, world_size=world, baseline=args.baseline,
                          lane_binding=binding)
    return client


def train(args):
    rank = int(os.environ.get("RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    if "RANK" in os.environ:  # torchrun, or --nproc (a world of one needs no group)
        dist.init_process_group("gloo", init_method=args.rendezvous, rank=rank,
                                world_size=world)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    # Every rank reads its own lanes of the global batch; grad_accum
    # microbatches make one step.
    data = ordo.torch.DataLoader(args.recipe, rank, world, grad_accum=args.grad_accum,
                                 lane_binding=args.lane_binding)
    seq_len = data.dataset.seq_len
    tokens_per_step = data.dataset.global_batch * seq_len  # predicted tokens, all ranks

    torch.manual_seed(0)  # the same initial model on every rank
    model = TinyLM(seq_len)
    optim = torch.optim.AdamW(model.parameters(), lr=3e-3)
    resumed = None
    if args.resume:  # any rank's file, written at any world size
        resumed = torch.load(args.resume)
        model.load_state_dict(resumed["model"])
        optim.load_state_dict(resumed["optim"])
        data.load_state_dict(resumed["data"])  # the next item is step resumed["step"] + 1
    client = open_run(args, rank, world, resumed)

    loss_sum, count = 0.0, 0
    for item in data:
        if item["step"] > args.steps:
            break
        # item["labels"] is item["input"] shifted by one; position_ids
        # restart at every document start
        logits = model(item["input"], item["position_ids"])
        loss = F.cross_entropy(logits.flatten(0, 1), item["labels"].flatten(), reduction="sum")
        # scaled so that the gradients summed over microbatches and ranks
        # are those of the global batch's mean loss
        (loss / tokens_per_step).backward()
        loss_sum, count = loss_sum + loss.item(), count + item["labels"].numel()
        if item["microbatch"] < item["microbatches"] - 1:
            continue  # the step's other microbatches first

        step = item["step"]
        if world > 1:  # the ranks' gradients summed, in one collective (as DDP does)
            grads = [p.grad for p in model.parameters()]
            flat = torch.cat([g.flatten() for g in grads])
            dist.all_reduce(flat)
            for g, part in zip(grads, flat.split([g.numel() for g in grads])):
                g.copy_(part.view_as(g))
        optim.step()
        optim.zero_grad()
        # the step's lane digests and the global batch's mean loss (weighted
        # by each rank's tokens) to ordo serve, from rank 0, never blocking
        ordo.torch.report(client, item, loss_sum / count, weight=count)
        loss_sum, count = 0.0, 0

        if step == args.save_at:
            os.makedirs(args.checkpoints, exist_ok=True)
            save_checkpoint(os.path.join(args.checkpoints, f"step{step}-rank{rank}.pt"),
                            model, optim, data, step, args.run)

    data.close()
    if client is not None:
        lost = client.close()  # waits for the queue to drain
        if lost:
            raise SystemExit(f"{lost} reports were not stored")
    if dist.is_initialized():
        dist.destroy_process_group()


def spawned(index, args):
    """A rank started by --nproc: the environment torchrun would give it."""
    os.environ.update(RANK=str(index), LOCAL_RANK=str(index), WORLD_SIZE=str(args.nproc))
    train(args)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--recipe", required=True)
    p.add_argument("--url", required=True, help="ordo serve, e.g. http://127.0.0.1:8765")
    p.add_argument("--token", help="a writer token (ordo token create --role writer)")
    p.add_argument("--run", required=True, help="the run's name in ordo serve")
    p.add_argument("--baseline", help="a run to compare this one with, step by step")
    p.add_argument("--steps", type=int, required=True, help="train up to this step")
    p.add_argument("--grad-accum", type=int, default=1, help="microbatches per step")
    p.add_argument("--lane-binding", default="logical", choices=("logical", "rank"))
    p.add_argument("--save-at", type=int, help="checkpoint after this step (and go on)")
    p.add_argument("--checkpoints", default="checkpoints", help="checkpoint folder")
    p.add_argument("--resume", help="a checkpoint file of any rank")
    p.add_argument("--nproc", type=int, help="start this many ranks here (without torchrun)")
    args = p.parse_args()
    args.rendezvous = None  # torchrun's: MASTER_ADDR and MASTER_PORT
    if "RANK" in os.environ or (args.nproc or 1) == 1:
        train(args)  # under torchrun, or a world of one (no process group)
        return
    # The ranks meet in a file (no port to pick); "fork": they start from
    # this process's imported torch instead of importing it again (fine on
    # CPU; with CUDA, use "spawn")
    with tempfile.TemporaryDirectory() as folder:
        args.rendezvous = "file://" + os.path.join(folder, "rendezvous")
        torch.multiprocessing.start_processes(spawned, args=(args,), nprocs=args.nproc,
                                              start_method="fork")


if __name__ == "__main__":
    main()
