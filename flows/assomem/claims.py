"""Claims 1-4 of the AssoMem card, decided from the test questions' metrics of this run.

Units are test questions pooled over generator seeds (the bootstrap is stratified by seed).
"""

from __future__ import annotations

import numpy as np

from components.evaluation import claims as CL
from components.evaluation.stats import bootstrap_samples, percentile_ci

NOTE = ("Procedural, similarity-dense meeting memories with an offline clue tagger (nearest keyphrase with MiniLM) "
        "instead of an LLM; 1k-10k utterances instead of LongMemEval-m/MeetingQA.")


def table(rows: list[dict]) -> dict:
    """{(size, method): {qkey: row}} over test questions; qkey = (seed, qid)."""
    out: dict = {}
    for r in rows:
        if r["split"] == "test":
            out.setdefault((r["size"], r["method"]), {})[(r["seed"], r["qid"])] = r
    return out


def _paired(tab, size_a, method_a, size_b, method_b, metric):
    a, b = tab.get((size_a, method_a), {}), tab.get((size_b, method_b), {})
    keys = sorted(set(a) & set(b))
    return (np.array([a[k][metric] for k in keys]), np.array([b[k][metric] for k in keys]),
            np.array([k[0] for k in keys]), keys)


def claim1(p, tab, sizes) -> CL.ClaimResult:
    k, big = p.claims.k_accuracy, max(sizes)
    m, b, seeds, _ = _paired(tab, big, "assomem", big, "dense", f"R@{k}")
    return CL.evaluate_standard(
        "C1", f"At {big} utterances AssoMem's R@{k} is higher than dense flat retrieval's", method_values=m,
        baseline_values=b, seeds=seeds, direction="greater", delta=p.claims.delta, metric=f"R@{k}",
        method="assomem", baseline="dense", unit="test questions", seed=p.seed, n_resamples=p.claims.n_resamples,
        level=p.claims.level, scale_note=NOTE,
        details={"size": big, "mean_assomem": float(m.mean()), "mean_dense": float(b.mean())})


def not_applicable(claim_id: str, statement: str, metric: str, reason: str) -> CL.ClaimResult:
    """An inconclusive claim that the data cannot test (e.g. no memory-size axis); no numbers, the reason in details."""
    return CL.ClaimResult(id=claim_id, statement=statement, metric=metric, method="assomem", baseline=None,
                          direction=None, threshold=None, delta=None, effect=None, ci_low=None, ci_high=None,
                          ci_level=None, n_seeds=0, n_units=0, unit="not applicable", per_seed_signs=None,
                          rule="composite", verdict=CL.INCONCLUSIVE, scale_note=NOTE,
                          details={"not_applicable": reason})


def claim2(p, tab, sizes) -> CL.ClaimResult:
    k, small, big = p.claims.k_accuracy, min(sizes), max(sizes)
    metric = f"R@{k}"
    if small == big:
        return not_applicable("C2", f"AssoMem loses less R@{k} than dense flat retrieval as memory grows",
                              f"change of R@{k}", f"not applicable: one memory size ({big}); the data source has no "
                              "size axis (use data.source=generator for 1k/3k/10k)")
    a_big, a_small, seeds, keys = _paired(tab, big, "assomem", small, "assomem", metric)
    d_big, d_small, _, keys_d = _paired(tab, big, "dense", small, "dense", metric)
    assert keys == keys_d, "assomem and dense must score the same questions"
    change_a, change_d = a_big - a_small, d_big - d_small  # negative = recall lost as memory grows
    return CL.evaluate_standard(
        "C2", f"AssoMem loses less R@{k} than dense flat retrieval when memory grows from {small} to {big} utterances",
        method_values=change_a, baseline_values=change_d, seeds=seeds, direction="greater", delta=p.claims.delta,
        metric=f"change of R@{k} ({small} -> {big})", method="assomem", baseline="dense", unit="test questions",
        seed=p.seed + 1, n_resamples=p.claims.n_resamples, level=p.claims.level, scale_note=NOTE,
        details={"drop_assomem": float(-change_a.mean()), "drop_dense": float(-change_d.mean()),
                 "questions": len(keys), "sizes": [small, big]})


def mean_weights(weights: dict, units: list[dict], size: int) -> dict:
    """Mean CMI weight per question type and signal over the seeds' units at ``size``."""
    acc: dict = {}
    for u in units:
        if u["size"] == size:
            for qtype, w in weights[u["unit"]]["weights"]["assomem"].items():
                for d, v in w.items():
                    acc.setdefault(qtype, {}).setdefault(d, []).append(v)
    return {t: {d: float(np.mean(v)) for d, v in ws.items()} for t, ws in acc.items()}


def _direction_holds(w: dict) -> bool:
    """w_T is highest for temporal questions, and w_I(aggregate) > w_I(single-session)."""
    try:
        t_top = all(w["temporal"]["T"] > w[t]["T"] for t in w if t != "temporal")
        return bool(t_top and w["aggregate"]["I"] > w["single-session"]["I"])
    except KeyError:
        return False


