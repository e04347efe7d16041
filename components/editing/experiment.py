"""The editing experiment: a light causal trace, each method at each m, the dev sweeps, the store's retrieval.

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
from components.editing.model import EditSite, Encoder, compute_keys, edit_site, encode_batch, logits_of, target_scores
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
    window_shift: int = 0  # tokens; each seed gets its own held-out windows (a shift of seq_len per seed)


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


def evaluate(
    model: nn.Module, encode: Encoder, decode: Callable[[list[int]], str], requests: Sequence[dict], cfg: EvalConfig
) -> dict:
    """Per-request rewrite metrics, per-window held-out NLL and per-prompt fluency of the current model."""
    out = {k: v.tolist() for k, v in rewrite_quality(model, encode, requests, cfg.batch_size).items()}
    out["ppl_nll"] = window_nll(
        model, cfg.ppl_tokens, seq_len=cfg.seq_len, n_windows=cfg.ppl_windows, shift=cfg.window_shift
    ).tolist()
    gen_prompts = [r["prompts"][0] for r in requests[: cfg.fluency_prompts]]
    texts = greedy_generate(model, encode, decode, gen_prompts, max_new_tokens=cfg.gen_tokens, max_len=cfg.seq_len)
    out["fluency"] = [ngram_entropy(p + t) for p, t in zip(gen_prompts, texts)]
    return out


def _subset(t: EditTargets, m: int) -> dict:
    return {"ids": t.ids[:m], "keys": t.keys[:m], "residuals": t.residuals[:m]}


def _batch(t: EditTargets, lo: int, hi: int) -> dict:
    return {"ids": t.ids[lo:hi], "keys": t.keys[lo:hi], "residuals": t.residuals[lo:hi]}


def run_grid(
    model: nn.Module,
    site: EditSite,
    encode: Encoder,
    decode: Callable[[list[int]], str],
    requests: Sequence[dict],
    targets: EditTargets,
    stats: KeyStats,
    *,
    ms: Sequence[int],
    methods: Sequence[str],
    cfg: EvalConfig,
    method_kw: dict,
    progress: bool = False,
    small_batches: int = 1,
) -> list[dict]:
    """Every method at every m (plus the unedited model on the largest request set); one row per run.

    NeuralDB rows also carry the store's retrieval accuracy (:func:`retrieval_quality`). At the smallest m,
    ``small_batches`` > 1 edits that many disjoint batches of m requests one after another (each from the
    unedited model) and reports their rewrite metrics in one row (``batch`` per fact), so the efficacy at the
    smallest m rests on ``small_batches * m`` facts; held-out NLL and fluency there come from the first batch.
    """
    rows = [{"m": max(ms), "method": "unedited", **evaluate(model, encode, decode, requests[: max(ms)], cfg)}]
    plan = [(m, meth) for m in ms for meth in methods]
    n_small = max(1, min(small_batches, len(requests) // min(ms)))
    for m, meth in tqdm(plan, disable=None if progress else True, desc="edit runs", unit="run"):
        edit = apply_edit(model, site, meth, **_subset(targets, m), stats=stats, **method_kw)
        try:
            row = {"m": m, "method": meth, **evaluate(model, encode, decode, requests[:m], cfg), "info": edit.info}
            if edit.db is not None:
                row.update(retrieval_quality(model, site, encode, requests[:m], edit.db))
        finally:
            edit.undo()
        if m == min(ms) and n_small > 1:
            _more_batches(model, site, encode, requests, targets, stats, meth, m, n_small, method_kw, cfg, row)
        rows.append(row)
        log.info(
            "m=%d %s: efficacy %.3f generalisation %.3f specificity %.3f",
            m,
            meth,
            np.nanmean(row["efficacy"]),
            np.nanmean(row["generalisation"]),
            np.nanmean(row["specificity"]),
        )
    return rows


def _more_batches(model, site, encode, requests, targets, stats, meth, m, n, method_kw, cfg, row) -> None:
    """Batches 2..n of m requests at the smallest m: their per-fact rewrite metrics appended to ``row``."""
    row["batch"] = [0] * m
    for b in range(1, n):
        lo, hi = b * m, (b + 1) * m
        edit = apply_edit(model, site, meth, **_batch(targets, lo, hi), stats=stats, **method_kw)
        try:
            q = rewrite_quality(model, encode, requests[lo:hi], cfg.batch_size)
            if edit.db is not None:
                q.update(retrieval_quality(model, site, encode, requests[lo:hi], edit.db))
        finally:
            edit.undo()
        for k, v in q.items():
            row[k] = list(row[k]) + list(np.asarray(v, float).tolist())
        row["batch"] += [b] * m


@torch.no_grad()
def retrieval_quality(model: nn.Module, site: EditSite, encode: Encoder, requests: Sequence[dict], db) -> dict:
    """Per request, how the NeuralDB store answers the keys of its prompts (the store's retrieval accuracy).

    - ``retrieval``: share of rewrite prompts whose best-matching stored key is the request's own and passes the gate;
    - ``retrieval_para``: the same on paraphrase prompts;
    - ``neighbour_hits``: share of neighbourhood prompts (never-edited subjects) that pass the gate (false hits).
    """
    out = {}
    for name, field, subj in (
        ("retrieval", "prompts", None),
        ("retrieval_para", "paraphrase_prompts", None),
        ("neighbour_hits", "neighborhood_prompts", "neighborhood_subjects"),
    ):
        prompts, subjects, owner = [], [], []
        for n, r in enumerate(requests):
            ps = r.get(field, [])
            ss = r.get(subj, []) if subj else [r["subject"]] * len(ps)
            if len(ss) != len(ps):
                continue  # neighbourhood prompts without their subjects (external data): not measurable
            prompts += ps
            subjects += ss
            owner += [n] * len(ps)
        if not prompts:
            out[name] = [float("nan")] * len(requests)
            continue
        _, j, g = db.retrieve(compute_keys(model, site, encode, prompts, subjects))
        if subj:
            hit = (g > 0.5).float().numpy()
        else:
            own = np.array([db.ids[int(x)] == requests[o]["id"] for x, o in zip(j, owner)])
            hit = (own & (g > 0.5).numpy()).astype(float)
        total, count = np.zeros(len(requests)), np.zeros(len(requests))
        np.add.at(total, owner, hit)
        np.add.at(count, owner, 1)
        out[name] = np.where(count > 0, total / np.maximum(count, 1), np.nan).tolist()
    return out


def sweep_grid(
    model: nn.Module,
    site: EditSite,
    encode: Encoder,
    requests: Sequence[dict],
    targets: EditTargets,
    stats: KeyStats,
    method: str,
    grid: Sequence[dict],
    *,
    method_kw: dict,
    batch_size: int = 256,
) -> list[dict]:
    """``method`` at each setting of ``grid`` (dicts of its free settings) on one request set: efficacy, paraphrase
    hits, specificity and their mean, the score.

    The score is what a dev split is tuned on: NeuralDB's gate threshold, MEMIT's lambda and AlphaEdit's
    null-space threshold and L2 term are all chosen by the same rule, so no method gets a tuning advantage.
    """
    rows = []
    for setting in grid:
        kw = {**method_kw, **{k: float(v) for k, v in setting.items()}}
        edit = apply_edit(model, site, method, **_subset(targets, len(requests)), stats=stats, **kw)
        try:
            q = rewrite_quality(model, encode, requests, batch_size)
        finally:
            edit.undo()
        row = {**{k: float(v) for k, v in setting.items()}, **{k: float(np.nanmean(v)) for k, v in q.items()}}
        row["score"] = float(np.mean([row["efficacy"], row["generalisation"], row["specificity"]]))
        rows.append(row)
    return rows


def sweep(
    model: nn.Module,
    site: EditSite,
    encode: Encoder,
    requests: Sequence[dict],
    targets: EditTargets,
    stats: KeyStats,
    method: str,
    param: str,
    grid: Sequence[float],
    *,
    method_kw: dict,
    batch_size: int = 256,
) -> list[dict]:
    """:func:`sweep_grid` over one setting ``param``."""
    return sweep_grid(
        model,
        site,
        encode,
        requests,
        targets,
        stats,
        method,
        [{param: v} for v in grid],
        method_kw=method_kw,
        batch_size=batch_size,
    )


def gamma_sweep(
    model: nn.Module,
    site: EditSite,
    encode: Encoder,
    requests: Sequence[dict],
    targets: EditTargets,
    stats: KeyStats,
    grid: Sequence[float],
    *,
    method_kw: dict,
    batch_size: int = 256,
) -> list[dict]:
    """NeuralDB at each gate threshold on one request set: efficacy, paraphrase hits, neighbourhood specificity."""
    return sweep(
        model,
        site,
        encode,
        requests,
        targets,
        stats,
        "neuraldb",
        "gamma",
        grid,
        method_kw=method_kw,
        batch_size=batch_size,
    )


def pick_best(rows: Sequence[dict], param: str | Sequence[str]) -> float | dict:
    """The value with the best mean of efficacy, generalisation and specificity (ties: the larger value).

    With several settings (a sequence of names) the best row's settings as a dict (ties: larger values, in order).
    """
    names = [param] if isinstance(param, str) else list(param)
    best = max(rows, key=lambda r: (round(r["score"], 9), *(r[n] for n in names)))
    return best[param] if isinstance(param, str) else {n: best[n] for n in names}


def pick_gamma(rows: Sequence[dict]) -> float:
    """The dev-split threshold with the best mean of efficacy, generalisation and specificity (ties: larger gamma)."""
    return pick_best(rows, "gamma")


@torch.no_grad()
def key_retrieval(
    model: nn.Module, site: EditSite, encode: Encoder, requests: Sequence[dict], key_mean: torch.Tensor
) -> dict:
    """How separable the subjects' keys are at ``site``: NeuralDB's argmax (no gate) over the requests' own keys.

    Each request's key is the mean over its rewrite prompts (as in :func:`targets.compute_targets`); the share of
    rewrite and paraphrase prompts whose best-matching key is the request's own is returned (``rewrite``,
    ``paraphrase``) with their mean (``score``). Needs keys only, no target values.
    """
    from components.editing.neuraldb import NeuralKVDB

    prompts = [p for r in requests for p in r["prompts"]]
    owner = torch.tensor([n for n, r in enumerate(requests) for _ in r["prompts"]])
    rows = compute_keys(model, site, encode, prompts, [r["subject"] for r in requests for _ in r["prompts"]])
    keys = torch.zeros(len(requests), rows.shape[1]).index_add_(0, owner, rows)
    keys /= torch.bincount(owner, minlength=len(requests)).clamp(min=1)[:, None].float()
    db = NeuralKVDB(key_mean, gamma=-1.0)
    db.add([r["id"] for r in requests], keys, torch.zeros(len(requests), 1))
    q = retrieval_quality(model, site, encode, requests, db)
    out = {"rewrite": float(np.nanmean(q["retrieval"])), "paraphrase": float(np.nanmean(q["retrieval_para"]))}
    out["score"] = float(np.mean([out["rewrite"], out["paraphrase"]]))
    return out


def pick_layer(trace: Sequence[dict], *, min_retrieval: float = 0.0) -> int:
    """The edited layer: the largest causal-trace effect, never the last layer (its MLP at the subject cannot reach
    the object's position); with ``min_retrieval`` > 0 only among layers whose ``retrieval['score']`` reaches it,
    and if none does, the layer whose keys retrieve best (ties: the larger effect)."""
    cands = list(trace[:-1] or trace)
    if min_retrieval > 0:
        ok = [t for t in cands if t["retrieval"]["score"] >= min_retrieval]
        if not ok:
            return max(cands, key=lambda t: (t["retrieval"]["score"], t["effect"]))["layer"]
        cands = ok
    return max(cands, key=lambda t: t["effect"])["layer"]
