"""optimistic-o2nc's champion: ODOG's tuned settings (eta, D, T, ...), as the measure stage ran them.

Nothing is trained in this pipeline, so the artifact that stands for the method is the setting the tuning chose
(``flows/optimistic_o2nc/tune.py``, frozen in ``params._TUNED``, read by the measure stage from
``params.methods["odog"]``): saved as ``data/optimistic-o2nc/runs/champion/settings.json`` and loaded with
``components.optim.settings:load_settings`` (JSON only).

Re-evaluated as the measure stage measures it (``runs.run_one``, the same runs call for call), on a small
fixed problem: the first test function of the run's grid (robust-synthetic where it is in the grid, with the
run's function sizes), the first three seeds' starts, the deterministic eps grid (counted gradient calls to reach
``eps * ||grad F(x0)||``: claim 1's quantity) and the noisy grid at ``sigma_eps`` (claim 3's success within the
cap). Every start and every noise stream is seeded (``x0 ~ default_rng(10_000 + seed)``, noise seed
``params.seed * 1_000_003 + seed``) and the arithmetic is numpy float64, so unchanged settings on unchanged numpy give
the same call counts; a numpy (BLAS, random-stream) change that moves them is what the recurring evaluation
catches. A few seconds at the default sizes.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from flows.runtime.champions import Rule
from flows.runtime.champions import candidate as make_candidate

SLUG = "optimistic-o2nc"
METHOD = "odog"
N_SEEDS = 3
LIBRARIES = ("scipy",)  # the test functions' module (the hard chain's ndtr); numpy is in the base set
RULES = {
    # mean ln(counted calls) over the eps grid and seeds, an unreached run counting 2x the cap: 0.05 in log units
    # is about 5% more calls
    "log_calls": Rule(higher_is_better=False, tolerance=0.05, relative=False),
    # a share of runs: 0.02 absolute, so one run that no longer reaches eps fails it
    "reached": Rule(higher_is_better=True, tolerance=0.02, relative=False),
    # the same over the noisy runs (sigma > 0 at sigma_eps): a changed noise stream moves these more, so 0.1
    "noisy_log_calls": Rule(higher_is_better=False, tolerance=0.1, relative=False),
    "noisy_reached": Rule(higher_is_better=True, tolerance=0.02, relative=False),
}


def config_of(p) -> dict[str, Any]:
    """ODOG's config exactly as the measure stage hands it to ``build_method`` (``measure.tasks``)."""
    return p.methods[METHOD].model_dump(mode="json") if METHOD in p.methods else {}


def settings_for(p) -> dict[str, Any]:
    g = p.grid
    function = "robust-synthetic" if "robust-synthetic" in g.functions else g.functions[0]
    return {
        "function": function,
        "fparams": p.functions.model_dump(mode="json"),
        "seeds": list(g.seeds[:N_SEEDS]),
        "eps": list(g.eps),
        "budget": g.budget,
        "sigma_eps": g.sigma_eps,
        "sigmas": [s for s in g.sigmas if s > 0],
        "stoch_budget": g.stoch_budget,
        "seed": p.seed,
        "shared_noise": g.shared_noise,
        "noise": g.noise,
    }


def save(p, folder: Path) -> Path:
    from components.optim.settings import OptimiserSettings, save_settings

    return save_settings(OptimiserSettings(METHOD, config_of(p)), folder)


def log_calls(rows: list[dict], budget: int) -> float:
    """Mean ln(counted calls); an unreached (or diverged) run counts ln(2 x budget), as the tuning scores it."""
    return float(sum(math.log(r["calls"] if r["reached"] else 2 * budget) for r in rows) / len(rows))


def runs(model: Any, settings: dict) -> tuple[list[dict], list[dict]]:
    """The deterministic and the noisy runs of the loaded settings (measure-stage rows)."""
    from flows.optimistic_o2nc.runs import RunTask, run_one

    s = settings
    base = {
        "function": s["function"],
        "fparams": dict(s["fparams"]),
        "method": model.method,
        "mparams": dict(model.config),
        "shared_noise": bool(s["shared_noise"]),
        "noise": s["noise"],
    }
    det, noisy = [], []
    for seed in s["seeds"]:
        one = {**base, "seed": int(seed), "noise_seed": int(s["seed"]) * 1_000_003 + int(seed)}
        det += [
            run_one(RunTask(**one, grid="det", eps_rel=float(e), sigma_rel=0.0, budget=int(s["budget"])))
            for e in s["eps"]
        ]
        noisy += [
            run_one(
                RunTask(
                    **one,
                    grid="stoch",
                    eps_rel=float(s["sigma_eps"]),
                    sigma_rel=float(sg),
                    budget=int(s["stoch_budget"]),
                )
            )
            for sg in s["sigmas"]
        ]
    return det, noisy


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    """No data files: the test function is built from its seeded generator (``root`` is not read)."""
    det, noisy = runs(model, settings)
    out = {"log_calls": log_calls(det, int(settings["budget"])), "reached": sum(r["reached"] for r in det) / len(det)}
    if noisy:
        out |= {
            "noisy_log_calls": log_calls(noisy, int(settings["stoch_budget"])),
            "noisy_reached": sum(r["reached"] for r in noisy) / len(noisy),
        }
    return out


def candidate(p, run_id: str | None, name: str, folder: Path) -> dict | None:
    """The champion from the settings LOADED BACK from ``folder`` (what the recurring evaluation will load)."""
    from components.optim.settings import load_settings

    if run_id is None:  # not tracked: nothing to register, so nothing to evaluate
        return None
    settings = settings_for(p)
    metrics = evaluate(load_settings(folder), settings, folder)
    return make_candidate(SLUG, run_id, name, metrics, {k: RULES[k] for k in metrics}, settings)
