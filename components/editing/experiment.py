"""The editing experiment: a light causal trace, each method at each m, and NeuralDB's gate sweep.

For every seed the target values are computed once for the largest m on the unedited model (as a
MEMIT batch edit does); a smaller m edits the first m requests. Every (seed, m, method) run is applied,
evaluated per request and per held-out window, then undone, so all runs start from the same model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from components.editing.apply import KeyStats, apply_edit
from components.editing.metrics import greedy_generate, ngram_entropy, rewrite_quality, window_nll
from components.editing.model import EditSite, Encoder, edit_site, encode_batch, logits_of, target_scores
from components.editing.targets import EditTargets

log = logging.getLogger(__name__)


@dataclass
class EvalConfig:
    """What one evaluation measures: held-out windows, fluency prompts and batch size."""

    ppl_tokens: torch.Tensor
    seq_len: int
    ppl_windows: int
    fluency_prompts: int
    gen_tokens: int
    batch_size: int = 256


@torch.no_grad()
def causal_trace(model: nn.Module, encode: Encoder, requests: Sequence[dict], n_layers: int) -> list[dict]:
    """Per layer: mean drop in log P(true object) when that MLP's output at the subject's last token is zeroed.

    A light stand-in for ROME's causal trace (the indirect effect of the MLP at the subject position).
    """
    prompts = [r["prompts"][0] for r in requests]
    enc = encode_batch(encode, prompts, [r["subject"] for r in requests], [r["target_true"] for r in requests])
    base, _ = target_scores(logits_of(model, enc.ids), enc)
    out = []
    for layer in range(n_layers):
        site = edit_site(model, layer)

        def zero(m, a, o, pos=enc.subject_pos):
            o = o.clone()
            o[torch.arange(o.shape[0]), pos] = 0
            return o

        h = site.module.register_forward_hook(zero)
        try:
            lp, _ = target_scores(logits_of(model, enc.ids), enc)
        finally:
            h.remove()
        out.append({"layer": layer, "effect": float((base - lp).mean())})
    return out


def evaluate(model: nn.Module, encode: Encoder, decode: Callable[[list[int]], str], requests: Sequence[dict],
             cfg: EvalConfig) -> dict:
    """Per-request rewrite metrics, per-window held-out NLL and per-prompt fluency of the current model."""
    out = {k: v.tolist() for k, v in rewrite_quality(model, encode, requests, cfg.batch_size).items()}
    out["ppl_nll"] = window_nll(model, cfg.ppl_tokens, seq_len=cfg.seq_len, n_windows=cfg.ppl_windows).tolist()
    gen_prompts = [r["prompts"][0] for r in requests[: cfg.fluency_prompts]]
    texts = greedy_generate(model, encode, decode, gen_prompts, max_new_tokens=cfg.gen_tokens, max_len=cfg.seq_len)
    out["fluency"] = [ngram_entropy(p + t) for p, t in zip(gen_prompts, texts)]
    return out


def _subset(t: EditTargets, m: int) -> dict:
    return {"ids": t.ids[:m], "keys": t.keys[:m], "residuals": t.residuals[:m]}


def run_grid(model: nn.Module, site: EditSite, encode: Encoder, decode: Callable[[list[int]], str],
             requests: Sequence[dict], targets: EditTargets, stats: KeyStats, *, ms: Sequence[int],
             methods: Sequence[str], cfg: EvalConfig, method_kw: dict, progress: bool = False) -> list[dict]:
    """Every method at every m (plus the unedited model on the largest request set); one row per run."""
    rows = [{"m": max(ms), "method": "unedited", **evaluate(model, encode, decode, requests[: max(ms)], cfg)}]
    plan = [(m, meth) for m in ms for meth in methods]
    for m, meth in tqdm(plan, disable=not progress, desc="edit runs", unit="run"):
        edit = apply_edit(model, site, meth, **_subset(targets, m), stats=stats, **method_kw)
        try:
            row = {"m": m, "method": meth, **evaluate(model, encode, decode, requests[:m], cfg), "info": edit.info}
        finally:
            edit.undo()
        rows.append(row)
        log.info("m=%d %s: efficacy %.3f generalisation %.3f specificity %.3f", m, meth,
                 np.nanmean(row["efficacy"]), np.nanmean(row["generalisation"]), np.nanmean(row["specificity"]))
    return rows


def sweep(model: nn.Module, site: EditSite, encode: Encoder, requests: Sequence[dict], targets: EditTargets,
          stats: KeyStats, method: str, param: str, grid: Sequence[float], *, method_kw: dict,
          batch_size: int = 256) -> list[dict]:
    """``method`` at each value of ``param`` on one request set: efficacy, paraphrase hits, specificity, score.

    The score (the mean of the three rates) is what a dev split is tuned on: NeuralDB's gate threshold and
    MEMIT's lambda are chosen by the same rule, so neither method gets a tuning advantage.
    """
    rows = []
    for value in grid:
        kw = {**method_kw, param: float(value)}
        edit = apply_edit(model, site, method, **_subset(targets, len(requests)), stats=stats, **kw)
        try:
            q = rewrite_quality(model, encode, requests, batch_size)
        finally:
            edit.undo()
        row = {param: float(value), **{k: float(np.nanmean(v)) for k, v in q.items()}}
        row["score"] = float(np.mean([row["efficacy"], row["generalisation"], row["specificity"]]))
        rows.append(row)
    return rows


def gamma_sweep(model: nn.Module, site: EditSite, encode: Encoder, requests: Sequence[dict], targets: EditTargets,
                stats: KeyStats, grid: Sequence[float], *, method_kw: dict, batch_size: int = 256) -> list[dict]:
    """NeuralDB at each gate threshold on one request set: efficacy, paraphrase hits, neighbourhood specificity."""
    return sweep(model, site, encode, requests, targets, stats, "neuraldb", "gamma", grid, method_kw=method_kw,
                 batch_size=batch_size)


def pick_best(rows: Sequence[dict], param: str) -> float:
    """The value with the best mean of efficacy, generalisation and specificity (ties: the larger value)."""
    return max(rows, key=lambda r: (round(r["score"], 9), r[param]))[param]


def pick_gamma(rows: Sequence[dict]) -> float:
    """The dev-split threshold with the best mean of efficacy, generalisation and specificity (ties: larger gamma)."""
    return pick_best(rows, "gamma")
