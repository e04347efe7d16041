"""selfaug-decoding's claims (card claims 1-4), declared once and decided from the answers decoded in the run.

F1 and CHAIR_i are not means of per-item values, so their paired differences get the rule's two-stage
bootstrap here (``components.selfaug_decoding.metrics.paired_bootstrap``: VLM seeds first, then questions within
each drawn seed, POPE splits as strata) and go through ``ClaimSpec.from_ci``; with two or more seeds the CI is
the hull with a t-interval on the per-seed differences (``seed_effects``). A claim not reproduced carries its
power from ``attach_shifted_power`` (the same simulator, effects moved to the planted ones). Differences are
in points (0-100).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from components.evaluation import claims as CL
from components.evaluation.claim_spec import ClaimSpec
from components.evaluation.power import attach_shifted_power
from components.evaluation.testability import Check
from components.selfaug_decoding import metrics as MT

NOTE = (
    "Mini scale: a 0.5M-parameter VLM trained on synthetic shape scenes with a designed triangle->circle "
    "co-occurrence bias; SAS is a rule map from question type to augmentation (an oracle-prior approximation, "
    "not self-selection); the paper uses LLaVA-1.5 / InstructBLIP / Qwen-VL on COCO POPE, MME and others."
)
SEES = "VLM not blind"  # greedy's POPE answers depend on the image: not all yes / all no, above chance
PAPER = "average gains of 6.69-18.78% over baselines (third-party summary, unverified)"

CLAIMS = (
    ClaimSpec("C1", "VCD's POPE-adversarial F1 is higher than greedy decoding's", metric="POPE-adversarial F1 "
              "difference (points)", method="vcd", baseline="greedy", direction="greater",
              unit="adversarial questions x VLM seeds (two-stage; paired)", scale_note=NOTE,
              requires=("hallucination occurs", "mechanism engaged", SEES)),
    ClaimSpec("C2", "Query-aligned (SAS) augmentation gives higher POPE F1 than VCD's generic noise",
              metric="POPE F1 difference (points), three splits as strata", method="sas_only", baseline="vcd",
              direction="greater", unit="POPE questions x VLM seeds (two-stage, splits as strata; paired)",
              scale_note=NOTE, requires=("mechanism engaged", SEES)),
    ClaimSpec("C3", "SAT lowers CHAIR_i against the fixed beta = 0.1 while POPE F1 drops by at most 1 point",
              metric="CHAIR_i difference / POPE F1 change (points)", method="selfaug (SAS + SAT)",
              baseline="sas_only (SAS + beta 0.1)", rule="composite", direction=None,
              unit="captions / POPE questions x VLM seeds", scale_note=NOTE,
              requires=("SAT engaged", "hallucination occurs")),
    ClaimSpec("C4", "Full Self-Aug's POPE F1 is at least VACoDe's", metric="POPE F1 difference (points)",
              method="selfaug", baseline="vacode", rule="non-inferiority", direction="greater",
              unit="POPE questions x VLM seeds (two-stage, splits as strata; paired)", scale_note=NOTE,
              paper_value=PAPER, requires=(SEES,)),
)  # fmt: skip
C1, C2, C3, C4 = CLAIMS
C3_CHAIR = C3.part("chair", "Self-Aug's CHAIR_i is lower than SAS-only's (fixed beta 0.1)", rule="standard",
                   direction="less", metric="CHAIR_i difference (points)")  # fmt: skip
C3_F1 = C3.part("f1", "Self-Aug's POPE F1 is at most 1 point below SAS-only's", rule="non-inferiority",
                direction="greater", metric="POPE F1 change (points)", requires=(SEES,))  # fmt: skip


def paired(rows: Sequence[dict], method: str, baseline: str, key=("seed", "question_id")) -> tuple[list, list]:
    """The method's and the baseline's rows on the same (seed, question), in one order."""
    b = {tuple(r[k] for k in key): r for r in rows if r["method"] == baseline}
    m = sorted((r for r in rows if r["method"] == method), key=lambda r: tuple(r[k] for k in key))
    pairs = [(r, b[tuple(r[k] for k in key)]) for r in m if tuple(r[k] for k in key) in b]
    return [x for x, _ in pairs], [y for _, y in pairs]


def _bootstrap(stat, n: int, clusters, strata, p, seed: int, n_resamples: int | None = None):
    c = p.claims
    pt, lo, hi = MT.paired_bootstrap(stat, n, clusters, strata=strata, n_resamples=n_resamples or c.n_resamples,
                                     seed=seed, level=c.level)  # fmt: skip
    return 100 * pt, 100 * lo, 100 * hi


def _per_seed(stat, clusters: np.ndarray) -> list[float]:
    return [100 * float(stat(np.flatnonzero(clusters == s)[None])[0]) for s in np.unique(clusters).tolist()]


def _simulator(stat, n: int, clusters: np.ndarray, strata, p):
    """One simulated run for the power check: a two-stage resample of the run's items, its effect and CI."""

    def simulate(rng: np.random.Generator) -> tuple[float, float, float]:
        labels: list = []
        idx = MT.two_stage_indices(clusters, 1, rng, strata=strata, labels_out=labels)[0]
        sub = lambda j: stat(idx[j])  # noqa: E731 - the statistic on the resampled items
        cl = labels[0]
        st = None if strata is None else np.asarray(strata)[idx]
        return _bootstrap(sub, n, cl, st, p, int(rng.integers(1 << 30)), p.claims.power_resamples)

    return simulate


