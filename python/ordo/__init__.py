"""ordo for Python training jobs (standard library only; numpy or torch
optional for the loader).

- ``Client``: report runs, steps (whole or per lane), losses and checkpoints
  to ``ordo serve`` from a background thread (reports never raise; a
  refused one is dropped alone, the rest still sent), and fetch recovery
  manifests, verified against the library's canonical form.
- ``Loader``: libordo's elastically deterministic loader through ctypes,
  with ``state_dict`` / ``load_state_dict`` as PyTorch trainers expect; its
  index is cached in a given ledger or next to the recipe.
- ``Tokenizer``: the library's tokenizers (a Hugging Face tokenizer.json or
  a tiktoken encoding): the ids the loader packs, for checking them against
  another implementation.
- ``lane_digests`` / ``batch_digest``: the digests of docs/recipe.md
  ("How a lane's data is decided") computed from
  a token batch, for jobs whose loader is not ordo.
"""
from .client import Client, ClientError, verify_manifest
from .digests import batch_digest, lane_digests

__all__ = ["Client", "ClientError", "verify_manifest", "batch_digest", "lane_digests", "Loader",
           "Tokenizer"]


def __getattr__(name):  # the loader needs libordo.so: load it on first use
    if name == "Loader":
        from .loader import Loader
        return Loader
    if name == "Tokenizer":
        from .tokenizer import Tokenizer
        return Tokenizer
    raise AttributeError(name)
