"""Claims 1-4 of the NeuralDB card, each decided from this run's per-fact and per-window values.

Units are paired across methods: the same edited facts (the first m requests of a seed) or the same held-out
windows. The seed draws the edit subset, the top-level random unit, so it is the cluster of the standard rule:
each bootstrap resample draws seeds with replacement, then facts (or windows) within each drawn seed.
C3 and C4 ("at least as good") use the non-inferiority rule with a margin of 1 point (``claims.margin``, the
accuracy-type default: the card gives none). C2-C4 are composites whose precondition P0 says the edits took effect.
"""

from __future__ import annotations

import numpy as np

from components.evaluation import claims as CL
from components.evaluation.claim_spec import ClaimSpec
from components.evaluation.power import attach_shifted_power, mean_simulator

NOTE = (
    "Tiny LM (a few layers, d_ff keys) on synthetic facts with Austen filler, on 2 shared CPU cores; the paper "
    "edits GPT-2 XL, GPT-J and Llama-3-8B on CounterFact/ZsRE. A verdict says whether the effect shows here."
)
PAPER = "Llama-3-8B, CounterFact, 2k -> 10k edits (card, secondary, unverified)"
PAPER_C1 = f"{PAPER}: efficacy NeuralDB 99.9 -> 99.2 vs AlphaEdit 99.1 -> 75.8; NeuralDB 95.5 at 100k edits"
PAPER_C2 = (
    f"{PAPER}: no perplexity given; fluency NeuralDB 632.7 -> 631.0 vs AlphaEdit 622.7 -> 417.8, general "
    "abilities maintained on six tasks (abstract)"
)
PAPER_C3 = f"{PAPER}: specificity NeuralDB 88.2 -> 85.6 vs AlphaEdit 68.6 -> 54.0"
FACTS = "edited facts x seeds"
WINDOWS = "held-out filler windows x seeds"

CLAIMS = (
    ClaimSpec(
        "C1",
        "Capacity: at the largest m NeuralDB's efficacy exceeds MEMIT's and AlphaEdit's, and its efficacy "
        "drops less than MEMIT's from the smallest m to the largest",
        metric="efficacy differences",
        method="neuraldb",
        baseline="memit, alphaedit",
        rule="composite",
        unit=FACTS,
        paper_value=PAPER_C1,
        scale_note=NOTE,
    ),
    ClaimSpec(
        "C2",
        "No side effects: at the largest m the rise in held-out filler perplexity is smaller for NeuralDB "
        "than for MEMIT and AlphaEdit",
        metric="NLL-rise differences",
        method="neuraldb",
        baseline="memit, alphaedit",
        rule="composite",
        unit=WINDOWS,
        direction="less",
        paper_value=PAPER_C2,
        scale_note=NOTE,
    ),
    ClaimSpec(
        "C3",
        "Locality: at the largest m NeuralDB's specificity is at least AlphaEdit's",
        metric="specificity at the largest m",
        method="neuraldb",
        baseline="alphaedit",
        rule="composite",
        unit=FACTS,
        paper_value=PAPER_C3,
        scale_note=NOTE,
    ),
    ClaimSpec(
        "C4",
        "Generalisation (exploratory): at the dev-tuned gamma NeuralDB's paraphrase efficacy at the "
        "largest m is at least MEMIT's",
        metric="generalisation at the largest m",
        method="neuraldb",
        baseline="memit",
        rule="composite",
        unit=FACTS,
        scale_note=NOTE,
    ),
)
C1, C2, C3, C4 = CLAIMS
# the precondition of C2-C4 (not a claim of its own: it appears inside them)
P0 = ClaimSpec(
    "P0",
    "The edits took effect: at the largest m NeuralDB's efficacy exceeds the unedited model's",
    metric="efficacy at the largest m",
    method="neuraldb",
    baseline="unedited",
    unit=FACTS,
    scale_note=NOTE,
)


def index(rows: list[dict]) -> dict:
    return {(r["seed"], r["m"], r["method"]): r for r in rows}


def paired(idx: dict, seeds, m: int, a: str, b: str, key: str, first: int | None = None):
    """Finite paired values of ``key`` for methods a and b at m, with the seed of each unit."""
    va, vb, labels = [], [], []
    for s in seeds:
        x = np.asarray(idx[(s, m, a)][key], float)[:first]
        y = np.asarray(idx[(s, m, b)][key], float)[:first]
        ok = np.isfinite(x) & np.isfinite(y)
        va += x[ok].tolist()
        vb += y[ok].tolist()
        labels += [s] * int(ok.sum())
    return va, vb, labels