def f1_claim(spec: ClaimSpec, rows, method: str, baseline: str, p, *, splits: Sequence[str], seed: int,
             checks: Sequence[Check] = (), **kw) -> CL.ClaimResult:  # fmt: skip
    rows = [r for r in rows if r["split"] in splits]
    m, b = paired(rows, method, baseline)
    cl = np.asarray([r["seed"] for r in m])
    strata = np.asarray([r["split"] for r in m]) if len(splits) > 1 else None
    stat = MT.f1_difference([r["pred_yes"] for r in m], [r["pred_yes"] for r in b], [r["label"] == "yes" for r in m])
    pt, lo, hi = _bootstrap(stat, len(m), cl, strata, p, seed)
    per_seed = _per_seed(stat, cl)
    f1s = {name: 100 * MT.pope([r["pred_yes"] for r in side], [r["label"] == "yes" for r in side])["f1"]
           for name, side in ((method, m), (baseline, b))}  # fmt: skip
    changed = sum(x["pred_yes"] != y["pred_yes"] for x, y in zip(m, b))
    details = {"f1": f1s, "answers_changed": changed, "splits": list(splits)}
    res = spec.from_ci(effect=pt, ci_low=lo, ci_high=hi, n_units=len(m), n_seeds=len(set(cl.tolist())),
                       per_seed_signs=[int(np.sign(e)) for e in per_seed],
                       seed_effects=per_seed if len(per_seed) >= 2 else None, details=details,
                       testability=list(checks), **kw)  # fmt: skip
    return attach_shifted_power(res, simulate=_simulator(stat, len(m), cl, strata, p), delta=p.claims.delta,
                                deltas=p.claims.power_deltas, n_sim=p.claims.power_sims,
                                n_resamples=p.claims.power_resamples, seed=seed)  # fmt: skip


def not_blind(pope: list[dict]) -> Check:
    """The no-blind-baseline precondition: greedy's POPE yes-ratio in [5%, 95%] and accuracy >= 55%."""
    g = [r for r in pope if r["method"] == "greedy"]
    v = MT.pope([r["pred_yes"] for r in g], [r["label"] == "yes" for r in g])
    ok = 0.05 <= v["yes_ratio"] <= 0.95 and v["accuracy"] >= 0.55
    return Check(SEES, ok, f"greedy POPE yes-ratio {v['yes_ratio']:.3f}, accuracy {v['accuracy']:.3f} (need "
                 "yes-ratio in [0.05, 0.95] and accuracy >= 0.55)")  # fmt: skip


def _ceiling(f1: float) -> Check:
    return Check("baseline below the ceiling", f1 < 99.5, f"baseline F1 {f1:.1f} (ceiling 100)")


def claim1(p, pope: list[dict]) -> CL.ClaimResult:
    adv = [r for r in pope if r["split"] == "adversarial" and r["method"] == "greedy"]
    fy = MT.pope([r["pred_yes"] for r in adv], [r["label"] == "yes" for r in adv])["false_yes_rate"]
    m, b = paired([r for r in pope if r["split"] == "adversarial"], "vcd", "greedy")
    changed = sum(x["pred_yes"] != y["pred_yes"] for x, y in zip(m, b))
    checks = [Check("hallucination occurs", fy >= p.claims.min_false_yes,
                    f"greedy's false-yes rate on adversarial negatives {fy:.3f} (floor {p.claims.min_false_yes})"),
              Check("mechanism engaged", changed > 0, f"VCD changes {changed} of {len(m)} greedy answers"),
              _ceiling(100 * MT.pope([r["pred_yes"] for r in b], [r["label"] == "yes" for r in b])["f1"]),
              not_blind(pope)]  # fmt: skip
    return f1_claim(C1, pope, "vcd", "greedy", p, splits=("adversarial",), seed=1, checks=checks,
                    delta=p.claims.delta)  # fmt: skip


def _pooled_checks(pope, method, baseline, what: str) -> list[Check]:
    m, b = paired(pope, method, baseline)
    changed = sum(x["pred_yes"] != y["pred_yes"] for x, y in zip(m, b))
    f1b = 100 * MT.pope([r["pred_yes"] for r in b], [r["label"] == "yes" for r in b])["f1"]
    return [
        Check("mechanism engaged", changed > 0, f"{what} changes {changed} of {len(m)} answers"),
        _ceiling(f1b),
        not_blind(pope),
    ]


