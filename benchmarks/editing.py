"""Knowledge-editing costs on the tiny LM: edits per second per method, NeuralDB's inference overhead and memory.

Prints, against baselines measured in the same run:
- target values (shared by all methods): facts per second of the MEMIT-style residual optimisation;
- the update itself at m edits: MEMIT's solve, AlphaEdit's projected solve, NeuralDB's table insert
  (edits per second, and end to end including the target values);
- NeuralDB's forward cost per token with N stored facts against the unedited model (ratio), and bytes per fact;
  N includes 100,000 (the paper's largest scale) on the tiny model;
- the edit stage's shortcuts against the plain computation: scoring targets with the LM head only where it is read
  (baseline: full logits, :func:`target_scores`), greedy fluency generation with the key-value cache (baseline:
  a full forward per token).

Run: ``.venv/bin/python benchmarks/editing.py [--m 2000] [--stored 2000,100000] [--target-facts 128]``.
The model has random weights: costs do not depend on what it knows.
"""

from __future__ import annotations

import argparse
import time

import torch

from components.editing.apply import KeyStats, apply_edit
from components.editing.facts import build_edit_requests, generate_facts
from components.editing.metrics import greedy_generate
from components.editing.model import edit_site, encode_batch, generic_keys, logits_of, scores_at_targets, target_scores
from components.editing.targets import compute_targets
from components.models.tiny_lm import TinyLM, TinyLMConfig


def _timed(fn, reps: int = 1) -> float:
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _encoder(vocab: int):
    """One token per word (a stable hash), so prompts have BPE-like lengths (the pipeline's subjects are one token)."""
    import zlib

    def encode(text: str) -> list[int]:
        return [zlib.crc32(w.encode()) % vocab for w in text.split()]

    return encode


