"""CER-GOD's claims on small hand-built evaluated rows with known verdicts (default profile, its first 2 graphs,
5/10 seeds)."""

from __future__ import annotations

import numpy as np
import pytest

from components.errors import ParamsError
from components.evaluation.claims import claims_document
from flows.cer_god.claims import all_claims, claim1, claim2, claim3, claim4, leakage
from flows.cer_god.params import PRESETS, Params
from flows.runtime.params import resolve
from tests.claims_checks import assert_every_verdict_flip_is_caught

GRAPHS = ["sbm", "minnesota"]  # the default profile's first two graphs
METHODS = ("cer-god", "cer-god-nomask", "cer-god-nodiv", "dominant", "gae", "leakage-probe")


@pytest.fixture(scope="module")
def p():
    return resolve(Params, PRESETS, slug="cer-god", profile="default", overrides=["claims.n_resamples=2000"])


def make_rows(spec: dict, *, seeds=range(10), noise=0.005, collapsed=None) -> list[dict]:
    """One row per (graph, method, seed): ``spec[method]`` gives the mean metrics ({'auc': ..}, or per graph)."""
    rng = np.random.default_rng(0)
    collapsed = collapsed or {}
    rows = []
    for g in GRAPHS:
        for m in METHODS:
            base = {"auc": 0.7, "trap_auc": 0.7, "rest_auc": 0.7, "f1": 0.5, **spec.get(m, {}), **spec.get((g, m), {})}
            for s in seeds:
                vals = {k: float(np.clip(v + rng.normal(0, noise), 0, 1)) for k, v in base.items()}
                rows.append(
                    {
                        "id": f"{g}/{m}/{s}",
                        "graph": g,
                        "method": m,
                        "seed": s,
                        **vals,
                        "collapsed": bool(s in collapsed.get((g, m), ())),
                        "minority_share": 0.3,
                    }
                )
    return rows


def run(claim, p, rows):
    if claim in (claim1, claim2):
        return claim(p, rows, GRAPHS, leakage(rows, GRAPHS))
    return claim(p, rows, GRAPHS)


GOOD = {
    "cer-god": {"auc": 0.9, "trap_auc": 0.9, "rest_auc": 0.9, "f1": 0.6},
    "dominant": {"auc": 0.7, "f1": 0.5},
    "gae": {"auc": 0.6},
    "leakage-probe": {"auc": 0.5},
    "cer-god-nomask": {"trap_auc": 0.6, "rest_auc": 0.85},
    "cer-god-nodiv": {"auc": 0.6},
}


def test_c1_reproduced_on_both_graphs(p):
    c = run(claim1, p, make_rows(GOOD))
    assert c.verdict == "reproduced" and c.rule == "composite"
    assert [g["id"] for g in c.parts] == ["C1/sbm", "C1/minnesota"]
    assert all(g["preconditions"][0]["rule"] == "point" for g in c.parts)
    leaf = c.parts[0]["parts"][0]
    assert leaf["n_seeds"] == 5 and leaf["per_seed_signs"] == [1] * 5
    assert leaf["details"]["resampling"].startswith("two-stage") and c.paper_value


def test_c1_not_reproduced_when_a_baseline_wins(p):
    rows = make_rows({**GOOD, ("minnesota", "dominant"): {"auc": 0.97}})
    c = run(claim1, p, rows)
    assert c.verdict == "not reproduced"
    assert "not reproduced (C1/minnesota)" in c.reason


def test_c1_leaky_graph_is_inconclusive_even_when_cer_god_wins(p):
    rows = make_rows({**GOOD, ("sbm", "leakage-probe"): {"auc": 0.95}})
    c = run(claim1, p, rows)
    assert c.verdict == "inconclusive"
    sbm = c.parts[0]
    assert sbm["verdict"] == "inconclusive" and "precondition C1/sbm/leakage-guard not met" in sbm["reason"]
    assert [x["verdict"] for x in sbm["parts"]] == ["reproduced", "reproduced"]  # the parts' own numbers are kept
    assert c.parts[1]["verdict"] == "reproduced"


def test_c1_leaky_graph_with_a_failing_other_graph_is_not_reproduced(p):
    rows = make_rows({**GOOD, ("sbm", "leakage-probe"): {"auc": 0.95}, ("minnesota", "gae"): {"auc": 0.97}})
    assert run(claim1, p, rows).verdict == "not reproduced"


