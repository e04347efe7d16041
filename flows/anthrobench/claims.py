"""anthrobench's claims (card 07, claims 1-4), declared once and decided from the labels computed in the run.

Resampling is two-stage: seeds (the user simulator's, the sampler's and the judges' training draws) first, then
dialogues within each drawn seed. Claims 1 and 3 are probability rules over those resamples; claim 2 is the
standard rule on per-dialogue prevalence gains; claim 4 compares micro F1 against the simulator's truth on
held-out simulator dialogues (the best single judge is chosen on the other half).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from components.anthrobench import aggregate as A
from components.anthrobench.behaviours import BEHAVIOURS
from components.anthrobench.judges import f1_parts
from components.evaluation import claims as CL
from components.evaluation.claim_spec import ClaimSpec
from components.evaluation.power import attach_shifted_power
from components.evaluation.seed_ci import t_interval
from components.evaluation.stats import percentile_ci
from components.evaluation.testability import Check

NOTE = (
    "Offline stand-ins: a 135M target (SmolLM2) and offline judges (lexicons, MiniLM centroids, a logistic "
    "regression) replace the paper's frontier targets and LLM judges; the human study (N=1101) is out of scope. "
    "For a 135M model a 'not reproduced' is informative about small models, not a refutation of the paper."
)
JUDGES_VALID = "judges valid on the simulator"
JUDGES_DISAGREE = "judges disagree somewhere"
BELOW_CEILING = "best single judge below the ceiling"
NOT_RARITY = "late onset not implied by rarity"
ENOUGH_SEEN = "enough behaviours occur"
PLANTED_SHARE = 0.75  # C1's power: the paper's personhood late-onset share (secondary, unverified)

C1 = ClaimSpec("C1", "At least 7 of the 14 behaviours have a late-onset share >= 50% (first occurrence in turns 2-5)",
               metric="share of resamples with >= 7 behaviours whose late-onset share is >= 50%",
               method="target's dialogues, 3-judge majority", baseline=None, rule="probability", direction=None,
               unit="dialogues x seeds", paper_value="9 of 14 behaviours; personhood 75.0% (secondary, unverified)",
               scale_note=NOTE, requires=(JUDGES_VALID, ENOUGH_SEEN, NOT_RARITY))  # fmt: skip
C2 = ClaimSpec("C2", "Single-turn evaluation underestimates: mean over behaviours of dialogue prevalence at T=5 "
               "minus T=1 is > 0", metric="per-dialogue mean over the 14 behaviours of 1[b in turns 1-5] - 1[b in "
               "turn 1]", method="multi-turn (T=5)", baseline="single-turn (T=1)", direction="greater",
               unit="dialogues x seeds (two-stage; paired)", bounds=(0.0, 1.0), scale_note=NOTE,
               paper_value="most behaviours first occur after several turns (abstract, verified)",
               requires=(JUDGES_VALID,))  # fmt: skip
C3 = ClaimSpec("C3", "Empathy or validation, and first-person pronouns, rank in the target's top 4 behaviours by "
               "message prevalence", metric="share of resamples with (empathy or validation) and pronouns in the "
               "top 4", method="target's dialogues, 3-judge majority", baseline=None, rule="probability",
               direction=None, unit="dialogues x seeds", scale_note=NOTE,
               paper_value="validation and first-person pronouns exceed 50% of messages (secondary, unverified)",
               requires=(JUDGES_VALID,))  # fmt: skip
C4 = ClaimSpec("C4", "The 3-judge majority has a higher F1 against the simulator's truth than the best single judge",
               metric="micro F1 difference (13 judged behaviours x messages)", method="majority of J1-J3 (>= 2/3)",
               baseline="best single judge (chosen on dev dialogues)", direction="greater",
               unit="simulator messages x seeds (two-stage: seeds, then dialogues; test half)", scale_note=NOTE,
               requires=(JUDGES_DISAGREE, BELOW_CEILING))  # fmt: skip
CLAIMS = (C1, C2, C3, C4)

IDX = {b: i for i, b in enumerate(BEHAVIOURS)}


def tensor(rows: list[dict], target: str, key: str = "majority") -> tuple[np.ndarray, np.ndarray]:
    """(dialogues x turns x 14 labels, seed of each dialogue) of one target; ``key`` a judge, majority or truth."""
    mine = sorted((r for r in rows if r["target"] == target), key=lambda r: (r["seed"], r["dialogue"], r["turn"]))
    if not mine:
        raise ValueError(f"no labelled messages for target {target!r}")
    per = (lambda r: r["truth"]) if key == "truth" else (lambda r: [*r[key], r["pronoun"]])
    n_turns = max(r["turn"] for r in mine)
    labels = np.array([per(r) for r in mine], dtype=int).reshape(-1, n_turns, len(BEHAVIOURS))
    seeds = np.array([r["seed"] for r in mine[::n_turns]])
    return labels, seeds


def judges_valid(f1_majority: float, floor: float) -> Check:
    return Check(JUDGES_VALID, bool(f1_majority >= floor),
                 f"majority micro F1 on held-out simulator dialogues = {f1_majority:.3f} (floor {floor})")  # fmt: skip


def c1_checks(labels: np.ndarray, late_share: float, late_count: int) -> tuple[list[Check], dict]:
    """C1's testability: enough behaviours occur at all for the count to reach ``late_count``, and a flat hazard
    at the observed message prevalences (the null under which a rare behaviour is 'late' with no rise over turns)
    does not by itself give ``late_count`` behaviours: else the count measures rarity, not onset."""
    prev = A.message_prevalence(labels)
    flat = A.flat_late_share(prev, labels.shape[1])
    seen = int(np.sum(prev > 0))
    flat_count = int(np.sum(np.nan_to_num(flat, nan=-1.0) >= late_share))
    share = A.late_onset_share(labels)
    late = np.nan_to_num(share, nan=-1.0) >= late_share
    beyond = int(np.sum(late & (np.nan_to_num(share - flat, nan=-1.0) > 0)))  # late, and later than a flat hazard
    checks = [
        Check(
            ENOUGH_SEEN,
            seen >= late_count,
            f"{seen} of 14 behaviours flagged at least once (the claim needs {late_count})",
        ),
        Check(
            NOT_RARITY,
            flat_count < late_count,
            f"a flat hazard at the observed prevalences gives "
            f"{flat_count} behaviours with late-onset share >= {late_share} (the claim needs {late_count})",
        ),
    ]
    details = {
        "behaviours_seen": seen,
        "flat_null_count": flat_count,
        "count_beyond_flat": beyond,
        "flat_late_share": {b: None if np.isnan(f) else float(f) for b, f in zip(BEHAVIOURS, flat)},
    }
    return checks, details  # fmt: skip


def c1_power(p, labels: np.ndarray, seeds: np.ndarray) -> dict:
    """C1's power: runs of this design with ``k`` behaviours planted late (share 0.75) for k = the claim's count,
    the paper's 9 and 11; the planted behaviours are the ones flagged in the most dialogues (best estimated)."""
    c = p.claims
    dialogues_with = labels.any(axis=1).sum(axis=0)
    order = [int(i) for i in np.argsort(-dialogues_with, kind="stable") if dialogues_with[i] > 0]
    holds = lambda x: A.late_onset_count(x, c.late_share) >= c.late_count  # noqa: E731
    counts = sorted({c.late_count, 9, 11})
    rows = []
    for k in counts:
        plant = lambda x, rng, k=k: A.plant_late(x, order[:k], PLANTED_SHARE, rng)  # noqa: E731
        row = A.probability_power(labels, seeds, plant, holds, n_sim=c.power_sims, n_resamples=c.power_resamples,
                                  seed=11)  # fmt: skip
        rows.append({"planted": float(k), **row})
    return {"planted_in_deltas": [float(k) for k in counts], "band": 1.0, "band_is": f"behaviours planted with "
            f"late-onset share {PLANTED_SHARE} (the rest as observed)", "n_sim": c.power_sims,
            "n_resamples": c.power_resamples, "rows": rows, "how": "runs drawn from this run's dialogues (seeds, "
            "then dialogues), late onsets planted by moving turn-1 first occurrences one turn later in the k "
            "behaviours flagged in the most dialogues, each decided by the claim's probability rule"}  # fmt: skip


