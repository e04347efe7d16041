"""Stage ``fit``: approach-3 laws for all interventions with one shared E, bootstrapped over training runs.

The laws L_k = E + A_k/N^alpha_k + B_k/D^beta_k share their irreducible loss E (one
floor per validation loss; a narrow grid cannot place a separate floor per dataset,
``components.scaling.joint``); whether the grid identifies E at all is stated
(``shared_E.state``). CIs come from resampling training runs (seeds within each N,
the same draw for every intervention), so noise a run shares across its cooldown
branches is seen. A fit or refit outside any law's range (``components.scaling.sanity``)
is not usable: refits that are drop out and are counted. Each held-out set is also
fitted on its own (point fit only) for the cross-validation-set ranking agreement.

The fitter's power on this run's own grid and noise is measured here too: a known law
and the same law with beta raised by ``fit.power_delta_beta`` are simulated on the
run's grid with the noise its repeated seeds show, fitted and bootstrapped the same way.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np

from components.io import atomic_path, read_jsonl, write_json
from components.scaling.allocation import compute_optimal, optimal_loss
from components.scaling.bootstrap import PARAM_NAMES
from components.scaling.joint import bootstrap_joint, e_state, fit_joint
from components.scaling.sanity import fit_flags
from components.scaling.simulate import run_noise, simulate_rows
from flows.qualitypajama.params import Params
from flows.qualitypajama.spec import FITS, GRID
from flows.runtime.stages import StageContext


def _arrays(rows: list[dict], column: str = "loss") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (np.array([r["N"] for r in rows], float), np.array([r["D"] for r in rows], float), np.array([r[column] for r in rows], float))


def _runs(rows: list[dict]) -> tuple[list, list]:
    return [r["size_target"] for r in rows], [r["seed"] for r in rows]


def _law(fit) -> dict[str, float]:
    return {k: float(getattr(fit, k) if not isinstance(fit, dict) else fit[k]) for k in PARAM_NAMES}


def usable(fit) -> bool:
    """A law with exponents in (0, 3] and coefficients within 1e±12 (sanity flags, E aside) has an allocation."""
    return not fit_flags("fit", _law(fit), check_e=False)


def sane_samples(samples: np.ndarray) -> tuple[np.ndarray, int]:
    """The refits with NaN rows where a refit is not usable; and how many were dropped."""
    out = np.array(samples, float, copy=True)
    bad = np.array([not usable(dict(zip(PARAM_NAMES, row))) for row in out], bool)
    out[bad] = np.nan
    return out, int(bad.sum())


def _ci(samples: np.ndarray, level: float) -> dict[str, list[float]]:
    tail = (1 - level) / 2
    ok = np.isfinite(samples).all(axis=1)
    if ok.sum() < 10:
        return {k: [float("nan"), float("nan")] for k in PARAM_NAMES}
    lo, hi = np.quantile(samples[ok], [tail, 1 - tail], axis=0)
    return {k: [float(lo[i]), float(hi[i])] for i, k in enumerate(PARAM_NAMES)}


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
        joint = fit_joint({n: _arrays([r for r in rows if r["intervention"] == n], f"loss_{v}") for n in interventions},
                          huber_delta=delta)
        projected[v] = [float(optimal_loss(joint.fits[n], c_target)) if usable(joint.fits[n]) else float("nan")
                        for n in interventions]
    rhos = {
        f"{a}~{b}": (float(spearmanr(projected[a], projected[b]).statistic) if np.isfinite(projected[a] + projected[b]).all() else None)
        for a, b in combinations(val_sets, 2)
    }
    return {"projected_loss": projected, "spearman": rhos}


def _truth(base_law: dict, rows: list[dict]) -> dict:
    """The law simulated for the power check: the baseline's fitted law when usable and its E identified-looking,
    else a plain law through the grid (E half the lowest loss, exponents 0.35)."""
    if usable(base_law) and base_law["E"] > 0.05 * min(r["loss"] for r in rows):
        return dict(base_law)
    lo, hi = min(r["loss"] for r in rows), max(r["loss"] for r in rows)
    e, ex = 0.5 * lo, 0.35
    n0, d0 = min(r["N"] for r in rows), min(r["D"] for r in rows)
    return {"E": e, "alpha": ex, "beta": ex, "A": 0.5 * (hi - e) * n0**ex, "B": 0.5 * (hi - e) * d0**ex}


def fitter_power(rows: list[dict], base: str, base_law: dict, p: Params) -> dict:
    """Fit and bootstrap ``fit.power_sims`` simulated pairs (the law, and beta + ``fit.power_delta_beta``)."""
    template = [r for r in rows if r["intervention"] == base]
    noise = run_noise(rows)
    truth = _truth(base_law, template)
    planted = {**truth, "beta": truth["beta"] + p.fit.power_delta_beta}
    sims = []
    for i in range(p.fit.power_sims):
        sim = simulate_rows(template, {"law": truth, "planted": planted}, noise, seed=p.seed + 1000 + i)
        data = {n: _arrays([r for r in sim if r["intervention"] == n]) for n in ("law", "planted")}
        runs = {n: _runs([r for r in sim if r["intervention"] == n]) for n in ("law", "planted")}
        jb = bootstrap_joint(data, runs, p.fit.power_boot, seed=p.seed + 2000 + i, huber_delta=p.fit.huber_delta)
        law, pl = (sane_samples(jb.samples[n])[0] for n in ("law", "planted"))
        ok = np.isfinite(law).all(axis=1) & np.isfinite(pl).all(axis=1)
        d = pl[ok, 4] - law[ok, 4]
        tail = (1 - p.claims.level) / 2
        d_ci = np.quantile(d, [tail, 1 - tail]).tolist() if ok.sum() >= 10 else [float("nan")] * 2
        b_ci = np.quantile(law[ok, 4], [tail, 1 - tail]).tolist() if ok.sum() >= 10 else [float("nan")] * 2
        e_ci = np.quantile(law[ok, 2], [tail, 1 - tail]).tolist() if ok.sum() >= 10 else [float("nan")] * 2
        sims.append({"E": jb.full.E, "E_ci": e_ci, "E_state": e_state(jb.full.E, tuple(e_ci), min(data["law"][2]))["state"],
                     "beta": jb.full.fits["law"].beta, "beta_ci": b_ci, "beta_ci_width": b_ci[1] - b_ci[0],
                     "delta_beta": jb.full.fits["planted"].beta - jb.full.fits["law"].beta, "delta_beta_ci": d_ci,
                     "delta_beta_ci_width": d_ci[1] - d_ci[0], "detected": bool(d_ci[0] > 0 or d_ci[1] < 0),
                     "covers_truth": bool(d_ci[0] <= p.fit.power_delta_beta <= d_ci[1]), "refits_used": int(ok.sum())})
    widths = [s["delta_beta_ci_width"] for s in sims if np.isfinite(s["delta_beta_ci_width"])]
    return {"truth": truth, "delta_beta": p.fit.power_delta_beta, "noise": noise, "n_sim": len(sims),
            "refits": p.fit.power_boot, "sims": sims,
            "median_delta_beta_ci_width": float(np.median(widths)) if widths else None,
            "median_beta_ci_width": float(np.median([s["beta_ci_width"] for s in sims])) if sims else None,
            "detected": sum(s["detected"] for s in sims), "how": (
                "the run's grid (sizes, seeds, budgets) simulated from a known law and from the same law with beta "
                "raised by delta_beta, with the run/point noise its repeated seeds show; each pair fitted with a shared "
                "E and bootstrapped over runs like the real data (fewer refits)")}


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    rows = read_jsonl(ctx.input(f"{GRID}/results.jsonl"), required=("intervention", "size_target", "seed", "N", "D", "loss", "flops"))
    out = Path(ctx.output(FITS))
    out.mkdir(parents=True, exist_ok=True)
    flops = [r["flops"] for r in rows]
    budgets = {"smallest_trained": min(flops), "largest_trained": max(flops), "target": p.claims.projection_multiplier * max(flops)}
    subs = {n: [r for r in rows if r["intervention"] == n] for n in p.interventions}
    jb = bootstrap_joint({n: _arrays(s) for n, s in subs.items()}, {n: _runs(s) for n, s in subs.items()},
                         p.fit.bootstrap, seed=p.seed, huber_delta=p.fit.huber_delta)
    fits = {}
    level = p.claims.level
    for name in p.interventions:
        samples, dropped = sane_samples(jb.samples[name])
        with atomic_path(out / f"bootstrap-{name}.npy") as tmp, open(tmp, "wb") as fh:
            np.save(fh, samples)
        full = jb.full.fits[name]
        fits[name] = {
            "n_boot": p.fit.bootstrap, "seed": p.seed, "level": level, "full": full.to_dict(), "ci": _ci(samples, level),
            "n_points": len(subs[name]), "n_runs": jb.n_runs, "usable": usable(full),
            "flags": fit_flags(name, _law(full), check_e=False), "refits_dropped": dropped,
            "allocation": _allocation(full, budgets),
        }
    e_all = np.concatenate([jb.samples[n][:, 2] for n in p.interventions[:1]])
    tail = (1 - level) / 2
    shared = e_state(jb.full.E, tuple(np.quantile(e_all, [tail, 1 - tail])), min(r["loss"] for r in rows))
    shared["profile"] = {"E": jb.full.profile_E.tolist(), "objective": jb.full.profile_f.tolist()}
    power = fitter_power(rows, p.claims.baseline, fits[p.claims.baseline]["full"], p) if p.fit.power_sims else None
    agreement = _ranking_agreement(rows, p.interventions, p.corpus.heldout, budgets["target"], p.fit.huber_delta)
    write_json(out / "fits.json", {"convention": "L = E + A/N^alpha + B/D^beta (Chinchilla), E shared by all interventions",
                                   "budgets": budgets, "shared_E": shared, "fits": fits, "fitter_power": power,
                                   "bootstrap_unit": "training run (seed within N), same draw for every intervention",
                                   "ranking": agreement})
    return {"fits": {n: {k: f["full"][k] for k in ("A", "B", "E", "alpha", "beta")} for n, f in fits.items()},
            "shared_E": shared["state"]}
