"""Specification of the rules added for trusted verdicts: the band around the null, non-inferiority,
censored units, single-seed claims, composites re-derived from their parts, and the reason in words."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from components.errors import DataError
from components.evaluation import claims as CL

SEEDS = np.repeat([0, 1, 2, 3, 4], 60)


def std(method, baseline, clusters=SEEDS, **kw):
    base = {
        "direction": "greater",
        "delta": 1.0,
        "metric": "acc",
        "method": "m",
        "baseline": "b",
        "unit": "items",
        "seed": 0,
        "n_resamples": 2000,
    }
    return CL.evaluate_standard(
        kw.pop("id", "C1"), "s", method_values=method, baseline_values=baseline, clusters=clusters, **{**base, **kw}
    )


def shifted(effect, noise=1.0, seed=0, n=SEEDS.size):
    rng = np.random.default_rng(seed)
    b = rng.normal(50, 5, n)
    return b + effect + rng.normal(0, noise, n), b


@pytest.mark.parametrize(
    ("lo", "hi", "threshold", "null", "delta", "verdict"),
    [
        (0.99, 1.01, 1.0, 1.0, 0.02, "not reproduced"),  # a ratio: no effect means 1, not 0
        (1.05, 1.20, 1.0, 1.0, 0.02, "reproduced"),
        (-0.4, -0.2, -0.5, 0.0, 0.1, "reproduced"),  # the band sits at the null (0), not at the threshold (-0.5)
        (-0.05, 0.05, -0.5, 0.0, 0.1, "not reproduced"),  # inside 0 +- 0.1 although above the threshold
    ],
)
def test_no_effect_band_is_centred_on_the_null(lo, hi, threshold, null, delta, verdict):
    assert CL.decide(lo, hi, direction="greater", threshold=threshold, null=null, delta=delta) == verdict


@pytest.mark.parametrize(
    ("lo", "hi", "direction", "verdict"),
    [
        (-0.5, 2.0, "greater", "reproduced"),
        (-1.5, 2.0, "greater", "inconclusive"),
        (-3.0, -1.2, "greater", "not reproduced"),
        (-0.9, -0.2, "greater", "reproduced"),
        (-2.0, 0.5, "less", "reproduced"),
        (1.2, 3.0, "less", "not reproduced"),
        (0.5, 1.5, "less", "inconclusive"),
    ],
)
def test_non_inferiority_with_a_one_point_margin(lo, hi, direction, verdict):
    assert CL.decide_noninferior(lo, hi, direction=direction, margin=1.0) == verdict


def test_non_inferiority_claim_crossing_zero_but_above_minus_margin_is_reproduced():
    m, b = shifted(-0.3, noise=2.0)
    r = std(m, b, rule="non-inferiority", margin=1.0, delta=None)
    assert r.ci_low < 0 < r.ci_high or r.ci_high < 0
    assert r.ci_low > -1.0 and r.verdict == "reproduced" and r.threshold == -1.0
    worse = std(*shifted(-3.0, noise=2.0), rule="non-inferiority", margin=1.0, delta=None)
    assert worse.verdict == "not reproduced"


def test_both_sides_at_the_cap_are_censored_not_ties():
    cap = np.full(40, 5000.0)
    r = std(cap, cap, clusters=np.repeat(range(4), 10), censored=np.ones(40, bool), direction="less", delta=50.0)
    assert (r.ci_low, r.ci_high) == (0.0, 0.0)
    assert r.verdict == "inconclusive" and r.n_censored == 40 and r.uncensored is None
    assert "censored" in r.reason and "no uncensored unit" in r.reason


def test_a_verdict_that_changes_without_the_censored_units_is_inconclusive():
    # uncensored units show the method 10 calls cheaper; 30 ties at the cap pull the CI into the no-effect band
    m = np.r_[np.full(45, 5000.0), np.full(5, 90.0)]
    b = np.r_[np.full(45, 5000.0), np.full(5, 100.0)]
    cens = np.r_[np.ones(45, bool), np.zeros(5, bool)]
    clusters = np.tile(range(5), 10)
    r = std(m, b, clusters=clusters, censored=cens, direction="less", delta=3.0)
    assert r.uncensored["ci_high"] < -3.0  # without the ties the method is clearly cheaper
    assert r.verdict == "inconclusive" and "rests on 45 of 50 censored units" in r.reason
    clear = std(m, b, clusters=clusters, direction="less", delta=3.0)  # the same numbers, the cap not recorded
    assert clear.verdict == "not reproduced"  # what the old code reported: a tie called "no practical effect"


def test_censored_units_that_do_not_change_the_verdict_are_only_counted():
    m, b = shifted(5.0)
    cens = np.zeros(SEEDS.size, bool)
    cens[:3] = True
    r = std(m, b, censored=cens)
    assert r.verdict == "reproduced" and r.n_censored == 3 and "3 censored units counted" in r.reason


def test_one_seed_is_decided_for_that_one_trained_model_and_says_so():
    """The rule (step 2): with a single seed the CI covers items only, and the report says that the verdict holds
    for that one trained model; with no seed at all nothing can be compared."""
    m, b = shifted(5.0, n=100)
    r = std(m, b, clusters=np.zeros(100))
    assert r.ci_low > 1.0 and r.verdict == "reproduced" and "one trained model" in r.reason
    assert "one trained model" in r.details["interval"]
    assert CL.derive_verdict({**r.to_dict(), "n_seeds": 0}) == "inconclusive"
    fixed = std(m, b, clusters=np.zeros(100), cluster_unit=None)  # e.g. a deterministic oracle: no model to vary
    assert fixed.verdict == "reproduced"


def parts_and_composite():
    good = std(*shifted(5.0), id="C1/a")
    bad = std(*shifted(-5.0), id="C1/b")
    pre = std(*shifted(5.0, seed=3), id="P0")
    return (
        good,
        bad,
        CL.composite(
            "C1",
            "both",
            [good, bad],
            how="any",
            preconditions=[pre],
            metric="acc",
            method="m",
            baseline="b",
            unit="items",
        ),
    )


def test_composite_is_derived_from_its_parts_and_preconditions():
    good, bad, comp = parts_and_composite()
    assert comp.verdict == "reproduced" and comp.parts[1]["verdict"] == "not reproduced"
    assert "any of 2 parts" in comp.reason
    failed_pre = std(*shifted(-5.0, seed=3), id="P0")
    gated = CL.composite(
        "C1", "both", [good], preconditions=[failed_pre], metric="acc", method="m", baseline="b", unit="items"
    )
    assert gated.verdict == "inconclusive" and "precondition P0 not met" in gated.reason


def every_verdict_path(record: dict, path=()):
    yield path
    for k in ("parts", "preconditions"):
        for i, sub in enumerate(record[k]):
            yield from every_verdict_path(sub, (*path, k, i))


def test_every_hand_edited_verdict_in_a_composite_is_caught():
    *_, comp = parts_and_composite()
    doc = CL.claims_document("p", "default", [comp])
    paths = list(every_verdict_path(doc["claims"][0]))
    assert len(paths) == 4  # the claim, two parts, one precondition
    for path in paths:
        for new in CL.VERDICTS:
            edited = copy.deepcopy(doc)
            node = edited["claims"][0]
            for key in path:
                node = node[key]
            if node["verdict"] == new:
                continue
            node["verdict"] = new
            edited["summary"] = {v: sum(c["verdict"] == v for c in edited["claims"]) for v in CL.VERDICTS}
            with pytest.raises(DataError, match="verdict"):
                CL.validate_claims_document(edited)


def test_a_composite_without_parts_is_refused():
    rec = std(*shifted(5.0)).to_dict()
    with pytest.raises(DataError, match="composite needs its parts"):
        CL.claims_document("p", "default", [{**rec, "rule": "composite", "combine": "all"}])


@pytest.mark.parametrize(
    ("rule", "effect", "details", "direction", "verdict"),
    [
        ("p-value", 0.2, {"p_value": 0.01, "alpha": 0.05}, "greater", "reproduced"),
        ("p-value", 0.2, {"p_value": 0.30, "alpha": 0.05}, "greater", "inconclusive"),
        ("p-value", -0.1, {"p_value": 0.90, "alpha": 0.05}, "greater", "not reproduced"),
        ("point", 0.8, {}, "greater", "reproduced"),
        ("point", 0.5, {}, "greater", "not reproduced"),
        ("check", None, {"passed": True, "what": "fit identified"}, None, "reproduced"),
        ("check", None, {"passed": False, "what": "fit identified"}, None, "not reproduced"),
    ],
)
def test_rules_without_a_ci(rule, effect, details, direction, verdict):
    r = CL.simple(
        "G",
        "g",
        rule=rule,
        effect=effect,
        details=details,
        direction=direction,
        threshold=0.5 if rule == "point" else None,
        metric="m",
        method="m",
        baseline=None,
        unit="runs",
        n_units=1,
    )
    assert r.verdict == verdict and r.reason
    edited = {**r.to_dict(), "verdict": next(v for v in CL.VERDICTS if v != verdict)}
    with pytest.raises(DataError, match="verdict"):
        CL.claims_document("p", "default", [edited])


def test_reasons_say_why_in_words():
    assert "spans 0" in std(*shifted(0.5, noise=40.0)).reason
    assert "lies above 0" in std(*shifted(5.0)).reason
    assert "no practical effect" in std(*shifted(0.05, noise=0.2), delta=1.0).reason


@pytest.mark.parametrize(
    ("verdicts", "k", "expected"),
    [
        (["reproduced", "reproduced", "not reproduced"], 2, "reproduced"),
        (["reproduced", "inconclusive", "not reproduced"], 2, "inconclusive"),
        (["reproduced", "not reproduced", "not reproduced"], 2, "not reproduced"),
        (["inconclusive"] * 3, 3, "inconclusive"),
    ],
)
def test_at_least_k_of_n(verdicts, k, expected):
    assert CL.combine(verdicts, "at_least", k) == expected


def test_at_least_composite_validates_and_refuses_a_hand_edit():
    parts = [std(*shifted(5.0), id="a"), std(*shifted(5.0, seed=1), id="b"), std(*shifted(-5.0), id="c")]
    comp = CL.composite(
        "C1", "2 of 3", parts, how="at_least", min_parts=2, metric="m", method="m", baseline="b", unit="items"
    )
    assert comp.verdict == "reproduced" and "at least 2 of 3 parts" in comp.reason
    doc = CL.claims_document("p", "default", [comp])
    doc["claims"][0]["min_parts"] = 3
    with pytest.raises(DataError, match="verdict"):
        CL.validate_claims_document(doc)


def test_an_open_ci_with_censored_units_does_not_blame_them():
    m, b = shifted(0.3, noise=30.0)
    cens = np.zeros(SEEDS.size, bool)
    cens[:30] = True
    r = std(m, b, censored=cens)
    assert r.verdict == "inconclusive" and "spans 0" in r.reason and "rests on" not in r.reason
