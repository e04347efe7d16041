"""Claims 1-4 of the NeuralDB card, each decided from this run's per-fact and per-window values.

Units are paired across methods: the same edited facts (the first m requests of a seed) or the same held-out
windows. The seed draws the edit subset, the top-level random unit, so it is the cluster of the standard rule:
each bootstrap resample draws seeds with replacement, then facts (or windows) within each drawn seed.
C3 and C4 ("at least as good") use the non-inferiority rule with a margin of 1 point (the accuracy-type default:
the card gives none). C2-C4 are composites whose precondition P0 says the edits took effect.
"""

from __future__ import annotations

import numpy as np

from components.evaluation import claims as CL

NOTE = ("Tiny LM (a few layers, d_ff keys) on synthetic facts with Austen filler, on 2 shared CPU cores; the paper "
        "edits GPT-2 XL, GPT-J and Llama-3-8B on CounterFact/ZsRE. A verdict says whether the effect shows here.")
MARGIN = 0.01  # non-inferiority margin of C3/C4 on a 0-1 rate: the standard rule's accuracy-type default (1 point)
PAPER = "Llama-3-8B, CounterFact, 2k -> 10k edits (card, secondary, unverified)"
PAPER_C1 = f"{PAPER}: efficacy NeuralDB 99.9 -> 99.2 vs AlphaEdit 99.1 -> 75.8; NeuralDB 95.5 at 100k edits"
PAPER_C2 = (f"{PAPER}: no perplexity given; fluency NeuralDB 632.7 -> 631.0 vs AlphaEdit 622.7 -> 417.8, general "
            "abilities maintained on six tasks (abstract)")
PAPER_C3 = f"{PAPER}: specificity NeuralDB 88.2 -> 85.6 vs AlphaEdit 68.6 -> 54.0"


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


def _std(cid, stmt, va, vb, labels, *, direction, metric, method, baseline, unit, p, delta=None,
         rule="standard", margin=None, details=None, paper_value=None):
    c = p.claims
    return CL.evaluate_standard(cid, stmt, method_values=va, baseline_values=vb, clusters=labels, direction=direction,
                                delta=delta, rule=rule, margin=margin, metric=metric, method=method, baseline=baseline,
                                unit=unit, seed=p.seed, n_resamples=c.n_resamples, level=c.level, scale_note=NOTE,
                                details=details, paper_value=paper_value)


def claim1(p, idx) -> CL.ClaimResult:
    seeds, ms = p.editing.seeds, p.editing.m
    big, small = max(ms), min(ms)
    parts = []
    for b in ("memit", "alphaedit"):
        va, vb, lab = paired(idx, seeds, big, "neuraldb", b, "efficacy")
        parts.append(_std(f"C1/efficacy-vs-{b}", f"At m={big} NeuralDB's efficacy exceeds {b}'s", va, vb, lab,
                          direction="greater", delta=p.claims.delta, metric=f"efficacy at m={big}", method="neuraldb",
                          baseline=b, unit="edited facts x seeds", p=p))
    drops = {}
    for meth in ("neuraldb", "memit"):
        a, _, lab = paired(idx, seeds, small, meth, meth, "efficacy")
        at_big = [np.asarray(idx[(s, big, meth)]["efficacy"], float)[:small] for s in seeds]
        drops[meth] = (np.asarray(a) - np.concatenate(at_big)[: len(a)]).tolist(), lab
    parts.append(_std("C1/drop-vs-memit", f"NeuralDB's efficacy drops less than MEMIT's from m={small} to m={big}",
                      drops["neuraldb"][0], drops["memit"][0], drops["neuraldb"][1], direction="less",
                      delta=p.claims.delta, metric=f"efficacy drop m={small} -> {big} (on the first {small} facts)",
                      method="neuraldb", baseline="memit", unit="facts edited at both m x seeds", p=p))
    return CL.composite("C1", f"Capacity: at m={big} NeuralDB's efficacy exceeds MEMIT's and AlphaEdit's, and its "
                        f"efficacy drops less than MEMIT's from m={small} to m={big}", parts, how="all",
                        metric="efficacy differences", method="neuraldb", baseline="memit, alphaedit",
                        unit="edited facts x seeds", ci_level=p.claims.level, scale_note=NOTE, paper_value=PAPER_C1)


def _rise(idx, seeds, m, meth):
    return np.concatenate([np.asarray(idx[(s, m, meth)]["ppl_nll"]) - np.asarray(idx[(s, m, "unedited")]["ppl_nll"])
                           for s in seeds])


