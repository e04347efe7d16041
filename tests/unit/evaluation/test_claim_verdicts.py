"""Specification of components.evaluation.claims: the standard rule, the claim record, claims.json."""

from __future__ import annotations

import copy
import dataclasses
import functools
import json

import numpy as np
import pytest

from components.errors import DataError, ParamsError
from components.evaluation.claims import (
    FIELDS,
    ClaimResult,
    claims_document,
    combine_all,
    decide,
    decide_excludes,
    decide_probability,
    evaluate_standard,
    validate_claims_document,
)

SEEDS = np.repeat([0, 1, 2], 200)


def paired(effect: float, noise: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Baseline scores around 70 and method = baseline + effect + noise, on 600 paired items."""
    rng = np.random.default_rng(seed)
    baseline = rng.normal(70.0, 10.0, size=SEEDS.size)
    return baseline + effect + rng.normal(0.0, noise, size=SEEDS.size), baseline


def run(effect: float, noise: float, direction: str = "greater", delta: float = 1.0) -> ClaimResult:
    method, baseline = paired(effect, noise)
    return evaluate_standard(
        "C1",
        "method beats baseline",
        method_values=method,
        baseline_values=baseline,
        seeds=SEEDS,
        direction=direction,
        delta=delta,
        metric="accuracy",
        method="m",
        baseline="b",
        unit="items",
        seed=0,
        n_resamples=2000,
    )


def test_large_clear_positive_effect_is_reproduced():
    r = run(effect=5.0, noise=2.0)
    assert r.verdict == "reproduced"
    assert r.effect == pytest.approx(5.0, abs=0.3) and r.ci_low > 1.0
    assert r.per_seed_signs == [1, 1, 1] and r.n_seeds == 3 and r.n_units == 600


def test_clear_negative_effect_is_not_reproduced():
    r = run(effect=-5.0, noise=2.0)
    assert r.verdict == "not reproduced" and r.ci_high < 0
    assert r.per_seed_signs == [-1, -1, -1]


def test_tiny_effect_with_tight_ci_inside_delta_is_not_reproduced():
    r = run(effect=0.2, noise=0.5)
    assert 0 < r.ci_low < r.ci_high < 1.0  # significant, but below the practical threshold
    assert r.verdict == "not reproduced"


def test_noisy_effect_straddling_zero_is_inconclusive():
    r = run(effect=0.5, noise=30.0)
    assert r.ci_low < 0 < r.ci_high and r.ci_high - r.ci_low > 2.0
    assert r.verdict == "inconclusive"


def test_direction_less_mirrors_greater():
    assert run(effect=-5.0, noise=2.0, direction="less").verdict == "reproduced"
    assert run(effect=5.0, noise=2.0, direction="less").verdict == "not reproduced"
    assert run(effect=0.5, noise=30.0, direction="less").verdict == "inconclusive"


@pytest.mark.parametrize(
    ("lo", "hi", "direction", "threshold", "delta", "verdict"),
    [
        (0.5, 2.0, "greater", 0.0, 0.0, "reproduced"),
        (0.0, 2.0, "greater", 0.0, 0.0, "inconclusive"),  # touching the threshold is not "entirely above"
        (-2.0, -0.5, "greater", 0.0, 0.0, "not reproduced"),
        (-0.5, 0.5, "greater", 0.0, 1.0, "not reproduced"),  # inside +-delta: no practical effect
        (-1.0, 1.0, "greater", 0.0, 1.0, "not reproduced"),  # the band is closed
        (-0.5, 1.5, "greater", 0.0, 1.0, "inconclusive"),
        (2.5, 3.0, "greater", 2.0, 0.0, "reproduced"),  # a stated threshold replaces 0
        (1.0, 1.9, "greater", 2.0, 0.0, "not reproduced"),
        (-2.0, -0.5, "less", 0.0, 0.0, "reproduced"),
        (0.5, 2.0, "less", 0.0, 0.0, "not reproduced"),
    ],
)
def test_decide_table(lo, hi, direction, threshold, delta, verdict):
    assert decide(lo, hi, direction=direction, threshold=threshold, delta=delta) == verdict


def test_decide_rejects_bad_arguments():
    with pytest.raises(ParamsError, match="direction"):
        decide(0.0, 1.0, direction="up", delta=0.0)
    with pytest.raises(ParamsError, match="delta"):
        decide(0.0, 1.0, direction="greater", delta=-1.0)
    with pytest.raises(DataError, match="ci_low"):
        decide(float("nan"), 1.0, direction="greater", delta=0.0)
    with pytest.raises(DataError, match="ci_low 2.0 > ci_high 1.0"):
        decide(2.0, 1.0, direction="greater", delta=0.0)


def test_decide_excludes_is_two_sided():
    assert decide_excludes(0.1, 0.3) == "reproduced"
    assert decide_excludes(-0.3, -0.1) == "reproduced"
    assert decide_excludes(-0.1, 0.3) == "inconclusive"
    assert decide_excludes(-0.01, 0.01, delta=0.05) == "not reproduced"


@pytest.mark.parametrize(
    ("p", "verdict"),
    [
        (1.0, "reproduced"),
        (0.95, "reproduced"),
        (0.9499, "inconclusive"),
        (0.5, "inconclusive"),
        (0.0501, "inconclusive"),
        (0.05, "not reproduced"),
        (0.0, "not reproduced"),
    ],
)
def test_probability_rule_boundaries(p, verdict):
    assert decide_probability(p) == verdict


def test_probability_rule_rejects_out_of_range():
    with pytest.raises(DataError, match="probability"):
        decide_probability(1.2)
    with pytest.raises(ParamsError, match="lo < hi"):
        decide_probability(0.5, hi=0.1, lo=0.9)


def test_combine_all_needs_every_part():
    assert combine_all(["reproduced", "reproduced"]) == "reproduced"
    assert combine_all(["reproduced", "inconclusive"]) == "inconclusive"
    assert combine_all(["reproduced", "not reproduced", "inconclusive"]) == "not reproduced"


def test_units_that_are_seeds_are_resampled_as_clusters_and_signs_are_per_seed():
    r = evaluate_standard(
        "C2",
        "s",
        method_values=[2.0, 3.0, 1.5, 2.5, -0.5],
        baseline_values=None,
        seeds=[11, 12, 13, 14, 15],
        direction="greater",
        delta=0.0,
        metric="m",
        method="m",
        baseline=None,
        unit="seeds",
        seed=0,
        n_resamples=2000,
    )
    assert r.details["resampling"] == "two-stage (clusters, then units)"
    assert r.ci_low < r.ci_high  # a stratum per unit would have collapsed the CI to a point
    assert r.per_seed_signs == [1, 1, 1, 1, -1] and r.n_seeds == 5


def test_evaluate_standard_is_deterministic_by_seed():
    assert run(effect=1.5, noise=5.0).to_dict() == run(effect=1.5, noise=5.0).to_dict()


@functools.cache
def _good_doc() -> dict:
    return claims_document(
        "qualitypajama",
        "default",
        [run(5.0, 2.0), dataclasses.replace(run(-5.0, 2.0), id="C2")],
        extra={"git_commit": "abc123"},
    )


def good_doc() -> dict:
    return copy.deepcopy(_good_doc())


def test_claims_document_layout_summary_and_json_round_trip():
    doc = good_doc()
    assert list(doc)[:4] == ["paper", "profile", "claims", "summary"] and doc["git_commit"] == "abc123"
    assert doc["summary"] == {"reproduced": 1, "not reproduced": 1, "inconclusive": 0}
    assert set(doc["claims"][0]) == set(FIELDS)
    back = json.loads(json.dumps(doc, allow_nan=False))  # strict JSON: no NaN, no numpy types
    validate_claims_document(back)
    assert ClaimResult.from_dict(back["claims"][0]) == ClaimResult.from_dict(doc["claims"][0])


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d["claims"][0].pop("ci_low"), r"claims\[0\]: missing field\(s\) \['ci_low'\]"),
        (lambda d: d["claims"][0].update(verdict="yes"), r"claims\[0\]\.verdict: 'yes' is not one of"),
        (lambda d: d["claims"][0].update(rule="vibes"), r"claims\[0\]\.rule"),
        (lambda d: d["claims"][0].update(n_seeds=-1), r"claims\[0\]\.n_seeds"),
        (lambda d: d["claims"][0].update(per_seed_signs=[2]), r"claims\[0\]\.per_seed_signs"),
        (lambda d: d["claims"][0].update(effect="big"), r"claims\[0\]\.effect"),
        (lambda d: d["claims"][0].update(colour="red"), r"unknown field\(s\) \['colour'\]"),
        (lambda d: d["claims"][1].update(id="C1"), r"duplicate claim id 'C1'"),
        (lambda d: d["summary"].update(reproduced=2), r"\.summary: expected"),
        (lambda d: d.pop("paper"), r"\.paper"),
        # a verdict that disagrees with its own CI (e.g. a hard-coded constant) is rejected
        (lambda d: d["claims"][1].update(verdict="reproduced"), r"claims\[1\]\.verdict: 'reproduced' but rule"),
    ],
)
def test_schema_validation_rejects_violations(edit, match):
    doc = good_doc()
    edit(doc)
    with pytest.raises(DataError, match=match):
        validate_claims_document(doc)


def test_probability_and_composite_claims_validate():
    base = run(5.0, 2.0).to_dict()
    prob = {
        **base,
        "id": "C3",
        "rule": "probability",
        "direction": None,
        "effect": 0.97,
        "ci_low": None,
        "ci_high": None,
        "verdict": "reproduced",
        "details": {"p_hi": 0.95, "p_lo": 0.05},
    }
    comp = {
        **base,
        "id": "C4",
        "rule": "composite",
        "verdict": "inconclusive",
        "combine": "all",
        "parts": [base, {**base, "id": "C4b", "ci_low": -1.0, "verdict": "inconclusive"}],
    }
    doc = claims_document("qualitypajama", "smoke", [prob, comp])
    assert doc["summary"] == {"reproduced": 1, "not reproduced": 0, "inconclusive": 1}
    with pytest.raises(DataError, match="claims\\[0\\].verdict"):
        claims_document("qualitypajama", "smoke", [{**prob, "effect": 0.5}])


def test_extra_keys_cannot_overwrite_reserved_fields():
    with pytest.raises(ParamsError, match="'summary'"):
        claims_document("qualitypajama", "default", [run(5.0, 2.0)], extra={"summary": {}})


def test_combine_any_needs_one_reproduced_or_all_rejected():
    from components.evaluation.claims import combine_any

    assert combine_any(["inconclusive", "reproduced"]) == "reproduced"
    assert combine_any(["not reproduced", "not reproduced"]) == "not reproduced"
    assert combine_any(["not reproduced", "inconclusive"]) == "inconclusive"
    with pytest.raises(ParamsError, match="combine"):  # no parts is no verdict (a composite needs parts)
        combine_any([])
