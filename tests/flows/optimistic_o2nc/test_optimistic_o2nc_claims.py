"""optimistic-o2nc's claims on hand-built runs.jsonl rows with known verdicts (3 functions, 10 seeds, cap 5,000)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from components.evaluation.claims import claims_document
from flows.optimistic_o2nc.claims import all_claims, claim1, claim2, claim3, index_runs, weighted_spearman
from flows.optimistic_o2nc.params import PRESETS, Params
from flows.runtime.params import resolve
from tests.claims_checks import assert_every_verdict_flip_is_caught

FUNCS = ["robust-synthetic", "robust-diabetes", "hard-chain"]
EPS = [0.1, 0.01, 0.001]
SIGMAS = [0.0, 0.01, 0.1]
CAP = 5000


def params(seeds=range(10)):
    grid = (
        f"grid={{'functions': {FUNCS}, 'methods': ['gd', 'cmo23', 'naive-hint', 'odog'], 'eps': {EPS}, "
        f"'sigmas': {SIGMAS}, 'sigma_eps': 0.01, 'seeds': {list(seeds)}, 'budget': {CAP}, "
        f"'stoch_budget': {CAP}}}"
    )
    return resolve(
        Params,
        PRESETS,
        slug="optimistic-o2nc",
        profile="smoke",
        overrides=[grid, "resources.workers=1", "claims.n_resamples=2000"],
    )


@pytest.fixture(scope="module")
def p():
    return params()


def run_row(grid, f, m, eps, sigma, seed, calls) -> dict:
    """A runs.jsonl row; calls at or above the cap mean the run spent its budget (not reached)."""
    reached = calls < CAP
    return {
        "grid": grid,
        "function": f,
        "method": m,
        "eps_rel": eps,
        "sigma_rel": sigma,
        "seed": seed,
        "calls": int(min(calls, CAP)),
        "reached": bool(reached),
        "diverged": False,
    }


def make_rows(ratio: dict | None = None, *, seeds=range(10), base=400.0, naive=None, stoch=None, noise=0.05):
    """Deterministic grid: cmo23 needs ``base``/eps^0.5 calls, odog ``ratio[f]`` times that, naive-hint
    ``naive[f]`` times odog's; noisy grid: ``stoch(sigma, seed, n_det)`` calls for odog, where n_det is its
    deterministic count at that eps (default: n_det * (1 + 10 sigma), rising with sigma), times exp(N(0, 0.1^2))
    at sigma > 0 for a run that reached eps (sigma = 0 repeats the deterministic run call for call). The noise
    makes the per-seed Spearman(sigma, N) differ between seeds: identical per-seed values give a zero-width CI,
    which cannot decide."""
    rng = np.random.default_rng(0)
    srng = np.random.default_rng(1)  # the noisy grid's own stream: the deterministic grid's numbers stay as they were
    ratio = ratio or {f: 0.5 for f in FUNCS}
    naive = naive or {f: 2.0 for f in FUNCS}
    rows = []
    for f in FUNCS:
        for s in seeds:
            for e in EPS:
                cmo = base / np.sqrt(e / EPS[0]) * np.exp(rng.normal(0, noise))
                odog = cmo * ratio[f] * np.exp(rng.normal(0, noise))
                rows += [
                    run_row("det", f, "cmo23", e, 0.0, s, cmo),
                    run_row("det", f, "odog", e, 0.0, s, odog),
                    run_row("det", f, "naive-hint", e, 0.0, s, odog * naive[f] * np.exp(rng.normal(0, noise))),
                    run_row("det", f, "gd", e, 0.0, s, 2 * cmo),
                ]
            det = next(
                r
                for r in rows
                if r["grid"] == "det"
                and r["function"] == f
                and r["method"] == "odog"
                and r["eps_rel"] == 0.01
                and r["seed"] == s
            )
            for sig in SIGMAS:
                n_det = det["calls"]
                calls = n_det if sig == 0 else (stoch(sig, s, n_det) if stoch else n_det * (1 + 10 * sig))
                if sig > 0 and calls < CAP:
                    calls = min(calls * np.exp(srng.normal(0, 0.1)), CAP - 1)
                rows.append(run_row("stoch", f, "odog", 0.01, sig, s, calls))
    return rows


def verdicts(record):
    return {
        q.id if hasattr(q, "id") else q["id"]: (q.verdict if hasattr(q, "verdict") else q["verdict"])
        for q in record.parts
    }


def test_c1_reproduced_on_every_function(p):
    rows = make_rows()
    r = claim1(p, rows, index_runs(rows))
    assert r.verdict == "reproduced" and r.rule == "composite"
    assert "2 functions" in r.statement and r.n_units == 3 * 2 * 10 and r.n_censored == 0
    assert r.details["functions"]["hard-chain"]["median_ratio"] == pytest.approx(0.5, rel=0.1)
    # "at least 2 of 3": one part per function, combined by the core's at_least rule
    assert r.combine == "at_least" and r.min_parts == 2
    assert {q["id"] for q in r.parts} == {"C1/robust-synthetic", "C1/robust-diabetes", "C1/hard-chain"}


@pytest.mark.parametrize(
    "ratios, expected",
    [
        ((0.5, 0.5, 2.0), "reproduced"),  # 2 of 3 functions: enough
        ((0.5, 2.0, 2.0), "not reproduced"),  # 1 of 3 and the others rejected: 2 can no longer be reached
        ((0.5, 2.0, 1.0), "inconclusive"),  # ratio 1 (inside the delta band) is rejected; noise keeps it open below
    ],
)
def test_c1_needs_two_of_three_functions(p, ratios, expected):
    rows = make_rows(dict(zip(FUNCS, ratios)), noise=0.05 if expected != "inconclusive" else 0.4)
    r = claim1(p, rows, index_runs(rows))
    per_f = {f: d["verdict"] for f, d in r.details["functions"].items()}
    assert r.verdict == expected, (per_f, r.reason)


def test_c1_runs_at_the_cap_baseline_caps_are_bounds_method_caps_decide_nothing(p):
    """The rule on censoring (step 3): a pair where only CMO23 hit the cap while ODOG reached counts as a bound
    (CMO23 needs at least its capped count, so the cap can only understate ODOG's lead): a "reproduced" with those
    pairs stands and says so. A pair where ODOG hit the cap is censored: the verdict must not rest on it, and
    at least 2 uncensored seeds must remain."""
    # CMO23 at the cap at the two smallest eps on half the seeds, where ODOG reached: bounds, the lead stands
    rows = make_rows({f: 1.0 for f in FUNCS})
    for r in rows:
        if r["method"] == "cmo23" and r["eps_rel"] < 0.1 and r["seed"] < 5:
            r.update(calls=CAP, reached=False)
    r = claim1(p, rows, index_runs(rows))
    part = r.parts[0]
    assert (part["n_censored"], part["n_censored_bound"]) == (0, 10) and part["verdict"] == "reproduced"
    assert "10 baseline unit(s) censored at the cap count as bounds" in part["reason"]
    assert r.n_censored == 0 and sum(q["n_censored_bound"] for q in r.parts) == 30
    # ODOG at the cap on 7 of 10 seeds, where CMO23 reached: with those pairs ODOG looks worse (CI above 0), on
    # the 3 uncensored seeds it needs half the calls -- the verdict rests on censored pairs
    rows = make_rows(base=200.0)
    for r in rows:
        if r["grid"] == "det" and r["method"] == "odog" and r["eps_rel"] < 0.1 and r["seed"] < 7:
            r.update(calls=CAP, reached=False)
    r = claim1(p, rows, index_runs(rows))
    part = r.parts[0]
    assert part["n_censored"] == 14 and part["uncensored"]["n_seeds"] == 3 and part["ci_low"] > 0
    assert part["uncensored"]["ci_high"] < 0
    assert part["verdict"] == "inconclusive" and "rests on 14 of 20 censored units" in part["reason"]
    assert r.n_censored == 42 and r.verdict == "inconclusive"
    # ODOG at the cap on all but one seed: one uncensored seed cannot carry a seed-level verdict
    rows = make_rows()
    for r in rows:
        if r["grid"] == "det" and r["method"] == "odog" and r["eps_rel"] < 0.1 and r["seed"] >= 1:
            r.update(calls=CAP, reached=False)
    r = claim1(p, rows, index_runs(rows))
    part = r.parts[0]
    assert part["n_censored"] == 18 and part["uncensored"]["n_seeds"] == 1 and part["verdict"] == "inconclusive"
    assert "only 1 uncensored seed left, 2 needed" in part["reason"]


def test_c2_reproduced_not_reproduced_and_ties_at_the_cap_counted(p):
    rows = make_rows()
    r = claim2(p, rows, index_runs(rows))
    assert r.verdict == "reproduced" and (r.n_seeds, r.n_units) == (10, 30) and r.details["strata"] == sorted(FUNCS)
    rows = make_rows(naive={f: 0.5 for f in FUNCS})
    r = claim2(p, rows, index_runs(rows))
    assert r.verdict == "not reproduced" and "counting calls, the naive hint is cheaper" in r.details["finding"]
    # half the pairs have both runs at the cap: not ties but censored; the rest still shows the effect
    rows = make_rows()
    for r in rows:
        if r["method"] in ("odog", "naive-hint") and r["eps_rel"] == 0.001 and r["seed"] % 2:
            r.update(calls=CAP, reached=False)
    r = claim2(p, rows, index_runs(rows))
    assert r.n_censored == 15 and r.uncensored["n_units"] == 15 and r.verdict == "reproduced"
    assert "15 censored units counted" in r.reason
    d = r.details
    assert (d["censored_pairs"], d["both_at_cap_pairs"], d["one_side_censored_pairs"]) == (15, 15, 0)
    assert d["finding"].startswith("benchmark finding") and "15 of 30 pairs censored (15 with both" in d["finding"]
    # no effect where both reached; the naive hint at the cap where ODOG reached: those pairs are bounds (the naive
    # hint needs at least the cap), so the lead they show stands, labelled as resting on bounds
    rows = make_rows(naive={f: 1.0 for f in FUNCS})
    for r in rows:
        if r["method"] == "naive-hint" and r["eps_rel"] == 0.001 and r["seed"] % 2:
            r.update(calls=CAP, reached=False)
    r = claim2(p, rows, index_runs(rows))
    assert (r.n_censored, r.n_censored_bound) == (0, 15) and r.ci_high < 0 and r.verdict == "reproduced"
    assert "15 baseline unit(s) censored at the cap count as bounds" in r.reason
    # the mirror image: ODOG at the cap where the naive hint reached, on 7 of 10 seeds; with those pairs ODOG looks
    # worse (CI above 0), on the 3 uncensored seeds it needs half the calls -- the verdict rests on censored pairs
    rows = make_rows(base=100.0)
    for r in rows:
        if r["grid"] == "det" and r["method"] == "odog" and r["eps_rel"] == 0.001 and r["seed"] < 7:
            r.update(calls=CAP, reached=False)
    r = claim2(p, rows, index_runs(rows))
    assert (r.n_censored, r.n_censored_bound) == (21, 0) and r.ci_low > 0 and r.uncensored["ci_high"] < 0
    assert r.verdict == "inconclusive" and "rests on 21 of 30 censored units" in r.reason


def test_c2_single_seed_has_nothing_to_resample_and_is_inconclusive(p):
    """One seed would be decided for that one model on its items, but C2 has one pair per function (a stratum) at
    one eps: nothing is resampled, the CI has zero width, and a zero-width CI cannot decide."""
    p1 = params(seeds=[0])
    rows = make_rows(seeds=[0])
    r = claim2(p1, rows, index_runs(rows))
    assert (r.n_seeds, r.n_units) == (1, 3) and r.ci_low == r.ci_high
    assert r.verdict == "inconclusive" and "zero-width CI" in r.reason


def test_c3_reproduced_and_each_failing_part_decides(p):
    rows = make_rows()
    r = claim3(p, rows, index_runs(rows))
    # part (c), the card's sigma = 0 match, is declared and not testable here (the oracle draws nothing at
    # sigma = 0), so the composite "all" of the card's three parts is inconclusive even when (a) and (b) hold
    assert [q["id"] for q in r.parts] == ["C3/success", "C3/monotone", "C3/sigma0"]
    assert verdicts(r)["C3/success"] == verdicts(r)["C3/monotone"] == "reproduced"
    c = r.parts[2]
    assert c["verdict"] == "inconclusive" and [t["passed"] for t in c["testability"]] == [False]
    assert c["details"]["within_5pct"] == "30/30" and "not testable here" in c["reason"]
    assert r.verdict == "inconclusive"
    assert r.effect == pytest.approx(r.parts[1]["effect"])  # the headline is the Spearman part
    a = r.parts[0]
    assert a["rule"] == "standard" and a["threshold"] == 0.9 and a["effect"] == 1.0 and a["n_seeds"] == 10
    assert "p_lo" not in a["details"] and r.details["sigma0_identical (report only)"] == "30/30"
    # half the noisy runs fail: the rate's CI lies below 0.9 -- not reproduced (no invented lower cut)
    rows = make_rows(stoch=lambda sig, s, n_det: CAP if s < 5 else n_det * (1 + 10 * sig))
    r = claim3(p, rows, index_runs(rows))
    assert r.parts[0]["ci_high"] < 0.9 and verdicts(r)["C3/success"] == "not reproduced"
    assert r.verdict == "not reproduced"
    # one seed of ten fails everywhere: rate 0.9, its seed-bootstrap CI straddles 0.9 -- inconclusive
    rows = make_rows(stoch=lambda sig, s, n_det: CAP if s == 0 else n_det * (1 + 10 * sig))
    r = claim3(p, rows, index_runs(rows))
    a = r.parts[0]
    assert a["effect"] == pytest.approx(0.9) and a["ci_low"] < 0.9 < a["ci_high"]
    assert verdicts(r)["C3/success"] == "inconclusive"
    # N falls with sigma: the monotone part is rejected, so the claim is
    rows = make_rows(stoch=lambda sig, s, n_det: n_det / (1 + 10 * sig))
    r = claim3(p, rows, index_runs(rows))
    assert verdicts(r)["C3/monotone"] == "not reproduced" and r.verdict == "not reproduced"


def test_c3_one_seed_decides_neither_part(p):
    """One seed is decided for that one model where its units can show something; here neither part can: 6 of 6
    noisy runs reached (exact binomial CI [0.54, 1] spans 0.9), and the Spearman part resamples seeds only."""
    p1 = params(seeds=[0])
    rows = make_rows(seeds=[0])
    r = claim3(p1, rows, index_runs(rows))
    assert r.verdict == "inconclusive"
    a, b, _ = r.parts
    assert a["verdict"] == "inconclusive" and a["n_seeds"] == 1 and a["ci_low"] < 0.9 < a["ci_high"]
    assert a["details"]["interval"].startswith("exact binomial (Clopper-Pearson) on 6 of 6 runs")
    assert b["verdict"] == "inconclusive" and b["n_seeds"] == 1 and "zero-width CI" in b["reason"]


def test_weighted_spearman_equals_scipy_on_repeated_rows():
    rng = np.random.default_rng(2)
    x, y = rng.integers(0, 4, 12).astype(float), rng.integers(0, 5, 12).astype(float)
    w = rng.integers(0, 3, (1, 12)).astype(float)
    rep = np.repeat(np.arange(12), w[0].astype(int))
    assert weighted_spearman(x, y, w)[0] == pytest.approx(spearmanr(x[rep], y[rep]).statistic, abs=1e-12)


def test_every_verdict_in_the_document_rederives(p):
    rows = make_rows({"robust-synthetic": 0.5, "robust-diabetes": 0.5, "hard-chain": 2.0}, base=200.0)
    doc = claims_document("optimistic-o2nc", "default", all_claims(p, rows))
    assert [c["id"] for c in doc["claims"]] == ["C1", "C2", "C3"]
    # C3 is inconclusive: its part (c) is declared and not testable here
    assert [c["verdict"] for c in doc["claims"]] == ["reproduced", "reproduced", "inconclusive"]
    assert all(c["paper_value"] for c in doc["claims"])
    # C1: itself and 3 parts; C2: itself; C3: itself and 3 parts; two flips each
    assert assert_every_verdict_flip_is_caught(doc) == 2 * (4 + 1 + 4)
