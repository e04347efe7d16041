"""Benchmark: the shared GRPO-family trainer (components/rl_text) against a plain PyTorch sampling-and-loss loop of
the same model on the same prompts, timed in the same run; the VIP allocator for 16 and 1,024 prompts; the GP
predictor's update + predict time per step, Laplace and EP (the moment-matching option) on the same visits.

    python benchmarks/vip.py [--steps N] [--threads T]

Prints completion tokens per second for both loops and the ratio trainer / plain (1.0 = no overhead), then the
allocator's and the GP's milliseconds per call.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
import torch.nn.functional as F

from components.models.tiny_lm import TinyLM, TinyLMConfig
from components.rl_text.trainer import GroupRLTrainer, RLConfig
from components.vip import allocator
from components.vip import task as T
from components.vip.predictor import GPPredictor


def plain_step(model, opt, prompts, n, max_new, targets, gen):
    """The baseline: sample, score, Dr.GRPO advantages, REINFORCE loss, one AdamW step; nothing shared."""
    x = torch.tensor([p for p in prompts for _ in range(n)])
    plen = x.shape[1]
    with torch.no_grad():
        alive = torch.ones(len(x), dtype=torch.bool)
        for _ in range(max_new):
            nxt = torch.multinomial(F.softmax(model(x)[0][:, -1], -1), 1, generator=gen).squeeze(1)
            nxt = torch.where(alive, nxt, torch.zeros_like(nxt))
            x = torch.cat([x, nxt[:, None]], 1)
            alive &= nxt != T.EOS
    comp = x[:, plen:]
    mask = torch.cumprod(torch.cat([torch.ones(len(x), 1), (comp[:, :-1] != T.EOS).float()], 1), 1) * (comp > 0)
    texts = [T.decode(c[: int(m.sum())].tolist()) for c, m in zip(comp, mask)]
    r = torch.tensor([T.reward(targets[i // n], t) for i, t in enumerate(texts)]).view(len(prompts), n)
    adv = (r - r.mean(1, keepdim=True)).flatten()
    logp = F.log_softmax(model(x[:, :-1])[0][:, plen - 1 :], -1).gather(-1, comp[..., None]).squeeze(-1)
    loss = -(adv[:, None] * logp * mask).sum() / (len(x) * max_new)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return int(mask.sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    rows = [p.row() for p in T.make_problems(16, {"add2": 1.0, "mul1": 1.0}, rng, "b")]
    prompts = [T.encode(r["prompt"]) for r in rows]
    cfg = TinyLMConfig(vocab_size=T.VOCAB, d_model=128, n_layers=4, n_heads=4, d_ff=352, max_seq_len=24)
    rates = {}
    for name in ("plain", "trainer"):
        model = TinyLM(cfg, seed=0)
        tokens, start = 0, time.perf_counter()
        if name == "plain":
            opt, gen = (
                torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.0),
                torch.Generator().manual_seed(0),
            )
            for _ in range(args.steps):
                tokens += plain_step(model, opt, prompts, 8, 7, [r["target"] for r in rows], gen)
        else:
            tr = GroupRLTrainer(model, RLConfig(lr=1e-4, max_new=7), eos=T.EOS, seed=0)
            fn = lambda i, ids: T.reward(rows[i]["target"], T.decode(ids))  # noqa: E731
            for _ in range(args.steps):
                tokens += tr.step(prompts, [8] * 16, fn).tokens
        rates[name] = tokens / (time.perf_counter() - start)
        print(f"{name:>8}: {rates[name]:,.0f} completion tokens/s (Q=16, C=128, {args.steps} steps)")
    print(f"ratio trainer / plain PyTorch loop: {rates['trainer'] / rates['plain']:.2f}")
    for q in (16, 1024):
        p = rng.random(q)
        start = time.perf_counter()
        reps = 20 if q == 16 else 3
        for _ in range(reps):
            allocator.allocate(p, 8 * q, 2, 24)
        print(f"allocator, Q={q:>5}, C={8 * q}: {(time.perf_counter() - start) / reps * 1e3:.1f} ms per allocation")
    feats = rng.normal(size=(2000, 384))
    per_step = {}
    for inference in ("laplace", "ep"):  # the same visits for both (one generator each, same seed)
        obs_rng = np.random.default_rng(7)
        gp = GPPredictor(feats, window=256, inference=inference)
        times = []
        for _ in range(20):
            ids = obs_rng.choice(2000, 16, replace=False)
            start = time.perf_counter()
            gp.predict(ids)
            gp.update(ids, obs_rng.integers(0, 9, 16), np.full(16, 8))
            times.append(time.perf_counter() - start)
        per_step[inference] = float(np.median(times[-10:]))
        print(
            f"GP {inference} (window 256, 384-d), refit + predict per step: {per_step[inference] * 1e3:.1f} ms "
            "(median of last 10)"
        )
    print(f"EP / Laplace refit time: {per_step['ep'] / per_step['laplace']:.1f}x")


if __name__ == "__main__":
    main()
