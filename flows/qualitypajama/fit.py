"""Stage ``fit``: a Chinchilla approach-3 law per intervention, bootstrap CIs, compute-optimal allocation.

Fits use the mean validation loss over the held-out sets; each held-out set is
also fitted on its own (point fit only) so the report can show how far the
interventions' ranking agrees across validation sets (Spearman rho).
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np

from components.io import atomic_path, read_jsonl, write_json
from components.scaling.allocation import compute_optimal, optimal_loss
from components.scaling.bootstrap import bootstrap_fits
from components.scaling.chinchilla import fit_chinchilla
from flows.qualitypajama.params import Params
from flows.qualitypajama.spec import FITS, GRID
from flows.runtime.stages import StageContext


def _arrays(rows: list[dict], column: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (np.array([r["N"] for r in rows], float), np.array([r["D"] for r in rows], float), np.array([r[column] for r in rows], float))


def usable(fit) -> bool:
    """A law with finite positive coefficients and exponents has a compute-optimal allocation."""
    values = [fit.A, fit.B, fit.E, fit.alpha, fit.beta]
    return all(np.isfinite(values)) and min(fit.A, fit.B, fit.alpha, fit.beta) > 0


def _allocation(fit, budgets: dict[str, float]) -> dict[str, dict[str, float]] | None:
    if not usable(fit):
        return None
    out = {}
    for label, c in budgets.items():
        n_opt, d_opt = compute_optimal(fit, c)
        out[label] = {"C": c, "N_opt": float(n_opt), "D_opt": float(d_opt), "D_per_N": float(d_opt / n_opt), "loss": float(optimal_loss(fit, c))}
    return out


def _ranking_agreement(rows: list[dict], interventions: list[str], val_sets: list[str], c_target: float, delta: float) -> dict:
    """Spearman rho between validation sets of the interventions' projected-loss ranking at ``c_target``."""
    from scipy.stats import spearmanr

    projected = {}
    for v in val_sets:
        losses = []
        for name in interventions:
            fit = fit_chinchilla(*_arrays([r for r in rows if r["intervention"] == name], f"loss_{v}"), huber_delta=delta)
            losses.append(float(optimal_loss(fit, c_target)) if usable(fit) else float("nan"))
        projected[v] = losses
    rhos = {
        f"{a}~{b}": (float(spearmanr(projected[a], projected[b]).statistic) if np.isfinite(projected[a] + projected[b]).all() else None)
        for a, b in combinations(val_sets, 2)
    }
    return {"projected_loss": projected, "spearman": rhos}


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    rows = read_jsonl(ctx.input(f"{GRID}/results.jsonl"), required=("intervention", "N", "D", "loss", "flops"))
    out = Path(ctx.output(FITS))
    out.mkdir(parents=True, exist_ok=True)
    flops = [r["flops"] for r in rows]
    budgets = {"smallest_trained": min(flops), "largest_trained": max(flops), "target": p.claims.projection_multiplier * max(flops)}
    fits = {}
    for i, name in enumerate(p.interventions):
        sub = [r for r in rows if r["intervention"] == name]
        boot = bootstrap_fits(*_arrays(sub, "loss"), n_boot=p.fit.bootstrap, seed=p.seed + i, huber_delta=p.fit.huber_delta, progress=True)
        with atomic_path(out / f"bootstrap-{name}.npy") as tmp, open(tmp, "wb") as fh:
            np.save(fh, boot.samples)
        fits[name] = {
            **boot.to_dict(p.claims.level), "n_points": len(sub), "usable": usable(boot.full),
            "allocation": _allocation(boot.full, budgets),
        }
    agreement = _ranking_agreement(rows, p.interventions, p.corpus.heldout, budgets["target"], p.fit.huber_delta)
    write_json(out / "fits.json", {"convention": "L = E + A/N^alpha + B/D^beta (Chinchilla)", "budgets": budgets, "fits": fits, "ranking": agreement})
    return {"fits": {n: {k: f["full"][k] for k in ("A", "B", "E", "alpha", "beta")} for n, f in fits.items()}}
