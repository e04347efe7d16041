"""Claims 1-4 of the NeuralDB card, each decided from this run's per-fact and per-window values.

Units are paired across methods: the same edited facts (the first m requests of a seed) or the same held-out
windows, pooled over seeds with the bootstrap stratified by seed (``evaluate_standard``).
"""

from __future__ import annotations

import numpy as np

from components.evaluation import claims as CL

NOTE = ("Tiny LM (a few layers, d_ff keys) on synthetic facts with Austen filler, on 2 shared CPU cores; the paper "
        "edits GPT-2 XL, GPT-J and Llama-3-8B on CounterFact/ZsRE. A verdict says whether the effect shows here.")


def index(rows: list[dict]) -> dict:
    return {(r["seed"], r["m"], r["method"]): r for r in rows}


def paired(idx: dict, seeds, m: int, a: str, b: str, key: str, first: int | None = None):
    """Finite paired values of ``key`` for methods a and b at m, with the seed of each unit."""
    va, vb, labels = [], [], []
    for s in seeds:
        x = np.asarray(idx[(s, m, a)][key], float)[:first]
        y = np.asarray(idx[(s, m, b)][key], float)[:first]
        ok = np.isfinite(x) & np.isfinite(y)
        va += x[ok].tolist(); vb += y[ok].tolist(); labels += [s] * int(ok.sum())
    return va, vb, labels


def _std(cid, stmt, va, vb, labels, *, direction, delta, metric, method, baseline, unit, p, details=None):
    c = p.claims
    return CL.evaluate_standard(cid, stmt, method_values=va, baseline_values=vb, seeds=labels, direction=direction,
                                delta=delta, metric=metric, method=method, baseline=baseline, unit=unit, seed=p.seed,
                                n_resamples=c.n_resamples, level=c.level, scale_note=NOTE, details=details)


def _composite(cid, stmt, parts: dict, verdict, *, metric, baseline, effect, n_seeds, n_units, unit, p, rule_text):
    keep = ("effect", "ci_low", "ci_high", "verdict", "n_units", "metric", "baseline")
    return CL.ClaimResult(id=cid, statement=stmt, metric=metric, method="neuraldb", baseline=baseline, direction=None,
                          threshold=None, delta=None, effect=effect, ci_low=None, ci_high=None, ci_level=p.claims.level,
                          n_seeds=n_seeds, n_units=n_units, unit=unit, per_seed_signs=None, rule="composite",
                          verdict=verdict, scale_note=NOTE,
                          details={"rule": rule_text, "parts": {k: {f: v.to_dict()[f] for f in keep}
                                                                for k, v in parts.items()}})


def claim1(p, idx) -> CL.ClaimResult:
    seeds, ms = p.editing.seeds, p.editing.m
    big, small = max(ms), min(ms)
    parts = {}
    for b in ("memit", "alphaedit"):
        va, vb, lab = paired(idx, seeds, big, "neuraldb", b, "efficacy")
        parts[f"efficacy_vs_{b}"] = _std("C1", "", va, vb, lab, direction="greater", delta=p.claims.delta,
                                         metric=f"efficacy at m={big}", method="neuraldb", baseline=b,
                                         unit="edited facts", p=p)
    drops = {}
    for meth in ("neuraldb", "memit"):
        a, bb, lab = paired(idx, seeds, small, meth, meth, "efficacy")
        at_big = [np.asarray(idx[(s, big, meth)]["efficacy"], float)[:small] for s in seeds]
        drops[meth] = (np.asarray(a) - np.concatenate(at_big)[: len(a)]).tolist(), lab
    parts["drop_vs_memit"] = _std("C1", "", drops["neuraldb"][0], drops["memit"][0], drops["neuraldb"][1],
                                  direction="less", delta=p.claims.delta,
                                  metric=f"efficacy drop m={small} -> {big} (on the first {small} facts)",
                                  method="neuraldb", baseline="memit", unit="facts edited at both m", p=p)
    verdict = CL.combine_all(x.verdict for x in parts.values())
    return _composite("C1", f"Capacity: at m={big} NeuralDB's efficacy exceeds MEMIT's and AlphaEdit's, and its "
                      f"efficacy drops less than MEMIT's from m={small} to m={big}", parts, verdict,
                      metric="efficacy differences", baseline="memit, alphaedit",
                      effect=parts["efficacy_vs_memit"].effect, n_seeds=len(seeds),
                      n_units=parts["efficacy_vs_memit"].n_units, unit="edited facts", p=p,
                      rule_text="reproduced if all three CIs lie on the claimed side of 0 (combine_all)")


def _rise(idx, seeds, m, meth):
    return np.concatenate([np.asarray(idx[(s, m, meth)]["ppl_nll"]) - np.asarray(idx[(s, m, "unedited")]["ppl_nll"])
                           for s in seeds])


