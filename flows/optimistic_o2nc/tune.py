"""The grid search behind optimistic-o2nc's frozen settings (``params._TUNED``, ``lr`` and ``adam_lr``).

The card leaves the theorem's constants unverified and asks to grid-search D, T and eta per method on a separate
tuning function and freeze them. This script is that search, so the frozen values can be rerun and checked:

* tuning function: an ill-conditioned convex quadratic, d = 30, eigenvalues evenly spaced in [0.01, 1]
  (``components.optim.functions.Quadratic``), none of the pipeline's test functions;
* targets: eps in {0.1, 0.01, 0.001} x ||grad F(x0)||, starts x0 of seeds 0-2, 5,000 counted calls per run;
* score of a setting: mean over the 9 (eps, seed) runs of log(counted calls), an unreached (or diverged) run
  counting log(2 x budget); the lowest score wins, ties to the first in grid order;
* the same effort for every method: each method gets exactly ``N_CONFIGS`` (80) settings. The O2NC methods
  (o2nc-ogd, cmo23 with K from eps, cmo23-k2, naive-hint, odog, odog-adaptive) share one grid,
  eta x D x T = {0.25, 0.5, 1, 1.5, 1.9} x {0.1, 0.3, 1, 3} x {3, 5, 10, 20} (scale-free: eta / L1,
  D ||grad F(x0)|| / L1; eta < 2 so CMO23's fixed-point loop contracts); GD gets 80 step sizes lr / L1 in
  [0.05, 2] and Adam 80 step sizes in [1e-3, 0.3] (log-spaced). SGD uses GD's lr (the same update on noisy
  gradients); odog-adaptive keeps gamma = 1. (A first 36-setting grid, eta <= 1.5, D <= 1, T >= 5, put most
  winners on its edge, so it was widened to this one.)

    .venv/bin/python -m flows.optimistic_o2nc.tune             # full search (~1.5 min of CPU), prints the winners
    .venv/bin/python -m flows.optimistic_o2nc.tune --check     # exit 1 if the winners differ from params._TUNED
    .venv/bin/python -m flows.optimistic_o2nc.tune --methods odog cmo23 --out tuned.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

from components.optim.functions import Quadratic
from components.optim.runner import build_method, run_method

EPS = (0.1, 0.01, 0.001)
SEEDS = (0, 1, 2)
BUDGET = 5_000
O2NC_METHODS = ("o2nc-ogd", "cmo23", "cmo23-k2", "naive-hint", "odog", "odog-adaptive")
BASELINES = ("gd", "adam")
ETAS, RADII, EPISODES = (0.25, 0.5, 1.0, 1.5, 1.9), (0.1, 0.3, 1.0, 3.0), (3, 5, 10, 20)
N_CONFIGS = len(ETAS) * len(RADII) * len(EPISODES)


def _log_grid(lo: float, hi: float) -> list[float]:
    return [float(f"{v:.3g}") for v in np.geomspace(lo, hi, N_CONFIGS)]


def grid(method: str) -> list[dict]:
    """The settings tried for ``method``: N_CONFIGS of them for every method."""
    if method in O2NC_METHODS:
        extra = {"inner_steps": 2} if method == "cmo23-k2" else {}
        return [{"eta": e, "radius": r, "episode": t, **extra} for e, r, t in itertools.product(ETAS, RADII, EPISODES)]
    if method == "gd":
        return [{"lr": v} for v in _log_grid(0.05, 2.0)]
    if method == "adam":
        return [{"adam_lr": v} for v in _log_grid(1e-3, 0.3)]
    raise SystemExit(f"tune: unknown method {method!r}; use {', '.join((*BASELINES, *O2NC_METHODS))}")


def tuning_function() -> Quadratic:
    return Quadratic(dim=30, mu=0.01, L=1.0)


def score(task: dict) -> dict:
    """Mean log counted calls of one (method, setting) over EPS x SEEDS; unreached runs count 2 x budget."""
    fn = tuning_function()
    logs, reached = [], 0
    for e in task["eps"]:
        for s in task["seeds"]:
            x0 = fn.x0(s)
            g0 = float(np.linalg.norm(fn.grad(x0)))
            m = build_method(task["method"], fn, g0, task["cfg"], eps_rel=e)
            r = run_method(m, fn, eps=e * g0, x0=x0, budget=task["budget"])
            logs.append(np.log(r.calls if r.reached else 2 * task["budget"]))
            reached += int(r.reached)
    return {**task, "score": float(np.mean(logs)), "reached": reached, "runs": len(logs)}


def tune(methods, *, eps=EPS, seeds=SEEDS, budget=BUDGET, workers: int = 1) -> dict:
    """{method: {"best": setting, "score", "reached", "runs", "n_configs"}} over each method's grid."""
    tasks = [
        {"method": m, "cfg": c, "eps": list(eps), "seeds": list(seeds), "budget": budget}
        for m in methods
        for c in grid(m)
    ]
    if workers > 1:
        from flows.runtime import runners

        results = runners.map_items(
            score, tasks, workers=workers, chunk=max(1, len(tasks) // (4 * workers)), desc="o2nc tuning"
        )
    else:
        results = [score(t) for t in tasks]
    out = {}
    for m in methods:
        rs = [r for r in results if r["method"] == m]
        best = min(rs, key=lambda r: r["score"])  # min keeps the first of equal scores: grid order
        out[m] = {
            "best": best["cfg"],
            "score": round(best["score"], 4),
            "reached": best["reached"],
            "runs": best["runs"],
            "n_configs": len(rs),
        }
    return out


def frozen() -> dict:
    """The settings the pipeline uses now, in the search's keys."""
    from flows.optimistic_o2nc.params import _TUNED

    keys = {"gd": ("lr",), "adam": ("adam_lr",), "cmo23-k2": ("eta", "radius", "episode", "inner_steps")}
    return {m: {k: v[k] for k in keys.get(m, ("eta", "radius", "episode"))} for m, v in _TUNED.items() if m != "sgd"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m flows.optimistic_o2nc.tune",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    ap.add_argument("--methods", nargs="+", default=[*BASELINES, *O2NC_METHODS], help="methods to tune")
    ap.add_argument("--budget", type=int, default=BUDGET, help="counted calls per tuning run")
    ap.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS), help="starts of the tuning runs")
    ap.add_argument("--workers", type=int, default=1, help="processes (through paperline's runner when > 1)")
    ap.add_argument("--out", type=Path, help="write the result as JSON here")
    ap.add_argument("--check", action="store_true", help="exit 1 if a winner differs from the frozen settings")
    a = ap.parse_args(argv)
    if a.budget < 1 or a.workers < 1 or not a.seeds:
        ap.error("--budget and --workers must be >= 1 and --seeds non-empty")
    res = tune(a.methods, seeds=a.seeds, budget=a.budget, workers=a.workers)
    want = frozen()
    bad = []
    for m, r in res.items():
        same = want.get(m) == r["best"]
        bad += [] if same else [m]
        print(
            f"{m:14s} best {json.dumps(r['best'])}  score {r['score']:.3f}  reached {r['reached']}/{r['runs']}  "
            f"({r['n_configs']} settings)  frozen {'==' if same else '!='} {json.dumps(want.get(m))}"
        )
    if a.out:
        from components.io import write_json

        write_json(a.out, res)
    if a.check and bad:
        print(f"tune: the frozen settings differ from the search for {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
