"""Claims 1-3 of the optimistic-o2nc card, each decided from ``runs.jsonl`` by its rule.

Clusters are the seeds: a seed draws the random start x0 (``components/optim/functions.py``,
``default_rng(10_000 + seed)``) and, at sigma > 0, the gradient-noise stream, for every function
and method alike. So even the sigma = 0 runs, whose oracle draws nothing, are random through x0,
and a claim over them needs two or more seeds. Functions and eps values are fixed by design:
strata. A run that did not reach eps (it spent its call budget, or diverged) is censored: its
call count is a lower bound, so a pair where either side is censored is counted and the verdict
must not rest on such pairs (two runs both at the cap are not a tie).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from components.errors import ParamsError
from components.evaluation import claims as CL
from components.evaluation.claim_spec import ClaimSpec
from components.evaluation.seed_ci import binomial_ci, t_interval
from components.evaluation.testability import Check

NOTE = (
    "Benign test functions on 2 CPU cores with a capped call budget: worst-case exponents need not show; "
    "a run that does not reach eps counts the calls it used and is censored (a verdict resting on censored "
    "runs is inconclusive)."
)
PAPER_C1 = "theory, no experiments: ODOG O(eps^-1.75) vs CMO23 O(eps^-1.75 log(1/eps)) gradient calls (deterministic)"
PAPER_C2 = "theory (paper note, secondary): the naive hint h = g_prev only achieves O(eps^-11/6), ODOG O(eps^-1.75)"
NOTE_C2 = (
    "A benchmark finding, not a test of the rate: the paper's statement is a worst-case bound (naive hint "
    "eps^-11/6 vs ODOG eps^-1.75) that benign functions at eps >= 1e-3 cannot show; what is measured is which "
    "hint needs fewer counted calls on these functions. Pairs with a run at the call cap are censored and "
    "counted (both at the cap: not a tie)."
)
PAPER_C3 = "theory, no experiments: O(eps^-1.75 + sigma^2 eps^-3.5), one algorithm for sigma = 0 and sigma > 0"

CLAIMS = (
    ClaimSpec(
        "C1",
        "ODOG needs fewer gradient calls than CMO23 (K ~ log(1/eps) fixed-point steps) at the two "
        "smallest eps on >= claims.min_functions functions",
        metric="mean log(N_odog / N_cmo23) per function",
        method="odog",
        baseline="cmo23",
        rule="composite",
        unit="(eps, seed) pairs",
        direction="less",
        paper_value=PAPER_C1,
        scale_note=NOTE,
    ),
    ClaimSpec(
        "C2",
        "ODOG (extrapolated hint) needs fewer calls than the naive hint h = g_prev at the smallest eps",
        metric="mean log(N_odog / N_naive)",
        method="odog",
        baseline="naive",
        unit="(function, seed) pairs",
        direction="less",
        paper_value=PAPER_C2,
        scale_note=NOTE_C2,
    ),
    ClaimSpec(
        "C3",
        "One algorithm for both settings: with sigma > 0 the unchanged ODOG reaches eps within the call "
        "cap in >= claims.success_rate of runs, and N rises with sigma",
        metric="success rate / Spearman(sigma, N)",
        method="odog",
        baseline=None,
        rule="composite",
        unit="noisy runs",
        direction=None,
        paper_value=PAPER_C3,
        scale_note=NOTE,
    ),
)
C1, C2, C3 = CLAIMS


def n_calls(r: dict) -> float:
    """Counted calls of a run: to reach eps, else the calls it used (the budget, or the call it diverged at)."""
    return float(r["calls"]) if r["reached"] else float(max(r["calls"], 1))


def index_runs(rows: list[dict]) -> dict:
    """{(grid, function, method, eps_rel, sigma_rel, seed): row}."""
    return {(r["grid"], r["function"], r["method"], r["eps_rel"], r["sigma_rel"], r["seed"]): r for r in rows}


def _pairs(rows, idx, f, a, b, eps_list) -> dict[str, list]:
    """Deterministic-grid runs of method ``a`` and ``b`` paired by (eps, seed): log calls, labels, censoring."""
    out: dict[str, list] = defaultdict(list)
    for e in eps_list:
        for r in rows:
            if r["grid"] == "det" and r["function"] == f and r["method"] == a and r["eps_rel"] == e:
                other = idx.get(("det", f, b, e, 0.0, r["seed"]))
                if other is not None:
                    out["a"].append(np.log(n_calls(r)))
                    out["b"].append(np.log(n_calls(other)))
                    out["seed"].append(r["seed"])
                    out["eps"].append(e)
                    out["function"].append(f)
                    out["censored"].append(not (r["reached"] and other["reached"]))
                    out["both_censored"].append(not r["reached"] and not other["reached"])
                    out["method_censored"].append(not r["reached"])  # the verdict must not rest on these
                    out["baseline_bound"].append(bool(r["reached"] and not other["reached"]))  # a lower bound
    return out


def censoring(pr: dict) -> dict:
    """How many pairs are censored: either run unreached, and both (both at the cap: not a tie, no information)."""
    n, both = int(sum(pr["censored"])), int(sum(pr["both_censored"]))
    return {
        "censored_pairs": n,
        "both_at_cap_pairs": both,
        "one_side_censored_pairs": n - both,
        "uncensored_pairs": len(pr["censored"]) - n,
    }


def variant_summary(rows, idx, f, variant: str, eps_list) -> dict | None:
    """Report-only: ODOG against a named variant on the same pairs (mean log-ratio, median ratio, censoring)."""
    pr = _pairs(rows, idx, f, "odog", variant, eps_list)
    if not pr["a"]:
        return None
    d = np.subtract(pr["a"], pr["b"])
    keep = ~np.asarray(pr["censored"], bool)
    return {
        "mean_log_ratio": float(d.mean()),
        "median_ratio": float(np.median(np.exp(d))),
        "mean_log_ratio_uncensored": float(d[keep].mean()) if keep.any() else None,
        **censoring(pr),
    }


def calls_per_iteration(rows, method: str) -> dict:
    """{eps: counted calls per outer iteration} of ``method`` in the deterministic grid (CMO23: K + 1)."""
    out = {}
    for r in rows:
        if r["grid"] == "det" and r["method"] == method and "calls_per_iteration" in r:
            out[r["eps_rel"]] = r["calls_per_iteration"]
    return dict(sorted(out.items(), reverse=True))


def _log_ratio(spec: ClaimSpec, pr: dict, p, *, strata: str, details: dict, **changes) -> CL.ClaimResult:
    """Standard rule ``less`` on paired log(N_odog) - log(N_baseline): seeds clustered, ``strata`` fixed."""
    c = p.claims
    if not pr["a"]:
        return spec.from_ci(
            effect=None,
            ci_low=None,
            ci_high=None,
            delta=c.delta_log_ratio,
            n_units=0,
            n_seeds=0,
            cluster_unit=None,
            ci_level=c.level,
            details={**details, "not_applicable": "no paired runs in this grid"},
            **changes,
        )
    ratio = np.exp(np.subtract(pr["a"], pr["b"]))
    return spec.standard(
        method_values=pr["a"],
        baseline_values=pr["b"],
        clusters=pr["seed"],
        strata=pr[strata],
        censored=pr["method_censored"],
        censored_bound=pr["baseline_bound"],  # the baseline's count to reach eps is at least its capped count
        delta=c.delta_log_ratio,
        seed=p.seed,
        n_resamples=c.n_resamples,
        level=c.level,
        details={**details, "median_ratio": float(np.median(ratio)), **censoring(pr)},
        **changes,
    )


def at_least(spec: ClaimSpec, parts: list[CL.ClaimResult], k: int, **numbers) -> CL.ClaimResult:
    """ "At least ``k`` of the parts are reproduced" (the core's ``at_least`` composite)."""
    if not 1 <= k <= len(parts):
        raise ParamsError(f"{spec.id}: need 1 <= k <= {len(parts)} parts, got k = {k}")
    return spec.composite(parts, how="at_least", min_parts=k, headline=None, **numbers)


def claim1(p, rows, idx) -> CL.ClaimResult:
    g, c = p.grid, p.claims
    small = sorted(g.eps)[:2]
    parts = [
        _log_ratio(
            C1.part(
                f,
                f"{f}: ODOG needs fewer calls than CMO23 at eps in {small}",
                rule="standard",
                metric="mean log(N_odog / N_cmo23)",
                paper_value=None,
            ),
            _pairs(rows, idx, f, "odog", "cmo23", small),
            p,
            strata="eps",
            details={"function": f, "eps": small},
        )
        for f in g.functions
    ]
    need = min(c.min_functions, len(g.functions))
    variant = (
        {f: variant_summary(rows, idx, f, "cmo23-k2", small) for f in g.functions} if "cmo23-k2" in g.methods else None
    )
    return at_least(
        C1,
        parts,
        need,
        statement=f"ODOG needs fewer gradient calls than CMO23 at the two smallest eps on >= {need} functions",
        details={
            "rule": f"reproduced iff the CI of the mean log-ratio lies below 0 (and outside +-delta) on >= "
            f"{need} of {len(parts)} functions",
            "eps": small,
            "functions": {
                q.details["function"]: {
                    "effect": q.effect,
                    "ci_low": q.ci_low,
                    "ci_high": q.ci_high,
                    "verdict": q.verdict,
                    "median_ratio": q.details.get("median_ratio"),
                    "censored": q.n_censored,
                    "n_units": q.n_units,
                }
                for q in parts
            },
            "cmo23_calls_per_iteration": calls_per_iteration(rows, "cmo23"),
            "odog_calls_per_iteration": calls_per_iteration(rows, "odog"),
            "variant_cmo23_k2 (report only, K = 2 fixed)": variant,
        },
    )


def claim2(p, rows, idx) -> CL.ClaimResult:
    e = min(p.grid.eps)
    pr: dict[str, list] = defaultdict(list)
    for f in p.grid.functions:
        for k, v in _pairs(rows, idx, f, "odog", "naive-hint", [e]).items():
            pr[k] += v
    r = _log_ratio(
        C2,
        pr,
        p,
        strata="function",
        details={"functions": list(p.grid.functions), "eps": e},
        statement=f"ODOG (extrapolated hint) needs fewer calls than the naive hint h = g_prev at the "
        f"smallest eps ({e})",
    )
    r.details["finding"] = c2_finding(r)
    return r


def c2_finding(r: CL.ClaimResult) -> str:
    """C2's result worded as what it is: a benchmark finding on benign functions, with its censored count."""
    d = r.details
    if r.effect is None:
        return "no paired runs"
    cheaper = "the naive hint is cheaper" if r.effect > 0 else "ODOG's extrapolated hint is cheaper"
    return (
        f"benchmark finding, not evidence about the paper's worst-case rate: on these benign functions, counting "
        f"calls, {cheaper} at eps = {d['eps']} (mean log-ratio {r.effect:+.3f}, median ratio "
        f"{d['median_ratio']:.3f}); {d['censored_pairs']} of {r.n_units} pairs censored ({d['both_at_cap_pairs']} "
        f"with both runs at the call cap, {d['one_side_censored_pairs']} with one), {d['uncensored_pairs']} "
        f"uncensored"
        + (f" (their CI [{r.uncensored['ci_low']:+.3f}, {r.uncensored['ci_high']:+.3f}])" if r.uncensored else "")
    )


def weighted_spearman(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Spearman(x, y) of the rows repeated by integer weights ``w`` (resamples x rows), one per resample.

    Equal to ``scipy.stats.spearmanr`` on the repeated rows (mid-ranks for ties); 0 where it is undefined
    (a constant side, or at most two rows), as the report always counted it.
    """

    def ranks(v: np.ndarray) -> np.ndarray:
        below = (v[None, :] < v[:, None]) + 0.5 * (v[None, :] == v[:, None])  # [i, j]: row j below row i
        return w @ below.T + 0.5

    rx, ry, n = ranks(x), ranks(y), w.sum(axis=1)
    mx, my = (w * rx).sum(axis=1) / n, (w * ry).sum(axis=1) / n
    dx, dy = rx - mx[:, None], ry - my[:, None]
    vx, vy = (w * dx * dx).sum(axis=1), (w * dy * dy).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (w * dx * dy).sum(axis=1) / np.sqrt(vx * vy)
    return np.where(np.isfinite(rho) & (n > 2) & (vx > 1e-12) & (vy > 1e-12), rho, 0.0)


def spearman_by_seed(runs: list[dict], seeds: list, n_resamples: int, seed: int) -> tuple[float, np.ndarray]:
    """(mean over functions of Spearman(sigma, N), its bootstrap samples): seeds drawn with replacement, one draw
    shared by every function (a seed's start and noise stream serve every function); functions are strata."""
    draws = np.random.default_rng(seed).integers(0, len(seeds), size=(n_resamples, len(seeds)))
    counts = np.stack([np.bincount(d, minlength=len(seeds)) for d in draws]).astype(float)
    pos = {s: i for i, s in enumerate(seeds)}
    by_f: dict = defaultdict(list)
    for r in runs:
        by_f[r["function"]].append(r)
    point, boots = [], []
    for rs in by_f.values():
        x = np.array([r["sigma_rel"] for r in rs])
        y = np.array([n_calls(r) for r in rs])
        col = np.array([pos[r["seed"]] for r in rs])
        point.append(weighted_spearman(x, y, np.ones((1, len(rs))))[0])
        boots.append(weighted_spearman(x, y, counts[:, col]))
    if not boots:
        return 0.0, np.zeros(n_resamples)
    return float(np.mean(point)), np.mean(boots, axis=0)


def claim3(p, rows, idx) -> CL.ClaimResult:
    """Composite "all" of (a) the success rate of the noisy ODOG runs and (b) Spearman(sigma, N) > 0.

    (a) The card: "with sigma > 0, the unchanged ODOG code reaches eps within the cap in >= 90% of runs". The
    rate is a mean over runs drawn through the seeds (start and noise stream), so it is decided like every sampled
    claim: standard rule on its seed-clustered bootstrap CI ((function, sigma) cells as strata) against the
    threshold ``claims.success_rate`` -- reproduced iff the CI lies above it, not reproduced iff below, else
    inconclusive. No lower cut is invented. An unreached run is a failure, not a censored unit (the cap is part
    of the claim). (b) unchanged. The card's third part ("at sigma = 0 it matches the deterministic count
    within 5%") is not decided: at sigma = 0 the oracle draws nothing, so the noisy-grid run repeats the
    deterministic one call for call and the part could not fail; ``details.sigma0_identical`` still reports it.
    """
    g, c = p.grid, p.claims
    st = [r for r in rows if r["grid"] == "stoch" and r["method"] == "odog"]
    noisy = [r for r in st if r["sigma_rel"] > 0]
    seeds = sorted({r["seed"] for r in st})
    by_sigma = {
        s: [int(r["reached"]) for r in noisy if r["sigma_rel"] == s] for s in sorted({r["sigma_rel"] for r in noisy})
    }
    part_a_spec = C3.part(
        "success",
        f"with sigma > 0 ODOG reaches eps within the cap ({g.stoch_budget:,} calls) in >= {c.success_rate:.0%} of runs",
        rule="standard",
        direction="greater",
        metric="success rate (sigma > 0)",
        unit="noisy runs",
        paper_value=None,
    )
    details_a = {
        "cap": g.stoch_budget,
        "n_runs": len(noisy),
        "reached": int(sum(r["reached"] for r in noisy)),
        "success_rate": c.success_rate,
        "rule": "seed-bootstrap CI of the success rate vs claims.success_rate (no lower cut)",
        "reached_by_sigma": {str(s): f"{sum(v)}/{len(v)}" for s, v in by_sigma.items()},
    }
    if noisy:
        part_a = part_a_spec.standard(
            method_values=[float(r["reached"]) for r in noisy],
            baseline_values=[0.0] * len(noisy),
            clusters=[r["seed"] for r in noisy],
            strata=[f"{r['function']}/{r['sigma_rel']}" for r in noisy],
            threshold=c.success_rate,
            delta=0.0,
            seed=p.seed,
            n_resamples=c.n_resamples,
            level=c.level,
            details=details_a,
        )
        # the grid fixes the rate on every seed (every run reached, or 11 of 12 cells on each seed): the seed-level
        # CI has zero width up to rounding (a strata-weighted mean of ones is 0.9999999999999997), so the rate's CI
        # comes from its own units
        if part_a.ci_low is not None and abs(part_a.ci_high - part_a.ci_low) <= 1e-9:
            k, n = details_a["reached"], len(noisy)
            b_lo, b_hi = binomial_ci(k, n, c.level)
            part_a = part_a_spec.from_ci(
                effect=k / n,
                ci_low=b_lo,
                ci_high=b_hi,
                delta=0.0,
                threshold=c.success_rate,
                n_units=n,
                n_seeds=len({r["seed"] for r in noisy}),
                ci_level=c.level,
                details={
                    **details_a,
                    "interval": f"exact binomial (Clopper-Pearson) on {k} of {n} runs: the seed-level CI had "
                    f"zero width ({part_a.ci_low:.4f} on every seed), the rate being fixed by the grid",
                },
                power_reason="the rate is fixed by the grid on every seed: a planted effect would need a new grid",
            )
    else:
        part_a = part_a_spec.from_ci(
            effect=None,
            ci_low=None,
            ci_high=None,
            delta=0.0,
            threshold=c.success_rate,
            n_units=0,
            n_seeds=0,
            cluster_unit=None,
            ci_level=c.level,
            details={**details_a, "not_applicable": "no noisy runs in this grid"},
        )
    rho, boots = spearman_by_seed(st, seeds, c.n_resamples, p.seed)
    lo, hi = np.quantile(boots, [(1 - c.level) / 2, (1 + c.level) / 2])
    kept = [r for r in st if r["reached"]]
    n_cens = len(st) - len(kept)
    uncensored = None
    if n_cens and kept:
        kept_seeds = sorted({r["seed"] for r in kept})
        _, ub = spearman_by_seed(kept, kept_seeds, c.n_resamples, p.seed)
        ulo, uhi = np.quantile(ub, [(1 - c.level) / 2, (1 + c.level) / 2])
        # the same seed-level CI as the claim's own: the hull with a t-interval on the kept runs' per-seed effects
        kept_effects = [spearman_by_seed([r for r in kept if r["seed"] == s], [s], 1, p.seed)[0] for s in kept_seeds]
        small = t_interval(kept_effects, c.level)
        if small is not None:
            ulo, uhi = min(ulo, small[0]), max(uhi, small[1])
        # n_seeds: a seed-level verdict without the censored runs needs >= 2 seeds left
        uncensored = {"ci_low": float(ulo), "ci_high": float(uhi), "n_units": len(kept), "n_seeds": len(kept_seeds)}
    part_b = C3.part(
        "monotone",
        "N(eps) rises with sigma (Spearman > 0)",
        rule="standard",
        direction="greater",
        metric="mean over functions of Spearman(sigma, N)",
        unit="runs (sigma levels x seeds)",
        paper_value=None,
    ).from_ci(
        effect=rho,
        ci_low=float(lo),
        ci_high=float(hi),
        delta=c.delta_spearman,
        n_units=len(st),
        n_seeds=len(seeds),
        ci_level=c.level,
        seed_effects=[spearman_by_seed([r for r in st if r["seed"] == s], [s], 1, p.seed)[0] for s in seeds],
        n_censored=n_cens,
        uncensored=uncensored,
        details={
            "n_resamples": c.n_resamples,
            "bootstrap_seed": p.seed,
            "resampling": "seeds (functions as strata)",
            "sigmas": list(g.sigmas),
        },
    )
    same, n0, within = 0, 0, 0
    for r in st:
        if r["sigma_rel"] == 0.0:
            d = idx.get(("det", r["function"], "odog", r["eps_rel"], 0.0, r["seed"]))
            if d is not None:
                n0 += 1
                same += int(d["calls"] == r["calls"] and d["reached"] == r["reached"])
                within += int(abs(r["calls"] - d["calls"]) <= 0.05 * max(d["calls"], 1))
    # card part (c): "at sigma = 0 it matches the deterministic count within 5%". Declared, with its testability
    # precondition: the sigma = 0 noisy run must differ from the deterministic one in some way (the oracle draws
    # noise). At sigma = 0 it draws nothing, so the run repeats the deterministic one call for call wherever both
    # reach eps, and the part cannot fail: not testable here (inconclusive), with the counts in its record.
    differ = n0 - same
    part_c = C3.part(
        "sigma0",
        "at sigma = 0 the noisy-grid ODOG matches the deterministic count within 5%",
        rule="check",
        direction=None,
        metric="share of sigma = 0 runs within 5% of the deterministic count",
        unit="(function, seed) runs at sigma = 0",
        cluster_unit=None,
        paper_value=None,
    ).simple(
        rule="check",
        effect=float(within / n0) if n0 else None,
        n_units=n0,
        n_seeds=len(seeds),
        details={
            "passed": bool(n0) and within == n0,
            "within_5pct": f"{within}/{n0}",
            "identical_pairs": f"{same}/{n0}",
            "why_not_testable": "the noisy oracle draws no noise at sigma = 0, so the noisy-grid run is the "
            "deterministic run repeated (differences only where the two caps differ); the 5% match cannot fail",
        },
        testability=[
            Check(
                "noise engaged at sigma = 0",
                False,
                f"the oracle draws nothing at sigma = 0: {same} of {n0} sigma = 0 runs repeat the deterministic "
                f"run call for call ({differ} differ only through the caps: deterministic "
                f"{g.budget_for(g.sigma_eps):,}, noisy {g.stoch_budget:,})",
            )
        ],
    )
    return C3.composite(
        [part_a, part_b, part_c],
        statement=f"One algorithm for both settings: with sigma > 0 the unchanged ODOG reaches eps "
        f"within the cap ({g.stoch_budget:,} calls) in >= {c.success_rate:.0%} of runs, and N rises with sigma",
        how="all",
        headline=1,
        ci_level=c.level,
        details={
            "eps": g.sigma_eps,
            "cap": g.stoch_budget,
            "noise": g.noise,
            "sigma0_identical (report only)": f"{same}/{n0}",
        },
    )


def all_claims(p, rows: list[dict]) -> list[CL.ClaimResult]:
    idx = index_runs(rows)
    return [claim1(p, rows, idx), claim2(p, rows, idx), claim3(p, rows, idx)]
