"""vip's claims (card claims 1-4), declared once and decided from the numbers computed in the run.

Seeds are the top-level resampling unit (each seed is a trained policy); items within seeds are held-out
prompts (C1), steps (C2), prompt visits (C3) or the seed itself (C4).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from components.evaluation import claims as CL
from components.evaluation.claim_spec import ClaimSpec
from components.evaluation.power import attach_power
from components.vip.strategies import USED

NOTE = (
    "Mini scale: a 4-layer char-level LM on arithmetic tiers, Q=16, C=8Q; the paper uses Qwen2.5-Math 1.5-7B "
    "on DAPO-Math-17k and AIME."
)

CLAIMS = (
    ClaimSpec(
        "C1",
        "At the end of the equal rollout budget, VIP's held-out mean@k is higher than uniform Dr.GRPO's",
        metric="held-out mean@k difference",
        method="vip",
        baseline="uniform",
        direction="greater",
        unit="held-out prompts x seeds (two-stage: seeds, then prompts; paired)",
        paper_value="up to +12.3 Pass@32 (RLOO+VIP, 1.5B)",
        scale_note=NOTE,
    ),
    ClaimSpec(
        "C2",
        "VIP's per-step zero-variance group fraction is lower than uniform's",
        metric="zero-variance group fraction difference",
        method="vip",
        baseline="uniform",
        direction="less",
        unit="steps x seeds (two-stage; paired by step)",
        scale_note=NOTE,
    ),
    ClaimSpec(
        "C3",
        "The GP predictor is informative on rarely seen prompts: Spearman > 0 and lower Brier than a global mean",
        metric="Spearman / Brier difference",
        method="gp",
        baseline="global mean",
        rule="composite",
        direction=None,
        unit="prompt visits x seeds",
        scale_note=NOTE,
    ),
    ClaimSpec(
        "C4",
        "VIP needs fewer rollouts than DAPO-style filtering to reach uniform's final accuracy (exploratory)",
        metric="rollouts to threshold (share of budget)",
        method="vip",
        baseline="dapo",
        direction="less",
        unit="seeds (one threshold crossing per seed; censored if never reached)",
        scale_note=NOTE,
    ),
)
C1, C2, C3, C4 = CLAIMS
C3_SPEARMAN = C3.part(
    "spearman",
    "Spearman(p_hat, observed success) > 0 on prompts seen at most max_seen times",
    rule="ci-excludes",
    direction="greater",
    metric="Spearman rank correlation",
    baseline=None,
)
C3_BRIER = C3.part(
    "brier",
    "The GP's Brier score is lower than a global-mean predictor's",
    rule="standard",
    direction="less",
    metric="Brier difference (GP - global mean)",
)


def _kw(p):
    return {"seed": 1, "n_resamples": p.claims.n_resamples, "level": p.claims.level}


def final_counts(curves: list[dict], method: str, seed: int) -> np.ndarray:
    rows = [c for c in curves if c["method"] == method and c["seed"] == seed]
    return np.asarray(max(rows, key=lambda c: c["rollouts"])["counts"], float)


def claim1(p, curves, seeds, k) -> CL.ClaimResult:
    m, b, cl = [], [], []
    for s in seeds:
        vm, vb = final_counts(curves, "vip", s) / k, final_counts(curves, "uniform", s) / k
        m += vm.tolist()
        b += vb.tolist()
        cl += [s] * len(vm)
    result = C1.standard(method_values=m, baseline_values=b, clusters=cl, delta=p.claims.delta, **_kw(p))
    return with_power(p, result, C1, np.subtract(m, b), cl, p.claims.delta)


def claim2(p, steps, seeds) -> CL.ClaimResult:
    m, b, cl = [], [], []
    for s in seeds:
        vm = [r["zero_var_frac"] for r in steps if r["method"] == "vip" and r["seed"] == s]
        vb = [r["zero_var_frac"] for r in steps if r["method"] == "uniform" and r["seed"] == s]
        n = min(len(vm), len(vb))
        m, b, cl = m + vm[:n], b + vb[:n], cl + [s] * n
    result = C2.standard(method_values=m, baseline_values=b, clusters=cl, delta=p.claims.delta_zero_var, **_kw(p))
    return with_power(p, result, C2, np.subtract(m, b), cl, p.claims.delta_zero_var)


def with_power(p, result: CL.ClaimResult, spec: ClaimSpec, diffs, clusters, delta: float) -> CL.ClaimResult:
    """``result`` with its design's power unless reproduced: the paired differences with the observed effect
    removed and a planted one added, new seed effects, units redrawn, each run decided by the claim's rule."""
    c = p.claims
    return attach_power(
        result,
        spec,
        values=diffs,
        clusters=clusters,
        delta=delta,
        deltas=c.power_deltas,
        n_sim=c.power_sims,
        n_resamples=c.power_resamples,
        level=c.level,
        seed=11,
    )