def _std(spec: ClaimSpec, va, vb, labels, p, **kw) -> CL.ClaimResult:
    """The CI rule of ``spec`` on paired values, clustered by seed, with the run's bootstrap settings."""
    c = p.claims
    return spec.standard(
        method_values=va,
        baseline_values=vb,
        clusters=labels,
        seed=p.seed,
        n_resamples=c.n_resamples,
        level=c.level,
        **kw,
    )


def with_power(
    p, whole: CL.ClaimResult, parts: list[CL.ClaimResult], units: list[tuple], scales: list[float]
) -> CL.ClaimResult:
    """``whole`` with the power of its first part that is not reproduced: that part's own CI rule (standard or
    non-inferiority) on runs redrawn from its paired units (seeds, then facts or windows), planted at multiples of
    ``scales[i]`` (its band or margin). Nothing is attached when every part is reproduced."""
    c = p.claims
    for part, (va, vb, labels), scale in zip(parts, units, scales):
        if part.verdict != CL.REPRODUCED:
            simulate = mean_simulator(
                np.subtract(va, vb), clusters=labels, n_resamples=c.power_resamples, level=c.level
            )
            return attach_shifted_power(
                part,
                simulate=simulate,
                delta=scale,
                deltas=c.power_deltas,
                n_sim=c.power_sims,
                n_resamples=c.power_resamples,
                seed=p.seed + 30,
                carrier=whole,
            )
    return whole


def claim1(p, idx) -> CL.ClaimResult:
    seeds, ms = p.editing.seeds, p.editing.m
    big, small = max(ms), min(ms)
    parts, units = [], []
    for b in ("memit", "alphaedit"):
        va, vb, lab = paired(idx, seeds, big, "neuraldb", b, "efficacy")
        units.append((va, vb, lab))
        parts.append(
            _std(
                C1.part(
                    f"efficacy-vs-{b}",
                    f"At m={big} NeuralDB's efficacy exceeds {b}'s",
                    rule="standard",
                    metric=f"efficacy at m={big}",
                    baseline=b,
                    paper_value=None,
                ),
                va,
                vb,
                lab,
                p,
                delta=p.claims.delta,
            )
        )
    drops, n_small = {}, 0
    for meth in ("neuraldb", "memit"):
        d, lab = [], []
        for s in seeds:  # the smallest m may hold several disjoint batches: the first n facts of the seed
            at_small = np.asarray(idx[(s, small, meth)]["efficacy"], float)
            n_small = len(at_small)
            diff = at_small - np.asarray(idx[(s, big, meth)]["efficacy"], float)[:n_small]
            ok = np.isfinite(diff)
            d += diff[ok].tolist()
            lab += [s] * int(ok.sum())
        drops[meth] = d, lab
    drop = C1.part(
        "drop-vs-memit",
        f"NeuralDB's efficacy drops less than MEMIT's from m={small} to m={big}",
        rule="standard",
        direction="less",
        metric=f"efficacy drop m={small} -> {big} (the first {n_small} facts per seed: "
        f"{n_small // small} disjoint batch(es) of {small} at m={small})",
        baseline="memit",
        unit="facts edited at both m x seeds",
        paper_value=None,
    )
    parts.append(_std(drop, drops["neuraldb"][0], drops["memit"][0], drops["neuraldb"][1], p, delta=p.claims.delta))
    units.append((drops["neuraldb"][0], drops["memit"][0], drops["neuraldb"][1]))
    whole = C1.composite(
        parts,
        statement=f"Capacity: at m={big} NeuralDB's efficacy exceeds MEMIT's and AlphaEdit's, "
        f"and its efficacy drops less than MEMIT's from m={small} to m={big}",
        how="all",
        ci_level=p.claims.level,
    )
    return with_power(p, whole, parts, units, [p.claims.delta] * 3)


def _rise(idx, seeds, m, meth):
    return np.concatenate(
        [np.asarray(idx[(s, m, meth)]["ppl_nll"]) - np.asarray(idx[(s, m, "unedited")]["ppl_nll"]) for s in seeds]
    )