def claim2(p, idx, pre: CL.ClaimResult) -> CL.ClaimResult:
    seeds, big = p.editing.seeds, max(p.editing.m)
    n_win = len(idx[(seeds[0], big, "unedited")]["ppl_nll"])
    labels = [s for s in seeds for _ in range(n_win)]
    rise_n = _rise(idx, seeds, big, "neuraldb")
    parts = [_std(f"C2/nll-rise-vs-{b}", f"At m={big} NeuralDB's held-out NLL rises less than {b}'s", rise_n.tolist(),
                  _rise(idx, seeds, big, b).tolist(), labels, direction="less", delta=p.claims.delta_nll,
                  metric=f"held-out NLL rise at m={big} (nats/token)", method="neuraldb", baseline=b,
                  unit="held-out filler windows x seeds", p=p)
             for b in ("memit", "alphaedit")]
    return CL.composite("C2", f"No side effects: at m={big} the rise in held-out filler perplexity is smaller for "
                        "NeuralDB than for MEMIT and AlphaEdit", parts, how="all", preconditions=[pre],
                        metric="NLL-rise differences", method="neuraldb", baseline="memit, alphaedit",
                        unit="held-out filler windows x seeds", ci_level=p.claims.level, scale_note=NOTE,
                        paper_value=PAPER_C2,
                        details={"mean_nll_rise": {m: float(_rise(idx, seeds, big, m).mean())
                                                   for m in ("neuraldb", "memit", "alphaedit")}})


def noninferior(cid, stmt, p, idx, key, baseline, pre: CL.ClaimResult, extra=None,
                paper_value=None) -> CL.ClaimResult:
    """"At least as good": non-inferiority with margin ``MARGIN`` on the CI of (neuraldb - baseline), judged only
    when the edits took effect (precondition ``pre``)."""
    seeds, big = p.editing.seeds, max(p.editing.m)
    va, vb, lab = paired(idx, seeds, big, "neuraldb", baseline, key)
    part = _std(f"{cid}/{key}-vs-{baseline}", stmt, va, vb, lab, direction="greater", rule="non-inferiority",
                margin=MARGIN, metric=f"{key} at m={big}", method="neuraldb", baseline=baseline,
                unit="edited facts x seeds", p=p,
                details={"neuraldb_mean": float(np.mean(va)), "baseline_mean": float(np.mean(vb)),
                         "margin_source": "accuracy-type default (1 point); the card gives no margin"})
    return CL.composite(cid, stmt, [part], how="all", preconditions=[pre], metric=part.metric, method="neuraldb",
                        baseline=baseline, unit=part.unit, ci_level=p.claims.level, scale_note=NOTE,
                        paper_value=paper_value, details=dict(extra or {}))


def edits_took_effect(p, idx) -> CL.ClaimResult:
    """Precondition of C2-C4: at the largest m NeuralDB's efficacy exceeds the unedited model's (standard rule).

    Side effects, locality and generalisation of edits that did not happen are trivially "no worse":
    without this check a null edit (for instance on an under-trained model) would pass C3 and C4.
    """
    seeds, big = p.editing.seeds, max(p.editing.m)
    va, vb, lab = paired(idx, seeds, big, "neuraldb", "unedited", "efficacy")
    return _std("P0", f"The edits took effect: at m={big} NeuralDB's efficacy exceeds the unedited model's", va, vb,
                lab, direction="greater", delta=p.claims.delta, metric=f"efficacy at m={big}", method="neuraldb",
                baseline="unedited", unit="edited facts x seeds", p=p)


def all_claims(p, rows: list[dict], gamma: dict) -> list[CL.ClaimResult]:
    idx = index(rows)
    big = max(p.editing.m)
    pre = edits_took_effect(p, idx)
    return [
        claim1(p, idx),
        claim2(p, idx, pre),
        noninferior("C3", f"Locality: at m={big} NeuralDB's specificity is at least AlphaEdit's", p, idx,
                    "specificity", "alphaedit", pre, paper_value=PAPER_C3),
        noninferior("C4", f"Generalisation (exploratory): at the dev-tuned gamma ({gamma['gamma']:.2f}) NeuralDB's "
                    f"paraphrase efficacy at m={big} is at least MEMIT's", p, idx, "generalisation", "memit", pre,
                    extra={"gamma": gamma["gamma"], "gamma_tuned": gamma["tuned"], "dev_sweep": gamma["dev"]}),
    ]