def spearman_ci(p_hat, obs, clusters, n_resamples, level, seed=1):
    p_hat, obs, clusters = map(np.asarray, (p_hat, obs, clusters))
    if len(p_hat) < 3:
        return float("nan"), None, None
    point = float(spearmanr(p_hat, obs).statistic)
    labels = np.unique(clusters)
    members = [np.where(clusters == c)[0] for c in labels]
    rng = np.random.default_rng(seed)
    stats = []
    for _ in range(n_resamples):
        idx = np.concatenate(
            [rng.choice(members[j], size=len(members[j])) for j in rng.integers(0, len(labels), len(labels))]
        )
        r = spearmanr(p_hat[idx], obs[idx]).statistic
        if np.isfinite(r):
            stats.append(r)
    if not stats or not np.isfinite(point):
        return point, None, None
    a = (1 - level) / 2
    return point, float(np.quantile(stats, a)), float(np.quantile(stats, 1 - a))


def claim3(p, preds, seeds, key: str | None = None) -> CL.ClaimResult:
    """Scored on ``p_used``, the p the allocator was given (not a shadow recomputation), unless ``key`` names
    another column."""
    key = key or USED
    rows = [r for r in preds if r["method"] == "vip" and r["seen_before"] <= p.claims.max_seen and key in r]
    cl = [r["seed"] for r in rows]
    n_res = min(p.claims.n_resamples, 2000)
    point, lo, hi = spearman_ci([r[key] for r in rows], [r["observed"] for r in rows], cl, n_res, p.claims.level)
    signs, rhos = [], []
    for s in seeds:
        sub = [r for r in rows if r["seed"] == s]
        rho = spearmanr([r[key] for r in sub], [r["observed"] for r in sub]).statistic if len(sub) > 2 else 0.0
        signs.append(int(np.sign(rho)) if np.isfinite(rho) else 0)
        if len(sub) > 2 and np.isfinite(rho):
            rhos.append(float(rho))
    sp = C3_SPEARMAN.from_ci(
        effect=point,
        ci_low=lo,
        ci_high=hi,
        n_units=len(rows),
        n_seeds=len(set(cl)),
        per_seed_signs=signs,
        # the small-sample interval of the rule: a t-interval on each seed's own Spearman (hull with the bootstrap)
        seed_effects=rhos if len(rhos) == len(set(cl)) else None,
        details={"predictor": key, "resamples": n_res},
    )
    br = C3_BRIER.standard(
        method_values=[(r[key] - r["observed"]) ** 2 for r in rows],
        baseline_values=[(r["p_global-minilm"] - r["observed"]) ** 2 for r in rows],
        clusters=cl,
        delta=p.claims.delta_brier,
        details={"predictor": key},
        **_kw(p),
    )
    return C3.composite([sp, br], method="gp (the p it allocated with)" if key == USED else f"gp ({key[2:]})")


def rollouts_to(curve: list[dict], threshold: float) -> float | None:
    """First cumulative-rollout count where mean@k reaches ``threshold`` (linear interpolation), else None."""
    pts = sorted((c["rollouts"], c["mean@k"]) for c in curve)
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if y0 >= threshold:
            return float(x0)
        if y1 >= threshold:
            return float(x0 + (threshold - y0) / (y1 - y0) * (x1 - x0))
    return float(pts[0][0]) if pts[0][1] >= threshold else None


def claim4(p, curves, seeds, budget) -> CL.ClaimResult:
    """Rollouts to uniform's final accuracy, VIP vs DAPO, as a share of the budget (one value per seed).

    A seed where uniform's final accuracy does not rise above the common start (each method's first
    evaluation, the SFT policy) tells nothing: both methods "reach" it at their first evaluation. Such seeds
    are left out and counted (``details.no_progress``); with fewer than 2 seeds left the claim is not testable
    here (inconclusive, the reason in ``details.not_applicable``), never a tie at 0 rollouts.
    """
    m, b, cens, kept, detail = [], [], [], [], []
    for s in seeds:
        thr = final_counts(curves, "uniform", s).mean() / p.rl.eval_k
        own = {k: [c for c in curves if c["method"] == k and c["seed"] == s] for k in ("vip", "dapo")}
        start = max(min(own[k], key=lambda c: c["rollouts"])["mean@k"] for k in own)
        rv, rd = rollouts_to(own["vip"], thr), rollouts_to(own["dapo"], thr)
        detail.append({"seed": s, "threshold": thr, "start": start, "vip": rv, "dapo": rd, "progress": thr > start})
        if thr <= start:
            continue
        kept.append(s)
        cens.append(rv is None or rd is None)
        m.append((budget if rv is None else rv) / budget)
        b.append((budget if rd is None else rd) / budget)
    details = {"per_seed": detail, "budget": budget, "no_progress": len(seeds) - len(kept)}
    if len(kept) < 2:
        why = (
            f"uniform's final accuracy is not above the start (the SFT policy) on {len(seeds) - len(kept)} of "
            f"{len(seeds)} seeds, so every method reaches it at its first evaluation; fewer than 2 seeds remain"
        )
        return C4.from_ci(
            effect=None,
            ci_low=None,
            ci_high=None,
            delta=p.claims.delta_rollouts,
            n_units=len(kept),
            n_seeds=len(kept),
            ci_level=p.claims.level,
            details={**details, "not_applicable": why},
        )
    return C4.standard(
        method_values=m,
        baseline_values=b,
        clusters=kept,
        censored=cens,
        delta=p.claims.delta_rollouts,
        details=details,
        **_kw(p),
    )
