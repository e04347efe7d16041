"""Plain PyTorch loop vs ``lightning.Trainer``: tokens/s for the same model, data, steps and threads.

Baseline: the plain loop of ``components.training.lm_trainer`` (``train_step``
over ``sample_batch``). The project rule is to use Lightning unless it costs
more than 5% in the same run; this prints that overhead. Runs alternate
plain/Lightning ``--repeats`` times; each run's speed comes from its median
step time and the best run of each side is compared, so a burst of load from
another process hurts neither side alone.

    .venv/bin/python benchmarks/trainer_overhead.py [--params 1e6] [--steps 30] [--card-sizes]

``--card-sizes`` also times the plain loop for the qualitypajama grid
(~20k/50k/120k/300k non-embedding parameters, vocab 4096).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
import warnings

import numpy as np
import torch

from components.models.tiny_lm import TinyLM, config_for_params, non_embedding_params
from components.training.lm_trainer import make_optimizer, sample_batch, train_step


def plain_steps(model, tokens, *, steps: int, warmup: int, batch: int, seq: int, lr: float) -> list[float]:
    """Wall seconds of each of ``steps`` plain-loop iterations (data + step) after ``warmup`` untimed ones."""
    opt = make_optimizer(model, lr=lr, weight_decay=0.1)
    marks = []
    for s in range(warmup + steps):
        if s >= warmup:
            marks.append(time.perf_counter())
        x, y = sample_batch(tokens, step=s, seed=0, batch_size=batch, seq_len=seq)
        train_step(model, opt, x, y, lr=lr, grad_clip=1.0)
    marks.append(time.perf_counter())
    return list(np.diff(marks))


def lightning_steps(model, tokens, *, steps: int, warmup: int, batch: int, seq: int, lr: float) -> list[float]:
    """Per-iteration seconds of ``lightning.Trainer`` (CPU, no logger/checkpoints/progress bar), as for the plain
    loop."""
    import lightning as L

    from components.training.lightning_lm import LitLM, RandomWindows

    class Timer(L.Callback):  # successive batch starts bound one full iteration, data loading included
        def __init__(self) -> None:
            self.marks: list[float] = []

        def on_train_batch_start(self, trainer, pl_module, batch_, batch_idx):
            if batch_idx >= warmup:
                self.marks.append(time.perf_counter())

        def on_train_end(self, trainer, pl_module):
            self.marks.append(time.perf_counter())

    timer = Timer()
    total = warmup + steps
    lit = LitLM(model, peak_lr=lr, warmup_steps=0, decay_start=total, decay_steps=1)
    trainer = L.Trainer(
        max_steps=total,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        gradient_clip_val=1.0,
        callbacks=[timer],
    )
    trainer.fit(lit, RandomWindows(tokens, steps=total, batch_size=batch, seq_len=seq, seed=0).loader())
    return list(np.diff(timer.marks))


def tps(durations: list[float], tokens_per_step: int) -> float:
    """Tokens/s from the median step time: robust to bursts of load from other processes."""
    return tokens_per_step / statistics.median(durations)


def compare(args: argparse.Namespace) -> None:
    """Alternate plain and Lightning runs on the same freshly initialised model; print the overhead."""
    cfg = config_for_params(int(args.params), vocab_size=args.vocab, max_seq_len=args.seq)
    tokens = np.random.default_rng(0).integers(0, args.vocab, size=200_000).astype(np.uint16)
    kw = dict(steps=args.steps, warmup=args.warmup_steps, batch=args.batch, seq=args.seq, lr=1e-3)
    n_total = sum(p.numel() for p in TinyLM(cfg).parameters())
    print(
        f"model: d_model={cfg.d_model} n_layers={cfg.n_layers} n_heads={cfg.n_heads} d_ff={cfg.d_ff} "
        f"vocab={cfg.vocab_size}: {n_total:,} params ({non_embedding_params(cfg):,} non-embedding)"
    )
    print(
        f"batch {args.batch} x seq {args.seq}, {args.steps} timed steps after {args.warmup_steps}, "
        f"{torch.get_num_threads()} threads, {args.repeats} alternating repeats"
    )
    t = time.perf_counter()
    import lightning  # noqa: F401  (import cost kept out of the timings)

    print(f"import lightning: {time.perf_counter() - t:.1f} s (not timed below)")
    plain, lit = [], []
    tok_step = args.batch * args.seq
    for r in range(args.repeats):
        plain.append(tps(plain_steps(TinyLM(cfg, seed=0), tokens, **kw), tok_step))
        lit.append(tps(lightning_steps(TinyLM(cfg, seed=0), tokens, **kw), tok_step))
        print(f"  repeat {r + 1}: plain {plain[-1]:,.0f} tok/s, lightning {lit[-1]:,.0f} tok/s (median step)")
    best_p, best_l = max(plain), max(lit)
    overhead = (best_p / best_l - 1) * 100
    print(f"plain loop (baseline): best {best_p:,.0f} tok/s, median {statistics.median(plain):,.0f}")
    print(f"lightning.Trainer:     best {best_l:,.0f} tok/s, median {statistics.median(lit):,.0f}")
    print(
        f"Lightning overhead vs plain (best/best): {overhead:+.1f}%  (ratio {best_p / best_l:.3f}); "
        f"project threshold 5% -> {'keep the plain loop' if overhead > 5 else 'use Lightning'}"
    )


def card_sizes(args: argparse.Namespace) -> None:
    """Plain-loop tokens/s for the card's grid of non-embedding sizes at vocab 4096."""
    tokens = np.random.default_rng(0).integers(0, 4096, size=200_000).astype(np.uint16)
    print(f"card sizes, vocab 4096, batch {args.batch} x seq {args.seq}, plain loop:")
    for target in (20_000, 50_000, 120_000, 300_000):
        cfg = config_for_params(target, vocab_size=4096, max_seq_len=args.seq)
        durations = plain_steps(
            TinyLM(cfg, seed=0),
            tokens,
            steps=args.steps,
            warmup=args.warmup_steps,
            batch=args.batch,
            seq=args.seq,
            lr=1e-3,
        )
        print(
            f"  target {target:>7,}: N={non_embedding_params(cfg):>7,} (d={cfg.d_model}, L={cfg.n_layers}) "
            f"{tps(durations, args.batch * args.seq):>8,.0f} tok/s"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--params", type=float, default=1e6, help="target non-embedding parameters")
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--steps", type=int, default=30, help="timed steps per run")
    ap.add_argument("--warmup-steps", type=int, default=5, help="untimed steps before timing")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--card-sizes", action="store_true", help="also time the 20k-300k grid")
    ap.add_argument("--no-compare", action="store_true", help="skip the plain-vs-Lightning comparison")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore")
    logging.getLogger("lightning").setLevel(logging.ERROR)
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    if not args.no_compare:
        compare(args)
    if args.card_sizes:
        card_sizes(args)


if __name__ == "__main__":
    main()
