"""Claims 1-4 of the OFMU card, each decided by the card's rule on numbers computed in this run."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from components.evaluation import claims as CL
from components.unlearning.metrics import forget_quality, model_utility
from components.unlearning.utility_ci import utility_difference_ci

NOTE = ("Tiny LM (2 layers) on a synthetic TOFU and a digits MLP on 2 CPU cores, at a small matched budget; "
        "OFMU's beta, T, rho0 and c were set once, not swept (see the README).")
MU_SPLITS = ("retain", "general")


def index_items(items: list[dict]) -> dict:
    """(model, seed, split) -> {prob, rouge, tr} arrays in item order."""
    acc: dict = defaultdict(lambda: defaultdict(list))
    for r in items:
        for k in ("prob", "rouge", "tr"):
            acc[(r["model"], r["seed"], r["split"])][k].append(r[k])
    return {key: {k: np.asarray(v) for k, v in d.items()} for key, d in acc.items()}


def _splits(idx: dict, model: str, seed: int) -> dict:
    return {s: idx[(model, seed, s)] for s in MU_SPLITS}


def mu_of(idx: dict, model: str, seed: int) -> float:
    return model_utility(_splits(idx, model, seed))


def fq_of(idx: dict, model: str, seed: int) -> float:
    return forget_quality(idx[(model, seed, "forget")]["tr"], idx[("retain", -1, "forget")]["tr"])


def mu_diff_ci(idx, method, baseline, seeds, *, n_resamples, level, seed):
    """Mean over seeds of MU(method) - MU(baseline), with a bootstrap CI over questions (paired, per seed)."""
    pt, lo, hi, per_seed = utility_difference_ci([_splits(idx, method, s) for s in seeds],
                                                 [_splits(idx, baseline, s) for s in seeds],
                                                 n_resamples=n_resamples, level=level, seed=seed)
    n_units = sum(len(idx[(method, seeds[0], sp)]["prob"]) for sp in MU_SPLITS)
    return pt, lo, hi, per_seed, n_units


def _mu_claim(cid, statement, idx, method, baseline, seeds, direction, c, seed, details) -> CL.ClaimResult:
    pt, lo, hi, per_seed, n = mu_diff_ci(idx, method, baseline, seeds, n_resamples=c.n_resamples, level=c.level, seed=seed)
    return CL.ClaimResult(
        id=cid, statement=statement, metric="model utility difference", method=method, baseline=baseline,
        direction=direction, threshold=0.0, delta=c.delta_mu, effect=pt, ci_low=lo, ci_high=hi, ci_level=c.level,
        n_seeds=len(seeds), n_units=n, unit="retain + world-fact questions (resampled per seed, paired)",
        per_seed_signs=[int(np.sign(x)) for x in per_seed], rule="standard",
        verdict=CL.decide(lo, hi, direction=direction, delta=c.delta_mu), scale_note=NOTE,
        details={"per_seed": per_seed, "n_resamples": c.n_resamples, **details})


def claim1(p, idx) -> CL.ClaimResult:
    c, seeds = p.claims, p.unlearn.seeds
    mus = {m: float(np.mean([mu_of(idx, m, s) for s in seeds])) for m in ("graddiff", "npo")}
    best = max(mus, key=mus.get)
    part_a = _mu_claim("C1-MU", "", idx, "ofmu", best, seeds, "greater", c, 1, {})
    lf = [np.log10(max(fq_of(idx, "ofmu", s), 1e-300)) for s in seeds]
    lb = [np.log10(max(fq_of(idx, best, s), 1e-300)) for s in seeds]
    part_b = CL.evaluate_standard("C1-FQ", "", method_values=lf, baseline_values=lb, seeds=list(seeds),
                                  direction="greater", delta=0.0, threshold=-c.fq_margin_log10,
                                  metric="log10 FQ difference", method="ofmu", baseline=best, unit="seeds",
                                  seed=2, n_resamples=c.n_resamples, level=c.level)
    verdict = CL.combine_all([part_a.verdict, part_b.verdict])
    return CL.ClaimResult(
        id="C1", statement=f"Trade-off on forget{round(100 * p.data.forget_frac):02d}: OFMU has higher MU than the better "
        f"of GradDiff and NPO ({best}) at FQ no lower (log10 FQ margin {c.fq_margin_log10})",
        metric="MU(ofmu) - MU(best baseline); log10 FQ difference", method="ofmu", baseline=best, direction=None,
        threshold=None, delta=None, effect=part_a.effect, ci_low=part_a.ci_low, ci_high=part_a.ci_high,
        ci_level=c.level, n_seeds=len(seeds), n_units=part_a.n_units, unit=part_a.unit,
        per_seed_signs=part_a.per_seed_signs, rule="composite", verdict=verdict, scale_note=NOTE,
        details={"rule": "MU part: standard rule on the MU difference; FQ part: CI of the per-seed log10 FQ "
                 "difference above -margin; both must hold", "baseline_mu": mus,
                 "mu_part": part_a.to_dict(), "fq_part": part_b.to_dict()})


def claim2(p, idx) -> CL.ClaimResult:
    seeds = p.unlearn.seeds
    before = mu_of(idx, "base", -1)
    det = {"mu_before": before, "dmu_ga": [mu_of(idx, "ga", s) - before for s in seeds],
           "dmu_ofmu": [mu_of(idx, "ofmu", s) - before for s in seeds]}
    return _mu_claim("C2", "Stability: GA loses more utility than OFMU, dMU(GA) - dMU(OFMU) < 0 (from the "
                     "pre-unlearning model)", idx, "ga", "ofmu", seeds, "less", p.claims, 3, det)


def claim3(p, hist: list[dict]) -> CL.ClaimResult:
    c = p.claims
    a, b, labels = [], [], []
    for s in p.unlearn.seeds:
        ha = [abs(h["cos"]) for h in hist if h["method"] == "ofmu" and h["seed"] == s]
        hb = [abs(h["cos"]) for h in hist if h["method"] == "ofmu-beta0" and h["seed"] == s]
        n = min(len(ha), len(hb))
        half = n // 2
        a += ha[half:n]; b += hb[half:n]; labels += [s] * (n - half)
    return CL.evaluate_standard(
        "C3", "Mechanism: over the last half of training, mean |cos(g_f, g_r)| is lower for OFMU than for OFMU "
        "with beta = 0", method_values=a, baseline_values=b, seeds=labels, direction="less", delta=c.delta_cos,
        metric="mean |cos(g_f, g_r)| difference", method="ofmu", baseline="ofmu-beta0",
        unit="steps (last half, paired by step, stratified by seed)", seed=4, n_resamples=c.n_resamples,
        level=c.level, scale_note=NOTE, details={"mean_abs_cos_ofmu": float(np.mean(a)),
                                                 "mean_abs_cos_beta0": float(np.mean(b))})


def claim4(p, vruns: list[dict], vcorrect: list[dict]) -> CL.ClaimResult:
    c, parts, verdicts = p.claims, {}, []
    corr = {(r["scenario"], r["method"], r["seed"]): r["correct"] for r in vcorrect}
    for sc in p.vision.scenarios:
        a, b, labels = [], [], []
        for s in p.vision.seeds:
            a += corr[(sc, "ofmu", s)]; b += corr[(sc, "graddiff", s)]; labels += [s] * len(corr[(sc, "ofmu", s)])
        ta = CL.evaluate_standard(f"C4-{sc}", "", method_values=a, baseline_values=b, seeds=labels,
                                  direction="greater", delta=c.delta_acc, metric="TA difference", method="ofmu",
                                  baseline="graddiff", unit="test items x seeds", seed=5, n_resamples=c.n_resamples,
                                  level=c.level)
        band = [r["in_band"] for r in vruns if r["scenario"] == sc and r["method"] in ("ofmu", "graddiff")]
        frac = float(np.mean(band))
        bv = CL.decide_probability(frac, c.p_hi, c.p_lo)
        parts[sc] = {"ta": {k: ta.to_dict()[k] for k in ("effect", "ci_low", "ci_high", "verdict", "per_seed_signs")},
                     "in_band_fraction": frac, "band_verdict": bv}
        verdicts += [ta.verdict, bv]
    first = parts[p.vision.scenarios[0]]["ta"]
    return CL.ClaimResult(
        id="C4", statement=f"Vision (digits): OFMU's test accuracy is higher than GradDiff's at a UA within "
        f"+-{100 * c.ua_band:.0f} points of Retrain's UA", metric="TA(ofmu) - TA(graddiff) at the matched-UA checkpoint",
        method="ofmu", baseline="graddiff", direction=None, threshold=None, delta=None, effect=first["effect"],
        ci_low=None, ci_high=None, ci_level=c.level, n_seeds=len(p.vision.seeds),
        n_units=sum(len(v) for k, v in corr.items() if k[1] == "ofmu"), unit="test items x seeds per scenario",
        per_seed_signs=None, rule="composite", verdict=CL.combine_all(verdicts), scale_note=NOTE,
        details={"rule": "per scenario: standard rule on TA (delta 1 point) and the share of OFMU/GradDiff runs "
                 f"that reached the UA band (>= {c.p_hi} reproduced, <= {c.p_lo} not); all parts must hold",
                 "scenarios": parts})