class _NoCache(torch.nn.Module):
    """The same model without ``prefill``/``step``: greedy generation then runs a full forward per token."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor):
        return self.model(ids)


def shortcuts(model, encode, reqs, n_new: int = 30, max_len: int = 32) -> None:
    """The edit stage's scoring and fluency shortcuts against the plain computation, same inputs, same run."""
    rows = [(p, r["subject"], r["target_new"]) for r in reqs for p in r["prompts"]]
    enc = encode_batch(encode, *map(list, zip(*rows)))
    with torch.no_grad():
        t_full = _timed(lambda: target_scores(logits_of(model, enc.ids), enc), reps=5)
        t_fast = _timed(lambda: scores_at_targets(model, enc), reps=5)
    prompts = [r["prompts"][0] for r in reqs[:30]]
    decode = lambda ids: " ".join(map(str, ids))  # noqa: E731
    t_plain = _timed(
        lambda: greedy_generate(_NoCache(model), encode, decode, prompts, max_new_tokens=n_new, max_len=max_len), reps=2
    )
    t_cache = _timed(
        lambda: greedy_generate(model, encode, decode, prompts, max_new_tokens=n_new, max_len=max_len), reps=2
    )
    print("\nedit-stage shortcuts (baseline: the plain computation in the same run)")
    print(
        f"target scoring, {len(rows)} rewrite rows: head at target positions {t_fast * 1e3:.1f} ms, full logits "
        f"{t_full * 1e3:.1f} ms ({t_full / t_fast:.2f}x)"
    )
    print(
        f"greedy fluency, {len(prompts)} prompts x {n_new} tokens (window {max_len}): key-value cache "
        f"{t_cache * 1e3:.0f} ms, full forward per token {t_plain * 1e3:.0f} ms ({t_plain / t_cache:.2f}x)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=2000, help="edits applied at once")
    ap.add_argument("--stored", default="2000,100000", help="NeuralDB table sizes for the inference cost")
    ap.add_argument("--target-facts", type=int, default=64, help="facts whose target values are timed")
    ap.add_argument("--v-steps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--indexes", default="exact,hnsw", help="NeuralDB search: exact and/or hnsw (faiss)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    cfg = TinyLMConfig(vocab_size=2048, d_model=128, n_layers=4, n_heads=4, d_ff=512, max_seq_len=128)
    model = TinyLM(cfg, seed=0).eval()
    site = edit_site(model, 2)
    encode = _encoder(cfg.vocab_size)
    g = torch.Generator().manual_seed(0)
    stats = KeyStats.from_keys(
        generic_keys(model, site, torch.randint(0, 2048, (20_000,), generator=g), n_keys=20_000, seq_len=64)
    )
    facts = generate_facts(max(a.target_facts * 2, 40), 0)
    subjects = list(dict.fromkeys(f["subject"] for f in facts))
    reqs = build_edit_requests(
        facts, edit_subjects=subjects[: a.target_facts], neighbour_subjects=subjects[a.target_facts :], seed=0
    )
    t_targets = _timed(lambda: compute_targets(model, site, encode, reqs, steps=a.v_steps))
    per_fact = t_targets / len(reqs)
    print(f"target values: {len(reqs) / t_targets:,.1f} facts/s ({a.v_steps} Adam steps each; shared by all methods)")
    keys = torch.randn(a.m, cfg.d_ff, generator=g).abs()
    res = torch.randn(a.m, cfg.d_model, generator=g)
    ids = [f"f{i}" for i in range(a.m)]
    times = {}
    for method in ("memit", "alphaedit", "neuraldb"):

        def once(meth=method):
            apply_edit(model, site, meth, ids=ids, keys=keys, residuals=res, stats=stats).undo()

        times[method] = _timed(once, reps=3)
    print(f"\nupdate at m = {a.m:,} (baseline: MEMIT)")
    print(f"{'method':<10} {'update s':>9} {'edits/s':>12} {'vs MEMIT':>9} {'edits/s incl. targets':>22}")
    for meth, t in times.items():
        total = t + per_fact * a.m
        print(f"{meth:<10} {t:>9.4f} {a.m / t:>12,.0f} {times['memit'] / t:>8.1f}x {a.m / total:>22,.1f}")
    x = torch.randint(0, 2048, (16, 64), generator=g)
    t_base = _timed(lambda: logits_of(model, x), reps=5)
    n_tok = x.numel()
    print(
        f"\nNeuralDB inference (batch {x.shape[0]}x{x.shape[1]} tokens; baseline: the unedited model, "
        f"{t_base / n_tok * 1e6:.1f} us/token)"
    )
    print(
        f"{'stored facts':>12} {'index':>6} {'us/token':>9} {'ratio':>7} {'bytes/fact':>11} {'table MB':>9} "
        f"{'same match':>10}"
    )
    for n in [int(s) for s in a.stored.split(",") if s]:
        k = torch.randn(n, cfg.d_ff, generator=g)
        r = torch.randn(n, cfg.d_model, generator=g)
        found = {}
        for index in [i for i in a.indexes.split(",") if i]:
            edit = apply_edit(
                model, site, "neuraldb", ids=[f"s{i}" for i in range(n)], keys=k, residuals=r, stats=stats, index=index
            )
            edit.db.retrieve(k[:1])  # builds the HNSW graph (a one-off cost, not per token)
            t = _timed(lambda: logits_of(model, x), reps=3 if n <= 10_000 else 1)
            mem = edit.db.memory_bytes()
            found[index] = edit.db.retrieve(k[:2000] + 0.1 * torch.randn(min(n, 2000), cfg.d_ff, generator=g))[1]
            edit.undo()
            same = (found[index] == found["exact"]).float().mean().item() if "exact" in found else float("nan")
            print(
                f"{n:>12,} {index:>6} {t / n_tok * 1e6:>9.1f} {t / t_base:>6.2f}x {mem / n:>11,.0f} "
                f"{mem / 2**20:>9.1f} {same:>10.3f}"
            )
    shortcuts(model, encode, reqs)


if __name__ == "__main__":
    main()