def claim2(p, pope: list[dict], mme: list[dict]) -> CL.ClaimResult:
    per_type = qtype_gains(mme, "sas_only", "vcd", p)
    checks = _pooled_checks(pope, "sas_only", "vcd", "SAS's augmentation")
    res = f1_claim(C2, pope, "sas_only", "vcd", p, splits=("random", "popular", "adversarial"), seed=2,
                   checks=checks, delta=p.claims.delta)  # fmt: skip
    return _with_details(res, {"mme_accuracy_gain_by_type": per_type})


def _with_details(res: CL.ClaimResult, extra: dict) -> CL.ClaimResult:
    from dataclasses import replace

    return replace(res, details={**res.details, **extra})


def qtype_gains(mme: list[dict], method: str, baseline: str, p) -> dict:
    """MME-style accuracy difference (points) per question type, with its paired two-stage bootstrap CI."""
    out = {}
    for qt in sorted({r["qtype"] for r in mme}):
        m, b = paired([r for r in mme if r["qtype"] == qt], method, baseline)
        if not m:
            continue
        d = np.asarray([float(x["correct"]) - float(y["correct"]) for x, y in zip(m, b)])
        cl = np.asarray([r["seed"] for r in m])
        pt, lo, hi = _bootstrap(lambda idx, d=d: d[idx].mean(1), len(d), cl, None, p, 7, 2000)
        out[qt] = {"gain": round(pt, 3), "ci": [round(lo, 3), round(hi, 3)], "n": len(d)}
    return out


def claim3(p, pope: list[dict], caps: list[dict]) -> CL.ClaimResult:
    m, b = paired(caps, "selfaug", "sas_only", key=("seed", "image"))
    cl = np.asarray([r["seed"] for r in m])
    stat = MT.ratio_difference([r["n_hallucinated"] for r in m], [r["n_mentions"] for r in m],
                               [r["n_hallucinated"] for r in b], [r["n_mentions"] for r in b])  # fmt: skip
    pt, lo, hi = _bootstrap(stat, len(m), cl, None, p, 3)
    per_seed = _per_seed(stat, cl)
    base_chair = 100 * sum(r["n_hallucinated"] for r in b) / max(1, sum(r["n_mentions"] for r in b))
    betas = [r["mean_beta"] for r in m if r["mean_beta"] is not None]
    cand_m = float(np.mean([r["mean_candidates"] for r in m])) if m else 0.0
    cand_b = float(np.mean([r["mean_candidates"] for r in b])) if b else 0.0
    fixed = [r["mean_beta"] for r in b if r["mean_beta"] is not None]  # SAS-only's tuned fixed beta
    fixed_beta = float(np.mean(fixed)) if fixed else float("nan")
    checks = [Check("SAT engaged", bool(betas) and abs(float(np.mean(betas)) - fixed_beta) > 1e-3
                    and cand_m != cand_b, f"SAT's mean beta {np.mean(betas) if betas else float('nan'):.3f} vs "
                    f"fixed {fixed_beta:.3f}; mean candidates {cand_m:.2f} vs {cand_b:.2f}"),
              Check("hallucination occurs", base_chair > 0, f"SAS-only's CHAIR_i {base_chair:.2f} points")]  # fmt: skip
    chair = C3_CHAIR.from_ci(effect=pt, ci_low=lo, ci_high=hi, n_units=len(m), n_seeds=len(set(cl.tolist())),
                             per_seed_signs=[int(np.sign(e)) for e in per_seed],
                             seed_effects=per_seed if len(per_seed) >= 2 else None, delta=p.claims.delta_chair,
                             details={"chair_i": {"selfaug": base_chair + pt, "sas_only": base_chair},
                                      "mean_beta_sat": float(np.mean(betas)) if betas else None,
                                      "mean_candidates": {"selfaug": cand_m, "sas_only": cand_b}},
                             testability=checks, unit="captions x VLM seeds (two-stage; paired)")  # fmt: skip
    chair = attach_shifted_power(chair, simulate=_simulator(stat, len(m), cl, None, p), delta=p.claims.delta_chair,
                                 deltas=p.claims.power_deltas, n_sim=p.claims.power_sims,
                                 n_resamples=p.claims.power_resamples, seed=3)  # fmt: skip
    f1 = f1_claim(C3_F1, pope, "selfaug", "sas_only", p, splits=("random", "popular", "adversarial"), seed=4,
                  threshold=-p.claims.f1_margin, unit="POPE questions x VLM seeds (two-stage; paired)",
                  checks=[not_blind(pope)])  # fmt: skip
    return C3.composite([chair, f1])


def claim4(p, pope: list[dict]) -> CL.ClaimResult:
    return f1_claim(C4, pope, "selfaug", "vacode", p, splits=("random", "popular", "adversarial"), seed=5,
                    checks=_pooled_checks(pope, "selfaug", "vacode", "Self-Aug")[1:],
                    threshold=-p.claims.f1_margin)  # fmt: skip


def all_claims(p, pope, mme, caps) -> list[CL.ClaimResult]:
    return [claim1(p, pope), claim2(p, pope, mme), claim3(p, pope, caps), claim4(p, pope)]