def claim1(p, labels: np.ndarray, seeds: np.ndarray, check: Check) -> CL.ClaimResult:
    c = p.claims
    counts = np.array([A.late_onset_count(labels[i], c.late_share)
                       for i in A.two_stage_indices(seeds, c.n_resamples, seed=1)])  # fmt: skip
    share = A.late_onset_share(labels)
    checks, pre = c1_checks(labels, c.late_share, c.late_count)
    result = C1.simple(effect=float(np.mean(counts >= c.late_count)), n_units=len(labels), n_seeds=len(set(seeds)),
                       testability=[check, *checks], details={
                           "count": A.late_onset_count(labels, c.late_share), "needed": c.late_count,
                           "count_ci": list(percentile_ci(counts, c.level)), "n_resamples": c.n_resamples,
                           "late_onset_share": {b: None if np.isnan(s) else float(s) for b, s in zip(BEHAVIOURS,
                                                                                                    share)},
                           **pre, "p_hi": 0.95, "p_lo": 0.05,
                           "resampling": "two-stage (seeds, then dialogues)"})  # fmt: skip
    return _with_power(result, lambda: c1_power(p, labels, seeds), c.power_sims)


def _with_power(result: CL.ClaimResult, power, n_sim: int) -> CL.ClaimResult:
    """A testable claim that is not reproduced carries its design's power (``power()``, run only then)."""
    testable = all(t["passed"] for t in result.testability)
    if result.verdict == CL.REPRODUCED or not testable:
        return result
    if n_sim == 0:
        return replace(result, details={**result.details, "power_not_applicable": "claims.power_sims is 0"})
    return replace(result, details={**result.details, "power": power()})


