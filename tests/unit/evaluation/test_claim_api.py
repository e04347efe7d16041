"""The typed claim API: explicit keyword-only parameters, Rule/Direction literals checked at declaration."""

from __future__ import annotations

import inspect
import re
from typing import get_args

import numpy as np
import pytest

from components.errors import ParamsError
from components.evaluation import claims as CL
from components.evaluation.claim_spec import AS_DECLARED, ClaimSpec

SPEC = ClaimSpec(
    "C7", "A beats B", metric="accuracy difference", method="A", baseline="B", unit="items", paper_value="+2.1"
)
# Each ClaimSpec method and the claims function it forwards to (the function is the source of the parameter list).
PAIRS = (
    (ClaimSpec.standard, CL.evaluate_standard),
    (ClaimSpec.from_ci, CL.from_ci),
    (ClaimSpec.simple, CL.simple),
    (ClaimSpec.composite, CL.composite),
)
DECLARED = ("statement", "rule", "direction", "metric", "method", "baseline", "unit", "scale_note", "paper_value")
DECLARED += ("cluster_unit", "bounds")


def _values(shift: float = 0.3):
    rng = np.random.default_rng(3)
    b = rng.normal(size=60)
    return b + shift + rng.normal(scale=0.5, size=60), b, np.repeat(np.arange(6), 10)


def test_literals_are_the_allowed_values():
    assert get_args(CL.Rule) == CL.RULES
    assert get_args(CL.Direction) == CL.DIRECTIONS == ("greater", "less", "two-sided")
    assert get_args(CL.CIRule) == CL.CI_RULES == ("standard", "non-inferiority", "ci-excludes")
    assert set(CL.RULES) == {*CL.CI_RULES, *CL.SIMPLE_RULES, "composite"}


@pytest.mark.parametrize("method", [m for pair in PAIRS for m in pair] + [ClaimSpec.part])
def test_signatures_are_explicit_and_annotated(method):
    params = [p for p in inspect.signature(method).parameters.values() if p.name != "self"]
    assert not [p.name for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert not [p.name for p in params if p.kind is inspect.Parameter.VAR_POSITIONAL]
    assert not [p.name for p in params if p.annotation is inspect.Parameter.empty]


@pytest.mark.parametrize(("method", "function"), PAIRS)
def test_spec_methods_take_the_functions_parameters(method, function):
    """Same names, annotations and defaults; a field the claim declares defaults to AS_DECLARED instead."""
    fn = {k: p for k, p in inspect.signature(function).parameters.items() if k != "claim_id"}
    sp = {k: p for k, p in inspect.signature(method).parameters.items() if k != "self"}
    assert set(sp) == set(fn)
    for name, p in sp.items():
        f = fn[name]
        if name in ("statement", "parts"):
            continue
        assert p.kind is inspect.Parameter.KEYWORD_ONLY, name
        if name in DECLARED:
            assert p.default is AS_DECLARED, name
            assert p.annotation == f"{f.annotation} | Declared", name
        else:
            assert (p.default, p.annotation) == (f.default, f.annotation), name


def _arg_lines(doc: str) -> dict[str, str]:
    body = doc.split("Args:", 1)[1]
    return dict(re.findall(r"^\s+(\w+): (.+)$", body, flags=re.M))


def test_standard_documents_every_parameter_as_evaluate_standard_does():
    spec_doc, fn_doc = _arg_lines(ClaimSpec.standard.__doc__), _arg_lines(CL.evaluate_standard.__doc__)
    params = set(inspect.signature(ClaimSpec.standard).parameters) - {"self"}
    assert set(spec_doc) == params
    assert set(fn_doc) == params | {"claim_id"}
    assert {k: fn_doc[k] for k in spec_doc} == spec_doc


def test_a_misspelt_keyword_is_a_type_error():
    a, b, seeds = _values()
    with pytest.raises(TypeError, match="n_resample"):
        SPEC.standard(method_values=a, baseline_values=b, clusters=seeds, delta=0.05, seed=0, n_resample=200)
    with pytest.raises(TypeError, match="direciton"):
        SPEC.part("x", "x", direciton="less")


@pytest.mark.parametrize(
    ("kw", "field", "allowed"),
    [
        ({"rule": "standrad"}, "rule 'standrad'", "standard, non-inferiority, ci-excludes, probability"),
        ({"direction": "up"}, "direction 'up'", "greater, less, two-sided"),
    ],
)
def test_an_unknown_rule_or_direction_fails_at_declaration(kw, field, allowed):
    with pytest.raises(ParamsError, match=f"claim C9: {field} is not one of {allowed}"):
        ClaimSpec("C9", "x", metric="m", method="a", baseline="b", **kw)
    with pytest.raises(ParamsError, match=f"claim C7/x: {field} is not one of {allowed}"):
        SPEC.part("x", "x", **kw)
    a, b, seeds = _values()
    with pytest.raises(ParamsError, match=f"claim C7: {field}"):
        SPEC.standard(method_values=a, baseline_values=b, clusters=seeds, delta=0.05, seed=0, n_resamples=200, **kw)


def test_standard_gives_what_evaluate_standard_gives():
    a, b, seeds = _values()
    numbers = dict(method_values=a, baseline_values=b, clusters=seeds, delta=0.05, seed=0, n_resamples=300)
    got = SPEC.standard(**numbers).to_dict()
    want = CL.evaluate_standard(
        "C7", "A beats B", **numbers, direction="greater", metric="accuracy difference", method="A", baseline="B",
        unit="items", paper_value="+2.1",
    ).to_dict()  # fmt: skip
    assert got == want and got["verdict"] == "reproduced"
    over = SPEC.standard(**numbers, baseline="B2", direction="less", statement="B2 beats A").to_dict()
    want = CL.evaluate_standard(
        "C7", "B2 beats A", **numbers, direction="less", metric="accuracy difference", method="A", baseline="B2",
        unit="items", paper_value="+2.1",
    ).to_dict()  # fmt: skip
    assert over == want and over["verdict"] == "not reproduced"


def test_from_ci_simple_and_composite_give_what_the_functions_give():
    common = dict(metric="accuracy difference", method="A", baseline="B", unit="items", paper_value="+2.1")
    ci = dict(effect=0.3, ci_low=0.1, ci_high=0.5, delta=0.05, n_units=60, n_seeds=1)
    part = SPEC.from_ci(**ci)
    assert part.to_dict() == CL.from_ci("C7", "A beats B", **ci, direction="greater", **common).to_dict()
    point = SPEC.part("p", "A scores", rule="point", cluster_unit=None)
    got = point.simple(effect=0.7, threshold=0.5, n_units=60)
    want = CL.simple("C7/p", "A scores", rule="point", effect=0.7, threshold=0.5, n_units=60, direction="greater",
                     **common)  # fmt: skip
    assert got.to_dict() == want.to_dict() and got.verdict == "reproduced"
    prob = SPEC.part("q", "A is likely better", rule="probability")
    got = prob.simple(effect=0.97, n_units=60, details={"p_hi": 0.95, "p_lo": 0.05})
    want = CL.simple("C7/q", "A is likely better", rule="probability", effect=0.97, n_units=60, cluster_unit="seed",
                     details={"p_hi": 0.95, "p_lo": 0.05}, **common)  # fmt: skip
    assert got.to_dict() == want.to_dict() and got.direction is None
    whole = SPEC.part("all", "A beats B, or likely", rule="composite").composite([part, got], how="any")
    want = CL.composite("C7/all", "A beats B, or likely", [part, got], how="any", **common)
    assert whole.to_dict() == want.to_dict() and whole.verdict == "reproduced"
