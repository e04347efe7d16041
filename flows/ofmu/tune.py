"""The dev-split sweep: every method gets the same number of settings and the same budget; a stated rule picks one.

LM (``unlearn.tune``): the dev forget set is the ``dev`` authors (retain authors every claims model keeps); the
reference is a model trained without them (and with the claims' forget authors), so the sweep never sees the
claims' forget split. Rule: per method, the best dev MU among settings whose dev FQ reaches ``tune_fq_min``
(matched forget quality, as a trade-off claim needs); if none does, the highest dev FQ.
Vision (``vision.tune``): the dev scenario ``tune_scenario`` on ``tune_seeds`` (own split, models and forget set).
Rule: the best TA at the matched-UA checkpoint among settings that reach Retrain's UA band on every tune seed;
if none does, the most seeds in band, then the smallest distance to the band at the end.
Untuned variants (``ofmu-beta0``, ``ofmu-cos2``, ``wsum-*``) take their kind's pick with their own
distinguishing options.
"""

from __future__ import annotations

import numpy as np

from flows.ofmu.params import MethodSpec


def settings(spec: MethodSpec, grid: list[dict]) -> list[dict]:
    return [{**spec.options, **o} for o in grid]


def pick_lm(recs: list[dict], fq_min: float) -> int:
    """Index of the chosen setting; ``recs`` hold ``mu`` and ``fq`` per setting (aggregated over tune seeds)."""
    ok = [i for i, r in enumerate(recs) if r["fq"] >= fq_min]
    if ok:
        return max(ok, key=lambda i: (recs[i]["mu"], recs[i]["fq"]))
    return max(range(len(recs)), key=lambda i: (recs[i]["fq"], recs[i]["mu"]))


def pick_vision(recs: list[dict]) -> int:
    """``recs`` hold ``in_band`` (share of tune seeds in band), ``TA`` and ``gap`` (distance to the band at the end)."""
    return max(
        range(len(recs)),
        key=lambda i: (recs[i]["in_band"], -recs[i]["gap"] if recs[i]["in_band"] < 1 else 0.0, recs[i]["TA"]),
    )


def aggregate_lm(rows: list[dict]) -> dict:
    return {"mu": float(np.mean([r["mu"] for r in rows])), "fq": float(np.median([r["fq"] for r in rows]))}


def aggregate_vision(rows: list[dict], band: float) -> dict:
    return {
        "in_band": float(np.mean([r["in_band"] for r in rows])),
        "TA": float(np.mean([r["TA"] for r in rows])),
        "gap": float(np.mean([max(0.0, abs(r["final_UA"] - r["target_UA"]) - band) for r in rows])),
    }


def apply(methods: dict[str, MethodSpec], chosen: dict[str, dict]) -> dict[str, MethodSpec]:
    """The methods with their picked options. An untuned method of the same kind as a tuned one (``ofmu-beta0``
    and ``ofmu-cos2`` of ``ofmu``, ``wsum-*`` of ``graddiff``) takes that pick plus the options that set it apart."""
    out = {n: MethodSpec(kind=m.kind, options=chosen.get(n, m.options)) for n, m in methods.items()}
    for t, picked in chosen.items():
        ref = methods[t].options
        for n, m in methods.items():
            if m.kind == methods[t].kind and n not in chosen:
                own = {k: v for k, v in m.options.items() if ref.get(k) != v}
                out[n] = MethodSpec(kind=m.kind, options={**picked, **own})
    return out


def sweep(
    tune: dict[str, list[dict]], methods: dict[str, MethodSpec], seeds: list[int], run_one, aggregate, pick
) -> tuple[dict[str, dict], list[dict]]:
    """Run every setting of every tuned method on every tune seed; (chosen options per method, sweep records)."""
    chosen, records = {}, []
    for name, grid in tune.items():
        recs = []
        for i, opts in enumerate(settings(methods[name], grid)):
            rows = [run_one(name, MethodSpec(kind=methods[name].kind, options=opts), s) for s in seeds]
            recs.append({"method": name, "setting": i, "options": opts, **aggregate(rows), "per_seed": rows})
        best = pick(recs)
        for i, r in enumerate(recs):
            r["chosen"] = i == best
        chosen[name] = recs[best]["options"]
        records += recs
    return chosen, records