def test_c1_inconclusive_when_seeds_disagree(p):
    rows = make_rows(GOOD)
    for r in rows:  # cer-god beats DOMINANT by +0.2 on seeds 0-2, loses by 0.2 on seeds 3-4
        if r["method"] == "dominant" and r["seed"] in (3, 4):
            r["auc"] = 0.99
    c = run(claim1, p, rows)
    assert c.verdict == "inconclusive"
    assert c.parts[0]["parts"][0]["per_seed_signs"] == [1, 1, 1, -1, -1]
    assert "spans 0" in c.parts[0]["parts"][0]["reason"]


def test_c2_reproduced_and_no_practical_effect(p):
    assert run(claim2, p, make_rows(GOOD)).verdict == "reproduced"
    flat = {**GOOD, "cer-god-nomask": {"trap_auc": 0.9, "rest_auc": 0.9}}
    c = run(claim2, p, make_rows(flat, noise=0.001))
    assert c.verdict == "not reproduced" and "no practical effect" in c.parts[0]["parts"][0]["reason"]


def test_c2_guard_makes_a_leaky_graph_inconclusive(p):
    rows = make_rows({**GOOD, ("minnesota", "leakage-probe"): {"auc": 0.99}})
    c = run(claim2, p, rows)
    assert c.verdict == "inconclusive" and c.parts[1]["preconditions"][0]["verdict"] == "not reproduced"


def test_c3_fisher_and_auc(p):
    collapsing = {(g, "cer-god-nodiv"): range(8) for g in GRAPHS}  # 16/20 runs collapse without l_div, 0/20 with
    c = run(claim3, p, make_rows(GOOD, collapsed=collapsing))
    assert c.verdict == "reproduced"
    rate, auc = c.parts
    assert rate["rule"] == "p-value" and rate["details"]["p_value"] < 0.05
    assert rate["details"]["collapsed_without_div"] == 16 and rate["details"]["runs_with_div"] == 20
    assert auc["n_units"] == 20 and auc["details"]["strata"] == ["minnesota", "sbm"] and auc["n_seeds"] == 10


def test_c3_not_testable_without_collapse_and_inconclusive_when_not_significant(p):
    """No run collapses without l_div: the hinge never acted, so the claim cannot be judged (the rule's "not
    testable here"; it used to read as "not reproduced"). Collapses that do occur make it testable."""
    c = run(claim3, p, make_rows(GOOD))
    assert c.verdict == "inconclusive" and c.parts[0]["verdict"] == "inconclusive"
    assert c.parts[0]["reason"].startswith("not testable here: collapse occurs without l_div failed")
    few = {("sbm", "cer-god-nodiv"): [0, 1]}  # 2/20 vs 0/20: the claimed side, one-sided p = 0.24
    c = run(claim3, p, make_rows(GOOD, collapsed=few))
    assert c.parts[0]["verdict"] == "inconclusive" and c.verdict == "inconclusive"
    assert "p = 0.244" in c.parts[0]["reason"]


@pytest.mark.parametrize(
    "diffs, verdict",
    [
        ([0.01, 0.0, 0.02, 0.01, 0.0], "reproduced"),
        ([-0.2, -0.25, -0.15, -0.2, -0.3], "not reproduced"),
        ([-0.04, 0.02, -0.03, 0.01, -0.01], "inconclusive"),
    ],
)
def test_c4_non_inferiority(p, diffs, verdict):
    """Reproduced iff the CI of the F1 difference lies above -0.01; not reproduced iff it lies below."""
    rows = make_rows(GOOD, noise=0.0)
    for r in rows:
        if r["method"] == "cer-god" and r["seed"] < 5:
            r["f1"] = 0.5 + diffs[r["seed"]] + (0.005 if r["graph"] == "sbm" else -0.005)
    c = run(claim4, p, rows)
    assert c.rule == "non-inferiority" and c.threshold == -0.01 and c.verdict == verdict, c.reason
    assert c.n_units == 10 and c.n_seeds == 5 and c.details["strata"] == ["minnesota", "sbm"]


def test_single_seed_is_refused_by_the_params():
    with pytest.raises(ParamsError, match="seeds"):
        resolve(Params, PRESETS, slug="cer-god", profile="default", overrides=["run.seeds=[0]"])


def test_every_verdict_flip_is_caught(p):
    rows = make_rows({**GOOD, ("sbm", "leakage-probe"): {"auc": 0.95}}, collapsed={("sbm", "cer-god-nodiv"): [0]})
    claims, leak = all_claims(p.model_copy(update={"graphs": p.graphs[:2]}), rows)
    doc = claims_document("cer-god", "default", claims, extra={"leakage": leak})
    assert [c["id"] for c in doc["claims"]] == ["C1", "C2", "C3", "C4"]
    assert assert_every_verdict_flip_is_caught(doc) >= 2 * 20