def claim3(p, tab, sizes, weights, units) -> CL.ClaimResult:
    k, big = p.claims.k_fusion, max(sizes)
    m, b, seeds, _ = _paired(tab, big, "assomem", big, "assomem-equal", f"R@{k}")
    part_a = CL.evaluate_standard("C3a", "CMI weights beat equal weights", method_values=m, baseline_values=b,
                                  seeds=seeds, direction="greater", delta=p.claims.delta, metric=f"R@{k}",
                                  method="assomem", baseline="assomem-equal", unit="test questions", seed=p.seed + 2,
                                  n_resamples=p.claims.n_resamples, level=p.claims.level)
    per_seed, present = {}, set()
    for u in units:
        if u["size"] == big:
            per_seed[u["seed"]] = _direction_holds(weights[u["unit"]]["weights"]["assomem"])
            present |= set(weights[u["unit"]]["weights"]["assomem"])
    frac = float(np.mean(list(per_seed.values())))
    absent = sorted({"temporal", "aggregate", "single-session"} - present)
    # part b needs calibration questions of the three types; without them it is not applicable (inconclusive)
    part_b = CL.INCONCLUSIVE if absent else CL.decide_probability(frac, 0.95, 0.05)
    verdict = CL.combine_all([part_a.verdict, part_b])
    return CL.ClaimResult(
        id="C3", statement=f"Adaptive fusion: CMI weights beat fixed equal weights on R@{k}; w_T is highest for temporal "
        "questions and w_I is higher for aggregate than for single-session questions", metric=f"R@{k} / weights",
        method="assomem", baseline="assomem-equal", direction="greater", threshold=0.0, delta=p.claims.delta,
        effect=part_a.effect, ci_low=part_a.ci_low, ci_high=part_a.ci_high, ci_level=p.claims.level,
        n_seeds=part_a.n_seeds, n_units=part_a.n_units, unit="test questions", per_seed_signs=part_a.per_seed_signs,
        rule="composite", verdict=verdict, scale_note=NOTE,
        details={"cmi_vs_equal": part_a.to_dict(), "direction_verdict": part_b, "direction_holds_per_seed": per_seed,
                 "fraction_of_seeds": frac, "mean_weights": mean_weights(weights, units, big),
                 **({"part_b_not_applicable": f"no calibration questions of type(s) {absent}"} if absent else {})})


def claim4(p, tab, sizes) -> CL.ClaimResult:
    """Interaction: (R@k loss from removing I on aggregate) - (the same on single-session), bootstrap per group."""
    k, big = p.claims.k_accuracy, max(sizes)
    full, no_i, seeds, keys = _paired(tab, big, "assomem", big, "assomem-no-I", f"R@{k}")
    loss = full - no_i
    types = np.array([tab[(big, "assomem")][key]["type"] for key in keys])
    agg, fact = types == "aggregate", types == "single-session"
    if agg.sum() < 2 or fact.sum() < 2:
        return not_applicable("C4", "Removing importance I hurts aggregate/preference questions more than "
                              "single-session facts", f"interaction of R@{k} loss", "not applicable: fewer than 2 test "
                              f"questions of a group (aggregate {int(agg.sum())}, single-session {int(fact.sum())})")
    n = p.claims.n_resamples
    s_agg = bootstrap_samples(loss[agg], strata=seeds[agg], n_resamples=n, seed=p.seed + 3)
    s_fact = bootstrap_samples(loss[fact], strata=seeds[fact], n_resamples=n, seed=p.seed + 4)
    lo, hi = percentile_ci(s_agg - s_fact, p.claims.level)
    effect = float(loss[agg].mean() - loss[fact].mean())
    verdict = CL.decide(lo, hi, direction="greater", threshold=0.0, delta=p.claims.delta)
    signs = [int(np.sign(loss[agg & (seeds == s)].mean() - loss[fact & (seeds == s)].mean())) for s in np.unique(seeds)]
    return CL.ClaimResult(
        id="C4", statement=f"Removing importance I hurts aggregate/preference questions more than single-session facts "
        f"(R@{k} at {big} utterances)", metric=f"interaction of R@{k} loss", method="assomem",
        baseline="assomem-no-I", direction="greater", threshold=0.0, delta=p.claims.delta, effect=effect, ci_low=lo,
        ci_high=hi, ci_level=p.claims.level, n_seeds=len(signs), n_units=int(agg.sum() + fact.sum()),
        unit="test questions (two groups)", per_seed_signs=signs, rule="standard", verdict=verdict, scale_note=NOTE,
        details={"note": _c4_note(loss[agg].mean(), loss[fact].mean()),
                 "loss_aggregate": float(loss[agg].mean()), "loss_single_session": float(loss[fact].mean()),
                 "n_aggregate": int(agg.sum()), "n_single_session": int(fact.sum())})


def _c4_note(loss_agg: float, loss_fact: float) -> str:
    """Says when the interaction is only relative (removing I helps both groups, or hurts both)."""
    if loss_agg < 0 and loss_fact < 0:
        return "removing I raises recall in both groups; the interaction is relative only"
    if loss_agg > 0 and loss_fact > 0:
        return "removing I lowers recall in both groups"
    return "removing I lowers recall in one group and raises it in the other"


def all_claims(p, rows, weights, units) -> list[CL.ClaimResult]:
    tab = table(rows)
    sizes = sorted({u["size"] for u in units})
    return [claim1(p, tab, sizes), claim2(p, tab, sizes), claim3(p, tab, sizes, weights, units), claim4(p, tab, sizes)]