def claim2(p, idx) -> CL.ClaimResult:
    seeds, big = p.editing.seeds, max(p.editing.m)
    n_win = len(idx[(seeds[0], big, "unedited")]["ppl_nll"])
    labels = [s for s in seeds for _ in range(n_win)]
    rise_n = _rise(idx, seeds, big, "neuraldb")
    parts = {}
    for b in ("memit", "alphaedit"):
        parts[f"nll_rise_vs_{b}"] = _std("C2", "", rise_n.tolist(), _rise(idx, seeds, big, b).tolist(), labels,
                                         direction="less", delta=p.claims.delta_nll,
                                         metric=f"held-out NLL rise at m={big} (nats/token)", method="neuraldb",
                                         baseline=b, unit="held-out filler windows", p=p)
    verdict = CL.combine_all(x.verdict for x in parts.values())
    res = _composite("C2", f"No side effects: at m={big} the rise in held-out filler perplexity is smaller for "
                     "NeuralDB than for MEMIT and AlphaEdit", parts, verdict, metric="NLL-rise differences",
                     baseline="memit, alphaedit", effect=parts["nll_rise_vs_memit"].effect, n_seeds=len(seeds),
                     n_units=len(labels), unit="held-out filler windows", p=p,
                     rule_text="reproduced if both CIs of (rise_neuraldb - rise_baseline) lie below 0")
    res.details["mean_nll_rise"] = {m: float(_rise(idx, seeds, big, m).mean()) for m in ("neuraldb", "memit", "alphaedit")}
    return res


def noninferior(cid, stmt, p, idx, key, baseline, extra=None) -> CL.ClaimResult:
    """"At least as good": not reproduced only if the CI of (neuraldb - baseline) lies entirely below 0."""
    seeds, big = p.editing.seeds, max(p.editing.m)
    va, vb, lab = paired(idx, seeds, big, "neuraldb", baseline, key)
    std = _std(cid, stmt, va, vb, lab, direction="greater", delta=p.claims.delta, metric=f"{key} at m={big}",
               method="neuraldb", baseline=baseline, unit="edited facts", p=p)
    verdict = CL.NOT_REPRODUCED if std.ci_high < 0 else CL.REPRODUCED
    d = std.to_dict()
    d.update(rule="composite", verdict=verdict, details={**d["details"], **(extra or {}),
             "rule": "non-inferiority: not reproduced iff the CI of the difference lies entirely below 0",
             "superiority_verdict": std.verdict, "neuraldb_mean": float(np.mean(va)), "baseline_mean": float(np.mean(vb))})
    return CL.ClaimResult(**d)


def edits_took_effect(p, idx) -> CL.ClaimResult:
    """Precondition of C2-C4: at the largest m NeuralDB's efficacy exceeds the unedited model's.

    Side effects, locality and generalisation of edits that did not happen are trivially "no worse":
    without this check a null edit (for instance on an under-trained model) would pass C3 and C4.
    """
    seeds, big = p.editing.seeds, max(p.editing.m)
    va, vb, lab = paired(idx, seeds, big, "neuraldb", "unedited", "efficacy")
    return _std("P0", "", va, vb, lab, direction="greater", delta=p.claims.delta, metric=f"efficacy at m={big}",
                method="neuraldb", baseline="unedited", unit="edited facts", p=p)


def gated(claim: CL.ClaimResult, pre: CL.ClaimResult) -> CL.ClaimResult:
    """Inconclusive, with the precondition's numbers, unless the edits measurably took effect."""
    claim.details["precondition"] = {"rule": "NeuralDB's efficacy must exceed the unedited model's (CI above 0)",
                                     "effect": pre.effect, "ci_low": pre.ci_low, "ci_high": pre.ci_high,
                                     "verdict": pre.verdict}
    if pre.verdict != CL.REPRODUCED:
        claim.details["verdict_before_precondition"] = claim.verdict
        claim.rule, claim.verdict = "composite", CL.INCONCLUSIVE
    return claim


def all_claims(p, rows: list[dict], gamma: dict) -> list[CL.ClaimResult]:
    idx = index(rows)
    big = max(p.editing.m)
    pre = edits_took_effect(p, idx)
    claims = [
        claim1(p, idx),
        claim2(p, idx),
        noninferior("C3", f"Locality: at m={big} NeuralDB's specificity is at least AlphaEdit's", p, idx,
                    "specificity", "alphaedit"),
        noninferior("C4", f"Generalisation (exploratory): at the dev-tuned gamma ({gamma['gamma']:.2f}) NeuralDB's "
                    f"paraphrase efficacy at m={big} is at least MEMIT's", p, idx, "generalisation", "memit",
                    extra={"gamma": gamma["gamma"], "gamma_tuned": gamma["tuned"], "dev_sweep": gamma["dev"]}),
    ]
    return claims[:1] + [gated(c, pre) for c in claims[1:]]
