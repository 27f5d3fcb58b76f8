"""A tiny causal language model trained with the ordo loader under
torch.distributed (gloo, CPU), reporting every step to ordo serve through
the Python client; checkpoints model, optimizer and loader state, and
resumes from such a checkpoint at another world size.

  python3 train_job.py RECIPE URL TOKEN RUN WORLD FIRST LAST BINDING
                       [--save CKPT] [--load CKPT] [--baseline RUN]
"""
import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import ordo  # noqa: E402
from ordo.loader import Loader, merge_states  # noqa: E402

VOCAB = 258  # the byte tokenizer: 256 bytes, end-of-text, pad


class TinyLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, 32)
        self.mix = torch.nn.Linear(32, 32)
        self.out = torch.nn.Linear(32, VOCAB)

    def forward(self, tokens):
        return self.out(torch.tanh(self.mix(self.embed(tokens))))


def train(rank, args, port):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=args.world)
    torch.manual_seed(1234)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    model = TinyLM()
    optim = torch.optim.Adam(model.parameters(), lr=3e-3)
    loader = Loader(args.recipe, rank, args.world, lane_binding=args.binding, as_torch=True)
    if args.load:
        saved = torch.load(args.load)
        model.load_state_dict(saved["model"])
        optim.load_state_dict(saved["optim"])
        loader.load_state_dict(saved["loader"])
    client = None
    if rank == 0:
        client = ordo.Client(args.url, token=args.token)
        with open(args.recipe) as f:
            import json
            recipe_id = client.register_recipe(json.load(f))
        client.create_run(args.run, recipe_id, world_size=args.world, baseline=args.baseline,
                          lane_binding=args.binding if args.binding == "rank" else None)
    for step in range(args.first, args.last + 1):
        batch = next(loader)
        assert batch["step"] == step, (batch["step"], step)
        tokens = batch["tokens"]
        inputs, targets = tokens[:, :-1], tokens[:, 1:]
        logits = model(inputs)
        loss_sum = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1),
                                                     reduction="sum")
        count = torch.tensor([targets.numel()], dtype=torch.float64)
        dist.all_reduce(count)
        optim.zero_grad()
        (loss_sum / count.item()).backward()
        for p in model.parameters():  # the global batch's mean gradient
            dist.all_reduce(p.grad)
        optim.step()
        total = loss_sum.detach().double().reshape(1)
        dist.all_reduce(total)
        lanes = [None] * args.world
        dist.all_gather_object(lanes, list(zip(batch["lanes"], batch["lane_digests"])))
        if rank == 0:
            ordered = [d for _, d in sorted(l for part in lanes for l in part)]
            client.report_step(step, batch_digest=ordo.batch_digest(ordered),
                               loss=float(total.item() / count.item()))
    states = [None] * args.world
    dist.all_gather_object(states, loader.state())
    if rank == 0:
        if args.save:
            torch.save({"model": model.state_dict(), "optim": optim.state_dict(),
                        "loader": {"ordo_state": __import__("base64").b64encode(
                            merge_states(states)).decode()}}, args.save)
        unsent = client.close()
        assert unsent == 0, unsent
    loader.close()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    for name in ("recipe", "url", "token", "run"):
        p.add_argument(name)
    p.add_argument("world", type=int)
    p.add_argument("first", type=int)
    p.add_argument("last", type=int)
    p.add_argument("binding")
    p.add_argument("--save")
    p.add_argument("--load")
    p.add_argument("--baseline")
    p.add_argument("--port", type=int, required=True)
    args = p.parse_args()
    mp.spawn(train, args=(args, args.port), nprocs=args.world, join=True)


if __name__ == "__main__":
    main()