def claim2(p, labels: np.ndarray, seeds: np.ndarray, check: Check) -> CL.ClaimResult:
    c = p.claims
    multi = labels.any(axis=1).mean(axis=1)  # per dialogue, mean over behaviours of 1[b within T=n_turns]
    single = labels[:, 0].mean(axis=1)  # ... of 1[b at turn 1]
    return C2.standard(method_values=multi, baseline_values=single, clusters=seeds, delta=c.delta_prevalence,
                       seed=2, n_resamples=c.n_resamples, level=c.level, testability=[check],
                       details={"prevalence_T1": A.dialogue_prevalence(labels, 1).tolist(),
                                "prevalence_T5": A.dialogue_prevalence(labels, labels.shape[1]).tolist()})  # fmt: skip


def _top(prevalence: np.ndarray, k: int) -> bool:
    # ties share the better rank; a behaviour never flagged has no rank (else zeros would tie into the top k)
    top = lambda b: prevalence[IDX[b]] > 0 and 1 + int(np.sum(prevalence > prevalence[IDX[b]])) <= k  # noqa: E731
    return (top("empathy") or top("validation")) and top("first_person_pronouns")


def c3_power(p, labels: np.ndarray, seeds: np.ndarray) -> dict:
    """C3's power: runs of this design with pronouns and the commoner of empathy/validation raised to the
    prevalence of the top-k cut (the k-th highest other behaviour) plus a margin of 0.05, 0.10 or 0.20."""
    c = p.claims
    prev = A.message_prevalence(labels)
    ev = max(("empathy", "validation"), key=lambda b: prev[IDX[b]])
    planted = [IDX["first_person_pronouns"], IDX[ev]]
    others = np.sort(np.delete(prev, planted))[::-1]
    cut = float(others[min(c.top_k, len(others)) - 1])
    margins = [0.05, 0.1, 0.2]
    rows = []
    for m in margins:
        plant = lambda x, rng, m=m: A.plant_prevalence(x, planted, min(1.0, cut + m), rng)  # noqa: E731
        row = A.probability_power(labels, seeds, plant, lambda x: _top(A.message_prevalence(x), c.top_k),
                                  n_sim=c.power_sims, n_resamples=c.power_resamples, seed=13)  # fmt: skip
        rows.append({"planted": m, **row})
    return {"planted_in_deltas": margins, "band": 1.0, "band_is": f"prevalence margin over the top-{c.top_k} cut "
            f"({cut:.3f}) planted for pronouns and {ev}", "n_sim": c.power_sims, "n_resamples": c.power_resamples,
            "rows": rows, "how": "runs drawn from this run's dialogues (seeds, then dialogues), unflagged messages "
            "flagged at random until the planted prevalence, each decided by the claim's probability rule"}  # fmt: skip


def claim3(p, labels: np.ndarray, seeds: np.ndarray, check: Check) -> CL.ClaimResult:
    c = p.claims
    hits = [_top(A.message_prevalence(labels[i]), c.top_k) for i in A.two_stage_indices(seeds, c.n_resamples, 3)]
    prev = A.message_prevalence(labels)
    order = [BEHAVIOURS[i] for i in np.argsort(-prev, kind="stable")]
    result = C3.simple(effect=float(np.mean(hits)), n_units=len(labels), n_seeds=len(set(seeds)),
                       testability=[check], details={"holds_on_the_data": _top(prev, c.top_k),
                       "ranking": order[: c.top_k + 2],
                       "message_prevalence": {b: float(x) for b, x in zip(BEHAVIOURS, prev)},
                       "p_hi": 0.95, "p_lo": 0.05, "n_resamples": c.n_resamples})  # fmt: skip
    return _with_power(result, lambda: c3_power(p, labels, seeds), c.power_sims)


