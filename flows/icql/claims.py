"""Claims 1-4 of the icql card, each decided from this run's evaluation numbers.

C1-C3 pair evaluation episodes across methods by (seed, episode): every method was
rolled out from the same reset seeds. C4 bootstraps dataset trajectories for the
difference of Spearman(Q-hat, G) between ICQL and IQL (mean over seeds).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from scipy.stats import rankdata

from components.evaluation import claims as CL

NOTE = ("Kitchen-lite stand-in at laptop scale (small networks, ~1k gradient steps, 3 seeds); the paper's D4RL "
        "Kitchen/Gym/Adroit numbers are not comparable.")


def scores_by(episodes: list[dict]) -> dict:
    """{(task, method): {(seed, episode): score}}."""
    out: dict = defaultdict(dict)
    for e in episodes:
        out[(e["task"], e["method"])][(e["seed"], e["episode"])] = e["score"]
    return out


def _paired(s: dict, a: tuple, b: tuple) -> tuple[list, list, list]:
    keys = sorted(set(s.get(a, {})) & set(s.get(b, {})))
    return [s[a][k] for k in keys], [s[b][k] for k in keys], [k[0] for k in keys]


def _missing(cid: str, statement: str, method: str, baseline: str, what: str) -> CL.ClaimResult:
    return CL.ClaimResult(id=cid, statement=statement, metric="normalised score", method=method, baseline=baseline,
                          direction=None, threshold=None, delta=None, effect=None, ci_low=None, ci_high=None,
                          ci_level=None, n_seeds=0, n_units=0, unit="(seed, episode) pairs", per_seed_signs=None,
                          rule="composite", verdict=CL.INCONCLUSIVE, scale_note=NOTE,
                          details={"missing": f"{what} not run in this profile"})


def compare(p, s: dict, cid: str, statement: str, a: tuple, b: tuple) -> CL.ClaimResult:
    """Standard rule on paired per-episode normalised scores of run group ``a`` minus ``b``."""
    va, vb, seeds = _paired(s, a, b)
    name = lambda t: f"{t[1]} ({t[0]} subtask{'s' if t[0] > 1 else ''})"  # noqa: E731
    if not va:
        return _missing(cid, statement, name(a), name(b), f"{name(a)} or {name(b)}")
    return CL.evaluate_standard(cid, statement, method_values=va, baseline_values=vb, seeds=seeds,
                                direction="greater", delta=p.claims.delta_score, metric="normalised score",
                                method=name(a), baseline=name(b), unit="(seed, episode) pairs", seed=p.seed,
                                n_resamples=p.claims.n_resamples, level=p.claims.level, scale_note=NOTE,
                                details={"method_mean": float(np.mean(va)), "baseline_mean": float(np.mean(vb))})


def claim2(p, s: dict) -> CL.ClaimResult:
    st = "The ICQL - IQL gap is larger with 4 subtasks than with 1 (interaction)"
    i4, q4, sd = _paired(s, (4, "icql"), (4, "iql"))
    i1, q1, sd1 = _paired(s, (1, "icql"), (1, "iql"))
    if not i4 or not i1 or sd != sd1:
        return _missing("C2", st, "icql - iql (4 subtasks)", "icql - iql (1 subtask)", "icql/iql on both tasks")
    gap4, gap1 = np.subtract(i4, q4), np.subtract(i1, q1)
    return CL.evaluate_standard("C2", st, method_values=gap4, baseline_values=gap1, seeds=sd, direction="greater",
                                delta=p.claims.delta_score, metric="normalised-score gap (ICQL - IQL)",
                                method="icql - iql (4 subtasks)", baseline="icql - iql (1 subtask)",
                                unit="(seed, episode) pairs", seed=p.seed, n_resamples=p.claims.n_resamples,
                                level=p.claims.level, scale_note=NOTE,
                                details={"gap4": float(gap4.mean()), "gap1": float(gap1.mean())})


def _spearman_rows(q: np.ndarray, g_rank: np.ndarray) -> float:
    r = rankdata(q)
    c = np.corrcoef(r, g_rank)[0, 1]
    return float(c) if np.isfinite(c) else 0.0


def claim4(p, qdata: dict | None, seeds: list[int], task: int = 4) -> CL.ClaimResult:
    """Spearman(Q-hat, G): ICQL minus IQL, mean over seeds; percentile bootstrap over trajectories."""
    st = f"ICQL's Q-hat ranks dataset returns better than IQL's (Spearman with Monte-Carlo G, {task} subtasks)"
    names = [(f"t{task}-icql-s{s}", f"t{task}-iql-s{s}") for s in seeds]
    if qdata is None or any(a not in qdata or b not in qdata for a, b in names):
        return _missing("C4", st, "icql", "iql", "icql/iql critics")
    ep, g = qdata["episode"], qdata["G"]

    def stat(rows: np.ndarray) -> float:
        gr = rankdata(g[rows])
        return float(np.mean([_spearman_rows(qdata[a][rows], gr) - _spearman_rows(qdata[b][rows], gr)
                              for a, b in names]))

    uniq = np.unique(ep)
    by_ep = [np.flatnonzero(ep == e) for e in uniq]
    rng = np.random.default_rng(p.seed)
    boots = [stat(np.concatenate([by_ep[i] for i in rng.integers(0, len(uniq), len(uniq))]))
             for _ in range(p.claims.q_resamples)]
    lo, hi = np.quantile(boots, [(1 - p.claims.level) / 2, (1 + p.claims.level) / 2])
    point = stat(np.arange(len(g)))
    verdict = CL.decide(float(lo), float(hi), direction="greater", delta=p.claims.delta_spearman)
    per_seed = {f"seed {s}": {"icql": _spearman_rows(qdata[a], rankdata(g)), "iql": _spearman_rows(qdata[b], rankdata(g))}
                for s, (a, b) in zip(seeds, names)}
    signs = [int(np.sign(v["icql"] - v["iql"])) for v in per_seed.values()]
    return CL.ClaimResult(id="C4", statement=st, metric="Spearman(Q-hat, G) difference", method="icql",
                          baseline="iql", direction="greater", threshold=0.0, delta=p.claims.delta_spearman,
                          effect=point, ci_low=float(lo), ci_high=float(hi), ci_level=p.claims.level,
                          n_seeds=len(seeds), n_units=len(uniq), unit="dataset trajectories (bootstrap)",
                          per_seed_signs=signs, rule="standard", verdict=verdict, scale_note=NOTE,
                          details={"per_seed": per_seed, "n_resamples": p.claims.q_resamples,
                                   "transitions": int(len(g))})


def all_claims(p, episodes: list[dict], qdata: dict | None) -> list[CL.ClaimResult]:
    s = scores_by(episodes)
    return [
        compare(p, s, "C1", "ICQL's normalised score is higher than IQL's on the 4-subtask task", (4, "icql"),
                (4, "iql")),
        claim2(p, s),
        compare(p, s, "C3", "State-similar retrieval scores higher than random retrieval (4 subtasks)",
                (4, "icql"), (4, "icql-random")),
        claim4(p, qdata, list(p.train.seeds)),
    ]
