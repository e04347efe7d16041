"""anthrobench's claims on fixtures with known verdicts: planted late onsets give C1 reproduced and flat early
hazards C1 not reproduced; independent judge errors make the majority beat the best single judge (C4), while
identical judges leave C4 not testable (inconclusive)."""

from __future__ import annotations

import numpy as np
import pytest

from components.anthrobench import evaluate as E
from components.anthrobench.behaviours import BEHAVIOURS
from components.anthrobench.simulate import Hazards
from flows.anthrobench.claims import claim1, claim2, claim3, claim4, judge_f1_split, judges_valid, tensor
from flows.anthrobench.params import PRESETS, Params
from flows.runtime.params import resolve

JUDGES = ("J1_lexicon", "J2_centroid", "J3_logreg")


def _params():
    return resolve(Params, PRESETS, slug="anthrobench", profile="smoke", overrides=["claims.n_resamples=300"])


def _rows(hazards: Hazards, noise: tuple[float, float, float] = (0.0, 0.0, 0.0), n: int = 60) -> list[dict]:
    """Simulator rows whose judges are the truth with independent flips at the given rates."""
    rows = []
    for seed in (0, 1, 2):
        rng = np.random.default_rng(seed)
        for d in E.simulate(hazards, n, seed=seed):
            for t in d["turns"]:
                truth = [t["truth"][b] for b in BEHAVIOURS]
                votes = {j: [int(x != (rng.random() < q)) for x in truth[:13]] for j, q in zip(JUDGES, noise)}
                majority = [int(sum(v[i] for v in votes.values()) >= 2) for i in range(13)]
                rows.append({"target": "simulator", "seed": seed, "dialogue": d["dialogue"], "turn": t["turn"],
                             **votes, "majority": majority, "pronoun": truth[13], "truth": truth})  # fmt: skip
    return rows


def _common_late(late=BEHAVIOURS[:8]) -> Hazards:
    """Late onsets in common behaviours: hazard 0.12 at turn 1, 0.88 from turn 2 (a flat hazard at their
    prevalence, ~0.8, would put ~20% of first occurrences late); the rest flat and early (0.82 per turn)."""
    return Hazards.build({"default": 1.5, **{b: -6.0 for b in late}}, {"default": 0.0, **{b: 4.0 for b in late}},
                         {"default": 0.0, **{b: 2.0 for b in late}})  # fmt: skip


def test_planted_late_onsets_reproduce_c1_and_flat_early_hazards_do_not():
    p, ok = _params(), judges_valid(1.0, 0.5)
    late = tensor(_rows(_common_late()), "simulator")
    c1 = claim1(p, *late, ok)
    assert c1.verdict == "reproduced" and c1.details["count"] == 8 and c1.details["flat_null_count"] == 0
    flat = tensor(_rows(E.flat_hazards(1.5)), "simulator")
    c1 = claim1(p, *flat, ok)
    assert c1.verdict == "not reproduced" and c1.details["count"] == 0
    # its power: the same design with late onsets planted (share 0.75) in 7, 9, 11 behaviours reproduces C1
    power = {row["planted"]: row["reproduced"] for row in c1.details["power"]["rows"]}
    assert set(power) == {7.0, 9.0, 11.0} and min(power.values()) >= 0.8, power
    assert claim2(p, *late, ok).verdict == "reproduced"


def test_rare_flat_behaviours_leave_c1_not_testable():
    """A flat hazard of 0.15 puts ~70% of first occurrences after turn 1 with no rise at all: the card's count
    then measures rarity, so C1 is not testable here rather than reproduced."""
    p, ok = _params(), judges_valid(1.0, 0.5)
    c1 = claim1(p, *tensor(_rows(E.flat_hazards(-1.7)), "simulator"), ok)
    assert c1.details["count"] >= 7 and c1.details["flat_null_count"] >= 7
    failed = [t["name"] for t in c1.testability if not t["passed"]]
    assert c1.verdict == "inconclusive" and failed == ["late onset not implied by rarity"]


def test_c3_follows_the_planted_profile():
    p, ok = _params(), judges_valid(1.0, 0.5)
    top = Hazards.build({"default": -3.0, "empathy": 2.0, "first_person_pronouns": 2.0, "agency": 1.5}, 0.0, 0.0)
    assert claim3(p, *tensor(_rows(top), "simulator"), ok).verdict == "reproduced"
    low = Hazards.build({"default": 1.0, "empathy": -4.0, "validation": -4.0}, 0.0, 0.0)
    c3 = claim3(p, *tensor(_rows(low), "simulator"), ok)
    assert c3.verdict == "not reproduced"
    power = {row["planted"]: row["reproduced"] for row in c3.details["power"]["rows"]}  # margins over the top-4 cut
    assert power[0.2] >= 0.8 and power[0.2] >= power[0.05], power
    silent = Hazards.build({"default": -30.0, "first_person_pronouns": 2.0}, 0.0, 0.0)  # nothing but pronouns
    assert claim3(p, *tensor(_rows(silent), "simulator"), ok).verdict == "not reproduced"  # zeros never rank


@pytest.mark.parametrize("noise, verdict", [((0.15, 0.15, 0.15), "reproduced"), ((0.0, 0.0, 0.0), "inconclusive")])
def test_c4_majority_against_the_best_single_judge(noise, verdict):
    rows = _rows(Hazards.build(-1.0, 0.0, 0.0), noise)
    split = judge_f1_split(rows, JUDGES)
    disagreement = float(np.mean(np.ptp(np.stack([np.array([r[j] for r in rows]) for j in JUDGES]), axis=0)))
    assert claim4(_params(), split, JUDGES, disagreement).verdict == verdict


def test_c4_with_a_judge_at_the_ceiling_is_not_testable():
    """A perfect J1 (as a lexicon written with the simulator's own cue words nearly is): no majority can beat it, so
    C4 is not testable here rather than not reproduced."""
    rows = _rows(Hazards.build(-1.0, 0.0, 0.0), (0.0, 0.3, 0.3))
    split = judge_f1_split(rows, JUDGES)
    disagreement = float(np.mean(np.ptp(np.stack([np.array([r[j] for r in rows]) for j in JUDGES]), axis=0)))
    c4 = claim4(_params(), split, JUDGES, disagreement)
    failed = [t["name"] for t in c4.testability if not t["passed"]]
    assert c4.verdict == "inconclusive" and failed == ["best single judge below the ceiling"]


def test_c4_not_reproduced_carries_its_power():
    """A good J1 below the ceiling beside two noisy judges: the majority loses to J1 (not reproduced), and the
    record says how often this design would have reproduced C4 had the majority won by 0..10 times the band."""
    rows = _rows(Hazards.build(-1.0, 0.0, 0.0), (0.05, 0.35, 0.35))
    split = judge_f1_split(rows, JUDGES)
    disagreement = float(np.mean(np.ptp(np.stack([np.array([r[j] for r in rows]) for j in JUDGES]), axis=0)))
    c4 = claim4(_params(), split, JUDGES, disagreement)
    assert c4.verdict == "not reproduced" and c4.effect < 0
    rows_ = c4.details["power"]["rows"]
    assert [r["planted"] for r in rows_] == pytest.approx([k * 0.01 for k in c4.details["power"]["planted_in_deltas"]])
    assert rows_[0]["reproduced"] <= 0.2 and rows_[-1]["reproduced"] >= rows_[0]["reproduced"] + 0.3, rows_
