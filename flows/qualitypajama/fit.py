"""Stage ``fit``: approach-3 laws for all interventions with one shared E, bootstrapped over training runs.

The laws L_k = E + A_k/N^alpha_k + B_k/D^beta_k share their irreducible loss E (one
floor per validation loss; a narrow grid cannot place a separate floor per dataset,
``components.scaling.joint``); whether the grid identifies E at all is stated
(``shared_E.state``). CIs come from resampling training runs (seeds within each N,
the same draw for every intervention), so noise a run shares across its cooldown
branches is seen. A fit or refit outside any law's range (``components.scaling.sanity``)
is not usable: refits that are drop out and are counted. Each held-out set is also
fitted on its own (point fit only) for the cross-validation-set ranking agreement.

The fitter's power on this run's own grid and noise is measured here too
(``components.scaling.fitter_power``): a known law and the same law with beta raised by
``fit.power_delta_beta``, simulated on the run's grid with the noise its repeated seeds
show, fitted and bootstrapped the same way.

Two more sets of fits serve the claims (``flows/qualitypajama/claims.py``). Per seed: the joint law fitted on
each seed's runs alone (``per_seed`` in fits.json), so a comparison has one effect per seed for the standard
rule's small-sample interval (a t-interval, k - 1 df, beside the refit bootstrap; shared/papers/README.md,
step 2). Simulated runs (``refit-power.npz``): ``fit.refit_power_sims`` grids drawn from the fitted laws with
the run's noise, each fitted jointly, bootstrapped over runs (``fit.power_boot`` refits) and fitted per seed,
so every refit comparison's power can be simulated the way its CI was made.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from components.errors import DataError
from components.io import atomic_path, read_jsonl, write_json
from components.scaling.allocation import compute_optimal, optimal_loss
from components.scaling.bootstrap import PARAM_NAMES
from components.scaling.fitter_power import fitter_power
from components.scaling.joint import bootstrap_joint, e_state, fit_joint
from components.scaling.sanity import fit_flags, law_params, param_cis, sane_samples, usable
from components.scaling.simulate import grid_arrays, grid_runs, run_noise, simulate_rows
from flows.qualitypajama.params import Params
from flows.qualitypajama.spec import FITS, GRID
from flows.runtime.stages import StageContext


def _allocation(fit, budgets: dict[str, float]) -> dict[str, dict[str, float]] | None:
    if not usable(fit):
        return None
    out = {}
    for label, c in budgets.items():
        n_opt, d_opt = compute_optimal(fit, c)
        out[label] = {
            "C": c,
            "N_opt": float(n_opt),
            "D_opt": float(d_opt),
            "D_per_N": float(d_opt / n_opt),
            "loss": float(optimal_loss(fit, c)),
        }
    return out


def _ranking_agreement(
    rows: list[dict], interventions: list[str], val_sets: list[str], c_target: float, delta: float
) -> dict:
    """Spearman rho between validation sets of the interventions' projected-loss ranking at ``c_target``."""
    from scipy.stats import spearmanr

    projected = {}
    for v in val_sets:
        joint = fit_joint(
            {n: grid_arrays([r for r in rows if r["intervention"] == n], f"loss_{v}") for n in interventions},
            huber_delta=delta,
        )
        projected[v] = [
            float(optimal_loss(joint.fits[n], c_target)) if usable(joint.fits[n]) else float("nan")
            for n in interventions
        ]
    rhos = {
        f"{a}~{b}": (
            float(spearmanr(projected[a], projected[b]).statistic)
            if np.isfinite(projected[a] + projected[b]).all()
            else None
        )
        for a, b in combinations(val_sets, 2)
    }
    return {"projected_loss": projected, "spearman": rhos}


def per_seed_laws(
    rows: list[dict], names: list[str], seeds: list[int], huber_delta: float
) -> dict[str, list[dict | None]]:
    """Per intervention, the law fitted (jointly, one shared E) on each seed's runs alone; None where that fit is
    not usable (``components.scaling.sanity.usable``) or fails."""
    out: dict[str, list[dict | None]] = {n: [] for n in names}
    for s in seeds:
        data = {n: grid_arrays([r for r in rows if r["intervention"] == n and r["seed"] == s]) for n in names}
        try:
            joint = fit_joint(data, huber_delta=huber_delta)
        except DataError:
            joint = None
        for n in names:
            fit = None if joint is None else joint.fits[n]
            out[n].append(law_params(fit) if fit is not None and usable(fit) else None)
    return out


def _law_row(law: dict | None) -> list[float]:
    return [float("nan")] * len(PARAM_NAMES) if law is None else [float(law[k]) for k in PARAM_NAMES]


