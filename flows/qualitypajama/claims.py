"""The card's four claims, each decided by its rule from the fits computed in this run.

Comparisons are made through ``components.evaluation.scaling_claims``; this module
only says which comparisons each claim names and how sub-verdicts combine:
a claim that says "for at least one intervention/pair" is reproduced when any
comparison reproduces it, not reproduced when every comparison rejects it, and
inconclusive otherwise.
"""

from __future__ import annotations

import math

import numpy as np

from components.evaluation import scaling_claims as S
from components.evaluation.claims import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    ClaimResult,
    combine_any,
    decide_excludes,
    decide_probability,
)


def _decisive(subs: list[dict], verdict: str) -> dict:
    """The comparison that stands for the claim: one with the claim's verdict, furthest from 0 in CI widths."""
    same = [s for s in subs if s["verdict"] == verdict] or subs

    def strength(s: dict) -> float:
        z = abs(s["effect"]) / max(s["ci_high"] - s["ci_low"], 1e-12)
        return z if math.isfinite(z) else -math.inf

    return max(same, key=strength)


def _finite(*xs: float) -> bool:
    return all(x is not None and math.isfinite(x) for x in xs)


def _base(cid: str, statement: str, metric: str, n_units: int, note: str, **kw) -> ClaimResult:
    return ClaimResult(id=cid, statement=statement, metric=metric, n_seeds=1, n_units=n_units, unit="bootstrap refits",
                       per_seed_signs=None, ci_level=kw.pop("level"), scale_note=note, **kw)


def claim_exponents(fits, samples, baseline, targets, *, delta, level, note) -> ClaimResult:
    subs = []
    for name in targets:
        deltas = S.param_deltas(samples[name], samples[baseline], fits[name]["full"], fits[baseline]["full"], level=level)
        for exp in ("alpha", "beta"):
            d = deltas[exp]
            ok = _finite(d["ci_low"], d["ci_high"])
            verdict = decide_excludes(d["ci_low"], d["ci_high"], delta=delta) if ok else INCONCLUSIVE
            subs.append({"intervention": name, "parameter": exp, **d, "verdict": verdict, "usable_fits": ok})
    verdict = combine_any([s["verdict"] for s in subs])
    pick = _decisive(subs, verdict)
    rule = "ci-excludes" if _finite(pick["effect"], pick["ci_low"], pick["ci_high"]) else "composite"
    return _base(
        "C1", "Exponents move: for MinHash dedup or the QA mix vs raw, the CI of Δalpha or Δbeta excludes 0.",
        f"Δ{pick['parameter']} ({pick['intervention']} − {baseline})", len(samples[baseline]), note,
        method=pick["intervention"], baseline=baseline, direction="two-sided", threshold=0.0, delta=delta,
        effect=pick["effect"], ci_low=pick["ci_low"], ci_high=pick["ci_high"], rule=rule, verdict=verdict,
        level=level, details={"comparisons": subs, "combination": "any comparison"},
    )


def _opposing(deltas: dict, d_exp: float, d_log: float) -> tuple[str, dict]:
    classes = {k: S.classify(v, k) for k, v in deltas.items()}
    inside = all(
        -(d_log if k in S.LOG_PARAMS else d_exp) < v["ci_low"] and v["ci_high"] < (d_log if k in S.LOG_PARAMS else d_exp)
        for k, v in deltas.items()
    )
    found = set(classes.values())
    if {"improved", "worsened"} <= found:
        return REPRODUCED, classes
    if inside or (len(found) == 1 and "unclear" not in found):
        return NOT_REPRODUCED, classes
    return INCONCLUSIVE, classes


def claim_opposing(fits, samples, baseline, others, *, d_exp, d_log, level, note) -> ClaimResult:
    subs = []
    for name in others:
        deltas = S.param_deltas(samples[name], samples[baseline], fits[name]["full"], fits[baseline]["full"], level=level)
        verdict, classes = _opposing(deltas, d_exp, d_log)
        subs.append({"intervention": name, "verdict": verdict, "classes": classes, "deltas": deltas})
    verdict = combine_any([s["verdict"] for s in subs])
    hits = [s["intervention"] for s in subs if s["verdict"] == REPRODUCED]
    return _base(
        "C2", "Opposing forces: for at least one intervention one scaling-law component improves while another worsens (both CIs exclude 0).",
        "components improved and worsened vs baseline", len(samples[baseline]), note,
        method=", ".join(hits) or ", ".join(others), baseline=baseline, direction=None, threshold=None, delta=d_exp,
        effect=float(len(hits)), ci_low=None, ci_high=None, rule="composite", verdict=verdict, level=level,
        details={"comparisons": subs, "effect_is": "number of interventions with opposing significant changes",
                 "delta_log_coefficients": d_log},
    )


def claim_reversal(samples, names, c_small, c_big, *, level, note) -> ClaimResult:
    subs = [{"pair": [a, b], **S.reversal_probability(samples[a], samples[b], c_small, c_big)} for a, b in S.pairs(names)]
    pick = max(subs, key=lambda s: s["p"] if math.isfinite(s["p"]) else -1.0)
    verdict = decide_probability(pick["p"]) if math.isfinite(pick["p"]) else INCONCLUSIVE
    return _base(
        "C3", "Rank reversal: two interventions' loss order at the smallest trained compute differs from their order projected at the target compute.",
        f"P(reversal) between {c_small:.2e} and {c_big:.2e} FLOPs", pick["draws"], note,
        method=pick["pair"][0], baseline=pick["pair"][1], direction=None, threshold=0.95, delta=None,
        effect=pick["p"], ci_low=None, ci_high=None, rule="probability" if math.isfinite(pick["p"]) else "composite", verdict=verdict, level=level,
        details={"pairs": subs, "note": "the pair with the highest reversal probability stands for the claim"},
    )


def claim_allocation(fits, samples, names, c_target, *, ratio, level, note) -> ClaimResult:
    log_r = math.log(ratio)
    subs = []
    for a, b in S.pairs(names):
        r = S.log_allocation_ratio(samples[a], samples[b], fits[a]["full"], fits[b]["full"], c_target, level=level)
        if r["effect"] < 0:  # orient so the larger D/N is first
            a, b, r = b, a, {**r, "effect": -r["effect"], "ci_low": -r["ci_high"], "ci_high": -r["ci_low"]}
        lo, hi = r["ci_low"], r["ci_high"]
        if not _finite(lo, hi):
            verdict = INCONCLUSIVE
        else:
            verdict = REPRODUCED if lo > log_r else NOT_REPRODUCED if (-log_r < lo and hi < log_r) else INCONCLUSIVE
        subs.append({"pair": [a, b], **r, "ratio": float(np.exp(r["effect"])), "verdict": verdict})
    verdict = combine_any([s["verdict"] for s in subs])
    pick = _decisive(subs, verdict)
    return _base(
        "C4", f"Different allocation: the compute-optimal D/N of two interventions differs by ≥{ratio:g}× (CI of the log ratio excludes log {ratio:g}).",
        f"log[(D/N)_{pick['pair'][0]} / (D/N)_{pick['pair'][1]}] at {c_target:.2e} FLOPs", pick["draws"], note,
        method=pick["pair"][0], baseline=pick["pair"][1], direction="greater", threshold=log_r, delta=None,
        effect=pick["effect"], ci_low=pick["ci_low"], ci_high=pick["ci_high"], rule="composite", verdict=verdict, level=level,
        details={"pairs": subs, "combination": "any pair"},
    )