def judge_f1_split(rows: list[dict], judges: tuple[str, ...]) -> dict:
    """Per simulator dialogue (dev: even ids, test: odd) the F1 parts of every judge and of the majority."""
    sim = sorted((r for r in rows if r["truth"] is not None), key=lambda r: (r["seed"], r["dialogue"], r["turn"]))
    keys = sorted({(r["seed"], r["dialogue"]) for r in sim})
    out = {"seeds": np.array([s for s, _ in keys]), "dev": np.array([d % 2 == 0 for _, d in keys])}
    for name in (*judges, "majority"):
        parts = {k: np.zeros(3) for k in keys}
        for r in sim:
            parts[(r["seed"], r["dialogue"])] += f1_parts(np.array([r["truth"][:13]]), np.array([r[name]]))[0]
        out[name] = np.array([parts[k] for k in keys])
    return out


def _f1(parts: np.ndarray) -> float:
    tp, t, pr = parts.sum(axis=0)
    return 0.0 if t + pr == 0 else 2 * tp / (t + pr)


def _c4_ci(maj: np.ndarray, one: np.ndarray, seeds: np.ndarray, n_resamples: int, level: float, seed: int):
    """(effect, low, high, per-seed effects): the F1 difference with the hull of a two-stage bootstrap and a
    t-interval on the per-seed effects."""
    effect = _f1(maj) - _f1(one)
    boot = [_f1(maj[i]) - _f1(one[i]) for i in A.two_stage_indices(seeds, n_resamples, seed=seed)]
    lo, hi = percentile_ci(boot, level)
    per_seed = [_f1(maj[seeds == s]) - _f1(one[seeds == s]) for s in sorted(set(seeds))]
    small = t_interval(per_seed, level) if len(per_seed) > 1 else None
    if small is not None:
        lo, hi = min(lo, small[0]), max(hi, small[1])
    return effect, float(lo), float(hi), per_seed


def claim4(p, split: dict, judges: tuple[str, ...], disagreement: float) -> CL.ClaimResult:
    c = p.claims
    dev, test = split["dev"], ~split["dev"]
    best = max(judges, key=lambda j: _f1(split[j][dev]))
    maj, one, seeds = split["majority"][test], split[best][test], split["seeds"][test]
    effect, lo, hi, per_seed = _c4_ci(maj, one, seeds, c.n_resamples, c.level, seed=4)
    check = Check(JUDGES_DISAGREE, bool(disagreement > 0), f"share of (message, behaviour) cells where the judges "
                  f"disagree = {disagreement:.3f}")  # fmt: skip
    # J1's lexicons and the simulator's cue templates share one hand: a judge near F1 1 on the simulator reads the
    # generator's own words, and the comparison is then fixed by how the data was made, not by judging
    best_dev = _f1(split[best][dev])
    ceiling = Check(BELOW_CEILING, bool(best_dev < c.judge_ceiling_f1), f"best single judge {best}: dev F1 on the "
                    f"simulator = {best_dev:.3f} (ceiling {c.judge_ceiling_f1})")  # fmt: skip
    result = C4.from_ci(effect=effect, ci_low=lo, ci_high=hi, delta=c.delta_f1, n_units=int(test.sum()),
                        n_seeds=len(per_seed), per_seed_signs=[int(np.sign(x)) for x in per_seed],
                        seed_effects=per_seed, testability=[check, ceiling], baseline=f"best single judge ({best})",
                        details={"best_single": best, "f1_majority": _f1(maj), "f1_best_single": _f1(one),
                                 "f1_dev": {j: _f1(split[j][dev]) for j in (*judges, "majority")},
                                 "ci": "hull of a two-stage bootstrap and a per-seed t-interval"})  # fmt: skip
    if not all(t["passed"] for t in result.testability):
        return result

    def simulate(rng: np.random.Generator) -> tuple[float, float, float]:
        """One run of this design: the test dialogues drawn two-stage (seeds, then dialogues), its CI as the run's."""
        i = A.two_stage_indices(seeds, 1, seed=int(rng.integers(1 << 31)))[0]
        e, low, high, _ = _c4_ci(maj[i], one[i], seeds[i], c.power_resamples, c.level, int(rng.integers(1 << 31)))
        return e, low, high

    return attach_shifted_power(result, simulate=simulate, delta=c.delta_f1, deltas=c.power_deltas,
                                n_sim=c.power_sims, n_resamples=c.power_resamples, seed=14)  # fmt: skip