def refit_power_runs(
    rows: list[dict],
    laws: dict[str, dict],
    seeds: list[int],
    *,
    n_sim: int,
    n_boot: int,
    seed: int,
    huber_delta: float,
) -> dict[str, np.ndarray]:
    """``n_sim`` runs simulated from ``laws`` (name -> law) on the run's grid with its run and point noise, each
    handled as the real run: a joint fit, ``n_boot`` refits over runs (sane ones kept, the count dropped) and a
    joint fit per seed. Arrays per name: ``full-<n>`` (n_sim, 5), ``samples-<n>`` (n_sim, n_boot, 5), ``seeds-<n>``
    (n_sim, n_seeds, 5; NaN where a seed's fit is not usable), ``dropped-<n>`` (n_sim,)."""
    names = list(laws)
    template = [r for r in rows if r["intervention"] == names[0]]
    noise = run_noise(rows)
    out: dict[str, list] = {f"{k}-{n}": [] for k in ("full", "samples", "seeds", "dropped") for n in names}
    for i in range(n_sim):
        sim = simulate_rows(template, laws, noise, seed=seed + 3000 + i)
        subs = {n: [r for r in sim if r["intervention"] == n] for n in names}
        jb = bootstrap_joint(
            {n: grid_arrays(x) for n, x in subs.items()},
            {n: grid_runs(x) for n, x in subs.items()},
            n_boot,
            seed=seed + 4000 + i,
            huber_delta=huber_delta,
        )
        by_seed = per_seed_laws(sim, names, seeds, huber_delta)
        for n in names:
            samples, dropped = sane_samples(jb.samples[n])
            out[f"full-{n}"].append(_law_row(law_params(jb.full.fits[n])))
            out[f"samples-{n}"].append(samples)
            out[f"seeds-{n}"].append([_law_row(x) for x in by_seed[n]])
            out[f"dropped-{n}"].append(dropped)
    return {k: np.asarray(v, float) for k, v in out.items()}


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    rows = read_jsonl(
        ctx.input(f"{GRID}/results.jsonl"), required=("intervention", "size_target", "seed", "N", "D", "loss", "flops")
    )
    out = ctx.output_dir(FITS)
    flops = [r["flops"] for r in rows]
    budgets = {
        "smallest_trained": min(flops),
        "largest_trained": max(flops),
        "target": p.claims.projection_multiplier * max(flops),
    }
    subs = {n: [r for r in rows if r["intervention"] == n] for n in p.interventions}
    jb = bootstrap_joint(
        {n: grid_arrays(s) for n, s in subs.items()},
        {n: grid_runs(s) for n, s in subs.items()},
        p.fit.bootstrap,
        seed=p.seed,
        huber_delta=p.fit.huber_delta,
    )
    fits = {}
    level = p.claims.level
    for name in p.interventions:
        samples, dropped = sane_samples(jb.samples[name])
        with atomic_path(out / f"bootstrap-{name}.npy") as tmp, open(tmp, "wb") as fh:
            np.save(fh, samples)
        full = jb.full.fits[name]
        fits[name] = {
            "n_boot": p.fit.bootstrap,
            "seed": p.seed,
            "level": level,
            "full": full.to_dict(),
            "ci": param_cis(samples, level),
            "n_points": len(subs[name]),
            "n_runs": jb.n_runs,
            "usable": usable(full),
            "flags": fit_flags(name, law_params(full), check_e=False),
            "refits_dropped": dropped,
            "allocation": _allocation(full, budgets),
        }
    e_all = np.concatenate([jb.samples[n][:, 2] for n in p.interventions[:1]])
    tail = (1 - level) / 2
    shared = e_state(jb.full.E, tuple(np.quantile(e_all, [tail, 1 - tail])), min(r["loss"] for r in rows))
    shared["profile"] = {"E": jb.full.profile_E.tolist(), "objective": jb.full.profile_f.tolist()}
    base = p.claims.baseline
    power = (
        fitter_power(
            [r for r in rows if r["intervention"] == base],
            rows,
            fits[base]["full"],
            delta_beta=p.fit.power_delta_beta,
            n_sim=p.fit.power_sims,
            n_boot=p.fit.power_boot,
            level=level,
            seed=p.seed,
            huber_delta=p.fit.huber_delta,
        )
        if p.fit.power_sims
        else None
    )
    seeds = list(p.grid.seeds)
    per_seed = per_seed_laws(rows, p.interventions, seeds, p.fit.huber_delta)
    simulated = {n: fits[n]["full"] for n in p.interventions if fits[n]["usable"]}
    if p.fit.refit_power_sims and len(simulated) >= 2:
        sims = refit_power_runs(
            rows,
            {n: law_params(law) for n, law in simulated.items()},
            seeds,
            n_sim=p.fit.refit_power_sims,
            n_boot=p.fit.power_boot,
            seed=p.seed,
            huber_delta=p.fit.huber_delta,
        )
        with atomic_path(out / "refit-power.npz") as tmp, open(tmp, "wb") as fh:
            np.savez(fh, **sims)
    agreement = _ranking_agreement(rows, p.interventions, p.corpus.heldout, budgets["target"], p.fit.huber_delta)
    write_json(
        out / "fits.json",
        {
            "convention": "L = E + A/N^alpha + B/D^beta (Chinchilla), E shared by all interventions",
            "budgets": budgets,
            "shared_E": shared,
            "fits": fits,
            "fitter_power": power,
            "bootstrap_unit": "training run (seed within N), same draw for every intervention",
            "per_seed": {"seeds": seeds, "laws": per_seed},
            "refit_power": {
                "simulated": sorted(simulated) if p.fit.refit_power_sims and len(simulated) >= 2 else [],
                "n_sim": p.fit.refit_power_sims,
                "n_boot": p.fit.power_boot,
                "noise": run_noise(rows),
                "how": "grids simulated from the fitted laws (shared E) with the run and point noise its repeated "
                "seeds show, each fitted jointly, bootstrapped over runs and fitted per seed like the real data",
            },
            "ranking": agreement,
        },
    )
    return {
        "fits": {n: {k: f["full"][k] for k in ("A", "B", "E", "alpha", "beta")} for n, f in fits.items()},
        "shared_E": shared["state"],
    }
