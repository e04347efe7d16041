"""Benchmark: the EBT against a Transformer++ of the same depth and width, measured in the same run.

    python benchmarks/ebt.py [--steps 20] [--width 64] [--seq-len 32] [--batch 16] [--threads 1]

Prints, for both models: training tokens per second, inference seconds and FLOPs per token (EBT at M = 1, 2, 4, 8
inference steps; the Transformer++ one forward pass), the ratios EBT / Transformer++, and the peak resident memory
of a process that only trains that model (each model runs in its own spawned process, so peaks do not mix).
Random tokens over the 97-symbol character vocabulary: throughput does not depend on the text.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import time

STEPS_M = (1, 2, 4, 8)


def _measure(kind: str, args: dict, queue) -> None:
    import numpy as np
    import torch

    from components.ebt import chars
    from components.ebt import flops as FL
    from components.ebt.energy_model import EBTConfig, EnergyTransformer
    from components.ebt.inference import lm_window_nll, think_curve
    from components.ebt.training import train_ebt
    from components.models.tiny_lm import TinyLM, TinyLMConfig, swiglu_width
    from components.training.lm_trainer import make_optimizer, sample_batch, train_step

    torch.set_num_threads(args["threads"])
    v, w, s, b = chars.VOCAB_SIZE, args["width"], args["seq_len"], args["batch"]
    shape = dict(vocab_size=v, d_model=w, n_layers=2, n_heads=4, d_ff=swiglu_width(w), max_seq_len=s)
    tokens = np.random.default_rng(0).integers(1, v, 200_000).astype(np.int64)
    x, y = sample_batch(tokens, step=0, seed=0, batch_size=b, seq_len=s)
    win = torch.from_numpy(tokens[: 64 * (s + 1)].reshape(64, s + 1))
    out: dict = {}
    if kind == "ebt":
        model = EnergyTransformer(EBTConfig(**shape, step_size=20.0))
        t0 = time.perf_counter()
        train_ebt(
            model,
            tokens,
            steps=args["steps"],
            batch_size=b,
            seq_len=s,
            peak_lr=3e-3,
            mcmc_steps=2,
            progress=False,
            num_threads=args["threads"],
        )
        out["train_tok_s"] = args["steps"] * b * s / (time.perf_counter() - t0)
        out["train_flops_tok"] = FL.ebt_train_flops(model, x, y, steps=2)
        for m in STEPS_M:
            t0 = time.perf_counter()
            think_curve(model, win, max_steps=m)
            out[f"infer_s_tok_m{m}"] = (time.perf_counter() - t0) / win[:, 1:].numel()
            out[f"infer_flops_tok_m{m}"] = FL.ebt_infer_flops(model, x, steps=m)
    else:
        model = TinyLM(TinyLMConfig(**shape))
        opt = make_optimizer(model, lr=3e-3, weight_decay=0.1)
        t0 = time.perf_counter()
        for step in range(args["steps"]):
            train_step(
                model, opt, *sample_batch(tokens, step=step, seed=0, batch_size=b, seq_len=s), lr=3e-3, grad_clip=1.0
            )
        out["train_tok_s"] = args["steps"] * b * s / (time.perf_counter() - t0)
        out["train_flops_tok"] = FL.lm_train_flops(model, x, y)
        t0 = time.perf_counter()
        lm_window_nll(model, win)
        out["infer_s_tok"] = (time.perf_counter() - t0) / win[:, 1:].numel()
        out["infer_flops_tok"] = FL.lm_infer_flops(model, x)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put(out)


def _run(kind: str, args: dict) -> dict:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    proc = ctx.Process(target=_measure, args=(kind, args, q))
    proc.start()
    out = q.get()
    proc.join()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    a = vars(parser.parse_args())
    args = {
        "steps": a["steps"],
        "width": a["width"],
        "seq_len": a["seq_len"],
        "batch": a["batch"],
        "threads": a["threads"],
    }
    tpp, ebt = _run("tpp", args), _run("ebt", args)
    print(
        f"models: 2 blocks, d={args['width']}, context {args['seq_len']}, batch {args['batch']}, "
        f"{args['threads']} thread(s); baseline = Transformer++ (TinyLM) of the same size"
    )
    print(
        f"training tokens/s     Transformer++ {tpp['train_tok_s']:9.0f}   EBT (M_train=2) {ebt['train_tok_s']:9.0f}"
        f"   ratio EBT/T++ {ebt['train_tok_s'] / tpp['train_tok_s']:.3f}"
    )
    print(
        f"training FLOPs/token  Transformer++ {tpp['train_flops_tok']:9.3g}   EBT (M_train=2) "
        f"{ebt['train_flops_tok']:9.3g}   ratio {ebt['train_flops_tok'] / tpp['train_flops_tok']:.2f}"
    )
    for m in STEPS_M:
        s_ratio = ebt[f"infer_s_tok_m{m}"] / tpp["infer_s_tok"]
        f_ratio = ebt[f"infer_flops_tok_m{m}"] / tpp["infer_flops_tok"]
        print(
            f"inference M={m}: EBT {ebt[f'infer_s_tok_m{m}'] * 1e6:8.2f} us/token ({s_ratio:6.2f}x T++), "
            f"{ebt[f'infer_flops_tok_m{m}']:9.3g} FLOPs/token ({f_ratio:5.2f}x T++)"
        )
    print(
        f"inference Transformer++: {tpp['infer_s_tok'] * 1e6:8.2f} us/token, {tpp['infer_flops_tok']:9.3g} FLOPs/token"
    )
    print(
        f"peak RSS (MB)         Transformer++ {tpp['peak_rss_mb']:9.1f}   EBT {ebt['peak_rss_mb']:9.1f}   "
        f"ratio {ebt['peak_rss_mb'] / tpp['peak_rss_mb']:.2f}"
    )


if __name__ == "__main__":
    main()