def claim2(p, idx, pre: CL.ClaimResult) -> CL.ClaimResult:
    seeds, big = p.editing.seeds, max(p.editing.m)
    n_win = len(idx[(seeds[0], big, "unedited")]["ppl_nll"])
    labels = [s for s in seeds for _ in range(n_win)]
    rise_n = _rise(idx, seeds, big, "neuraldb")
    units = [(rise_n.tolist(), _rise(idx, seeds, big, b).tolist(), labels) for b in ("memit", "alphaedit")]
    parts = [
        _std(
            C2.part(
                f"nll-rise-vs-{b}",
                f"At m={big} NeuralDB's held-out NLL rises less than {b}'s",
                rule="standard",
                metric=f"held-out NLL rise at m={big} (nats/token)",
                baseline=b,
                paper_value=None,
            ),
            *u,
            p,
            delta=p.claims.delta_nll,
        )
        for b, u in zip(("memit", "alphaedit"), units)
    ]
    whole = C2.composite(
        parts,
        statement=f"No side effects: at m={big} the rise in held-out filler perplexity is "
        "smaller for NeuralDB than for MEMIT and AlphaEdit",
        how="all",
        preconditions=[pre],
        ci_level=p.claims.level,
        details={
            "mean_nll_rise": {m: float(_rise(idx, seeds, big, m).mean()) for m in ("neuraldb", "memit", "alphaedit")}
        },
    )
    return with_power(p, whole, parts, units, [p.claims.delta_nll] * 2)


def noninferior(spec: ClaimSpec, stmt, p, idx, key, pre: CL.ClaimResult, extra=None) -> CL.ClaimResult:
    """ "At least as good": non-inferiority with margin ``claims.margin`` on the CI of (neuraldb - the declared
    baseline), judged only when the edits took effect (precondition ``pre``)."""
    seeds, big = p.editing.seeds, max(p.editing.m)
    va, vb, lab = paired(idx, seeds, big, "neuraldb", spec.baseline, key)
    metric = f"{key} at m={big}"
    part = _std(
        spec.part(f"{key}-vs-{spec.baseline}", stmt, rule="non-inferiority", metric=metric, paper_value=None),
        va,
        vb,
        lab,
        p,
        margin=p.claims.margin,
        details={
            "neuraldb_mean": float(np.mean(va)),
            "baseline_mean": float(np.mean(vb)),
            "margin_source": "accuracy-type default (1 point); the card gives no margin",
        },
    )
    whole = spec.composite(
        [part],
        statement=stmt,
        how="all",
        preconditions=[pre],
        metric=metric,
        ci_level=p.claims.level,
        details=dict(extra or {}),
    )
    return with_power(p, whole, [part], [(va, vb, lab)], [p.claims.margin])


def edits_took_effect(p, idx) -> CL.ClaimResult:
    """Precondition of C2-C4: at the largest m NeuralDB's efficacy exceeds the unedited model's (standard rule with
    the band ``claims.edit_effect``: a gain inside it is no practical effect, so the precondition fails).

    Side effects, locality and generalisation of edits that did not happen are trivially "no worse":
    without this check a null edit (for instance on an under-trained model) would pass C3 and C4.
    """
    seeds, big = p.editing.seeds, max(p.editing.m)
    va, vb, lab = paired(idx, seeds, big, "neuraldb", "unedited", "efficacy")
    return _std(
        P0,
        va,
        vb,
        lab,
        p,
        statement=f"The edits took effect: at m={big} NeuralDB's efficacy exceeds the unedited model's",
        metric=f"efficacy at m={big}",
        delta=p.claims.edit_effect,
    )


def all_claims(p, rows: list[dict], gamma: dict) -> list[CL.ClaimResult]:
    idx = index(rows)
    big = max(p.editing.m)
    pre = edits_took_effect(p, idx)
    return [
        claim1(p, idx),
        claim2(p, idx, pre),
        noninferior(
            C3, f"Locality: at m={big} NeuralDB's specificity is at least AlphaEdit's", p, idx, "specificity", pre
        ),
        noninferior(
            C4,
            f"Generalisation (exploratory): at the dev-tuned gamma ({gamma['gamma']:.2f}) NeuralDB's "
            f"paraphrase efficacy at m={big} is at least MEMIT's",
            p,
            idx,
            "generalisation",
            pre,
            extra={"gamma": gamma["gamma"], "gamma_tuned": gamma["tuned"], "dev_sweep": gamma["dev"]},
        ),
    ]
