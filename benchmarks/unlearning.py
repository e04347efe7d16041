"""Wall time and peak memory per unlearning step for GA, GradDiff, NPO and OFMU on the same tiny LM.

Baseline: GradDiff (two first-order gradients per step), measured in the same
run. OFMU's second-order cost (double backprop through grad cos(g_f, g_r) and
the outer Hessian-vector product, third order with ``hvp_mode=full``) shows as
the ratio of its seconds per step to GradDiff's. Each method runs in a fresh
process so its peak RSS (``ru_maxrss``) is its own; "extra MB" is that peak
minus the peak of a process that only built the model and ran one forward.

    .venv/bin/python benchmarks/unlearning.py [--d-model 128] [--rounds 3] [--batch 16] [--seq 32]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource

import torch

METHODS = [("ga", {}), ("graddiff", {}), ("npo", {}), ("ofmu", {"hvp_mode": "forget_only"}), ("ofmu", {})]


def _setup(args):
    from components.models.tiny_lm import TinyLM, TinyLMConfig

    torch.set_num_threads(args.threads)
    model = TinyLM(
        TinyLMConfig(
            vocab_size=args.vocab,
            d_model=args.d_model,
            n_layers=args.layers,
            n_heads=max(1, args.d_model // 32),
            d_ff=args.d_model * 11 // 4,
            max_seq_len=args.seq,
        ),
        seed=0,
    )
    g = torch.Generator().manual_seed(0)

    def batch():
        x = torch.randint(0, args.vocab, (args.batch, args.seq), generator=g)
        y = x.roll(-1, 1)
        y[:, : args.seq // 2] = -100
        return x, y

    fixed = [(batch(), batch()) for _ in range(4)]

    def stream():
        i = 0
        while True:
            yield fixed[i % 4]
            i += 1

    return model, stream


def _worker(args, kind, opts, queue) -> None:
    from components.training.qa_lm import nll_per_example
    from components.unlearning import make_config, run_method, step_cost

    model, stream = _setup(args)
    if kind == "none":
        with torch.no_grad():
            nll_per_example(model, next(stream())[0])
        queue.put({"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
        return
    cfg = make_config(kind, opts)
    cost = step_cost(kind, cfg)
    ofmu_round = step_cost("ofmu", make_config("ofmu", {}))
    budget = args.rounds * ofmu_round
    budget -= budget % cost
    res = run_method(
        kind, model, cfg=cfg, forget_loss=nll_per_example, retain_loss=nll_per_example, batches=stream(), budget=budget
    )
    queue.put(
        {
            "steps": res.steps,
            "evals": res.used,
            "seconds": res.seconds,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
    )


def measure(args, kind: str, opts: dict) -> dict:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_worker, args=(args, kind, opts, q))
    p.start()
    out = q.get()
    p.join()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3, help="OFMU rounds; the others get the same evaluation budget")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    base = measure(args, "none", {})
    rows = []
    for kind, opts in METHODS:
        r = measure(args, kind, opts)
        name = kind + ("" if kind != "ofmu" else f"[{opts.get('hvp_mode', 'full')}]")
        rows.append(
            {
                "method": name,
                **r,
                "s_per_step": r["seconds"] / r["steps"],
                "s_per_eval": r["seconds"] / r["evals"],
                "extra_mb": r["rss_mb"] - base["rss_mb"],
            }
        )
    ref = next(r for r in rows if r["method"] == "graddiff")
    print(
        f"TinyLM d={args.d_model} L={args.layers} vocab={args.vocab} batch={args.batch}x2 seq={args.seq} "
        f"threads={args.threads}; budget {rows[-1]['evals']} gradient evaluations; "
        f"baseline process {base['rss_mb']:.0f} MB"
    )
    print(
        f"{'method':22s} {'steps':>5s} {'s/step':>8s} {'x GradDiff':>10s} {'s/eval':>8s} {'x GradDiff':>10s} "
        f"{'extra MB':>9s} {'x GradDiff':>10s}"
    )
    for r in rows:
        print(
            f"{r['method']:22s} {r['steps']:5d} {r['s_per_step']:8.4f} {r['s_per_step'] / ref['s_per_step']:10.2f} "
            f"{r['s_per_eval']:8.4f} {r['s_per_eval'] / ref['s_per_eval']:10.2f} {r['extra_mb']:9.1f} "
            f"{r['extra_mb'] / max(ref['extra_mb'], 1e-9):10.2f}"
        )


if __name__ == "__main__":
    main()
