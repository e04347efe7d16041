"""ICQL's claims on small hand-built evaluation rows with known verdicts (default profile: 3 seeds x 20 episodes)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from components.evaluation.claims import claims_document
from components.evaluation.rank_bootstrap import spearman_gap_samples, spearman_gap_simulator, spearman_gaps
from flows.icql.claims import C1, all_claims, claim2, claim4, compare, scores_by
from flows.icql.params import PRESETS, Params
from flows.runtime.params import resolve
from tests.claims_checks import assert_every_verdict_flip_is_caught


@pytest.fixture(scope="module")
def p():
    return resolve(Params, PRESETS, slug="icql", profile="default", overrides=["claims.n_resamples=2000"])


def episodes(effects: dict, *, seeds=(0, 1, 2), n=20, noise=3.0, base=5.0, rng_seed=0) -> list[dict]:
    """Rows like evaluate's episodes.jsonl: ``effects[(task, method)]`` = score shift per seed (a list) or for all.
    Two calls with the same ``rng_seed`` draw the same noise: give another one to rows that are paired with them."""
    rng = np.random.default_rng(rng_seed)
    rows = []
    for (task, method), eff in effects.items():
        for i, s in enumerate(seeds):
            shift = eff[i] if isinstance(eff, (list, tuple)) else eff
            for e in range(n):
                rows.append(
                    {
                        "task": task,
                        "method": method,
                        "seed": s,
                        "episode": e,
                        "score": float(base + shift + rng.normal(0, noise)),
                    }
                )
    return rows


def c1(p, rows):
    return compare(p, scores_by(rows), C1, (4, "icql"), (4, "iql"))


def test_c1_reproduced_when_every_seed_gains(p):
    r = c1(p, episodes({(4, "iql"): 0.0, (4, "icql"): 10.0}))
    assert r.verdict == "reproduced" and "lies above 0" in r.reason
    assert (r.n_seeds, r.n_units, r.per_seed_signs) == (3, 60, [1, 1, 1])
    assert r.details["resampling"] == "two-stage (clusters, then units)" and r.cluster_unit == "seed"


def test_c1_not_reproduced_when_icql_is_worse(p):
    r = c1(p, episodes({(4, "iql"): 0.0, (4, "icql"): -10.0}))
    assert r.verdict == "not reproduced" and "lies below 0" in r.reason


def test_c1_seed_disagreement_is_inconclusive_although_episodes_are_tight(p):
    # seed effects +12, +1, -4: the old seed-stratified CI (seeds held fixed) lies well above 0; resampling seeds
    # makes the CI span 0
    r = c1(p, episodes({(4, "iql"): 0.0, (4, "icql"): [12.0, 1.0, -4.0]}, noise=0.5))
    assert r.verdict == "inconclusive" and "spans 0" in r.reason
    assert r.per_seed_signs == [1, 1, -1]


def test_c1_with_one_seed_is_decided_for_that_one_trained_model_and_says_so(p):
    # the standard rule (issue 45): one seed is decided on its episodes alone, and the reason says so
    r = c1(p, episodes({(4, "iql"): 0.0, (4, "icql"): 10.0}, seeds=(0,)))
    assert r.verdict == "reproduced" and "one trained model" in r.reason
    assert (r.n_seeds, r.n_units, r.per_seed_signs) == (1, 20, [1])


def test_c2_interaction_reproduced_and_missing_task_is_inconclusive(p):
    rows = episodes({(4, "iql"): 0.0, (4, "icql"): 10.0, (1, "iql"): 0.0, (1, "icql"): 0.0})
    r = claim2(p, scores_by(rows))
    assert r.verdict == "reproduced" and r.details["gap4"] == pytest.approx(10.0, abs=1.5)
    r = claim2(p, scores_by([e for e in rows if e["task"] == 4]))
    assert r.verdict == "inconclusive"
    assert r.reason == "not testable here: icql/iql on both tasks not run in this profile"


def qdata(seeds=(0, 1, 2), *, icql_noise=0.3, iql_noise=2.0, n_traj=20, length=15) -> dict:
    """Like evaluate's q_t4.npz: dataset trajectories (episode ids), returns-to-go G, Q-hat per critic run."""
    rng = np.random.default_rng(1)
    ep = np.repeat(np.arange(n_traj) * 7, length)  # episode ids need not be 0..n-1
    g = np.round(rng.random(ep.size) * 4) / 4  # sparse-reward returns: many ties
    out = {"episode": ep, "G": g}
    for s in seeds:
        out[f"t4-icql-s{s}"] = g + rng.normal(0, icql_noise, g.size)
        out[f"t4-iql-s{s}"] = g + rng.normal(0, iql_noise, g.size)
    return out


def test_c4_reproduced_not_reproduced_and_single_seed(p):
    r = claim4(p, qdata(), [0, 1, 2])
    assert r.verdict == "reproduced" and (r.n_seeds, r.n_units) == (3, 20) and r.ci_low <= r.effect <= r.ci_high
    assert r.details["resampling"] == "two-stage (seeds, then trajectories)" and r.per_seed_signs == [1, 1, 1]
    r = claim4(p, qdata(icql_noise=2.0, iql_noise=0.3), [0, 1, 2])
    assert r.verdict == "not reproduced"
    r = claim4(p, qdata(seeds=(0,)), [0])
    assert r.verdict == "reproduced" and "one trained model" in r.reason and r.n_seeds == 1
    assert claim4(p, None, [0, 1, 2]).verdict == "inconclusive"


def test_c4_bootstrap_equals_spearman_on_the_repeated_rows():
    """One resample with one seed: the fast ranks equal scipy's Spearman on the drawn trajectories' rows."""
    q = qdata(seeds=(0,), n_traj=6, length=5)
    ep, g, qa, qb = q["episode"], q["G"], q["t4-icql-s0"], q["t4-iql-s0"]
    got = spearman_gap_samples([qa], [qb], g, ep, n_resamples=1, seed=3)[0]
    rng = np.random.default_rng(3)
    rng.integers(0, 1, size=(1, 1))  # the seed draw
    picks = rng.integers(0, 6, size=(1, 6))[0]
    rows = np.concatenate([np.flatnonzero(ep == np.unique(ep)[t]) for t in picks])
    want = spearmanr(qa[rows], g[rows]).statistic - spearmanr(qb[rows], g[rows]).statistic
    assert got == pytest.approx(want, abs=1e-9)


def test_every_verdict_in_the_document_rederives(p):
    # icql-random scores 10 below icql on every seed (it shares each seed's shift): C3 reproduced, while C1 and C2
    # (icql - iql: +12, +1, -4 by seed) stay inconclusive
    icql = [12.0, 1.0, -4.0]
    rows = episodes(
        {
            (4, "iql"): 0.0,
            (4, "icql"): icql,
            (4, "icql-random"): [x - 10.0 for x in icql],
            (1, "iql"): 0.0,
            (1, "icql"): 0.0,
        }
    )
    doc = claims_document("icql", "default", all_claims(p, rows, qdata()))
    assert [c["id"] for c in doc["claims"]] == ["C1", "C2", "C3", "C4"]
    assert [c["verdict"] for c in doc["claims"]] == ["inconclusive", "inconclusive", "reproduced", "reproduced"]
    assert doc["claims"][0]["paper_value"].startswith("D4RL means") and "79.3" in doc["claims"][2]["paper_value"]
    assert assert_every_verdict_flip_is_caught(doc) == 2 * 4


def test_c4_draws_the_standard_10000_resamples_of_the_default():
    """Issue 19: C4's two-stage Spearman bootstrap uses claims.n_resamples (10,000 in the default profile); the
    separate claims.q_resamples (1,000) is gone and now an unknown key."""
    from components.errors import ParamsError

    default = resolve(Params, PRESETS, slug="icql", profile="default")
    r = claim4(default, qdata(n_traj=8, length=6), [0, 1, 2])
    assert default.claims.n_resamples == 10_000 and r.details["n_resamples"] == 10_000
    with pytest.raises(ParamsError, match="q_resamples"):
        resolve(Params, PRESETS, slug="icql", profile="default", overrides=["claims.q_resamples=1000"])


def test_c2_not_reproduced_carries_a_power_check_that_sees_both_tasks_noise(p):
    """Fair to the paper: C2's power comes from the interaction's own units (gap with 4 subtasks minus gap with 1,
    per (seed, episode)). Noisier 1-subtask episodes must lower it: a check on the 4-subtask gap alone would not."""
    q = p.model_copy(deep=True)
    q.claims.power_sims, q.claims.power_resamples, q.claims.power_deltas = 40, 300, [0.0, 2.0]

    def run(noise1: float):
        rows = episodes({(4, "iql"): 0.0, (4, "icql"): 0.0}, noise=1.0)
        # the 1-subtask episodes draw their own noise (rng_seed=1): with the same draws as the 4-subtask ones, every
        # paired interaction difference would equal -6 exactly, and the claim would not be testable here
        rows += [dict(r, task=1) for r in episodes({(1, "iql"): 0.0, (1, "icql"): 6.0}, noise=noise1, rng_seed=1)]
        return claim2(q, scores_by(rows))

    tight, noisy = run(1.0), run(12.0)
    assert tight.verdict == "not reproduced" and [r["planted"] for r in tight.details["power"]["rows"]] == [0.0, 4.0]
    (t0, t2), (n0, n2) = tight.details["power"]["rows"], noisy.details["power"]["rows"]
    assert t0["reproduced"] <= 0.1 and n0["reproduced"] <= 0.1
    assert t2["reproduced"] >= 0.9 and n2["reproduced"] <= t2["reproduced"] - 0.4


def test_c4_offsets_move_every_resample_by_the_drawn_seeds_mean_offset():
    """A simulated run's seed effects enter C4's bootstrap as per-seed offsets: with one seed every resample moves
    by its offset; with equal offsets on every seed, too."""
    q = qdata(n_traj=8, length=6)
    qa, qb = [q[f"t4-icql-s{s}"] for s in (0, 1, 2)], [q[f"t4-iql-s{s}"] for s in (0, 1, 2)]
    args = (q["G"], q["episode"])
    plain = spearman_gap_samples(qa[:1], qb[:1], *args, n_resamples=50, seed=7)
    moved = spearman_gap_samples(qa[:1], qb[:1], *args, n_resamples=50, seed=7, offsets=[0.25])
    assert np.allclose(moved, plain + 0.25)
    plain = spearman_gap_samples(qa, qb, *args, n_resamples=50, seed=7)
    moved = spearman_gap_samples(qa, qb, *args, n_resamples=50, seed=7, offsets=[-0.1, -0.1, -0.1])
    assert np.allclose(moved, plain - 0.1)
    with pytest.raises(ValueError, match="offsets"):
        spearman_gap_samples(qa, qb, *args, n_resamples=5, seed=7, offsets=[0.0])


def test_c4_simulated_runs_keep_the_runs_seed_spread():
    """The power check's simulated runs: centred on the run's gap, with the between-seed spread of the run's
    per-seed gaps (large here: IQL's noise differs by seed) and none with one seed; each CI holds its gap."""
    q = qdata(n_traj=30, length=10, icql_noise=1.0, iql_noise=1.0)
    rng = np.random.default_rng(5)
    for s, noise in zip((0, 1, 2), (0.2, 1.0, 4.0)):  # IQL's critic better on seed 0, far worse on seed 2
        q[f"t4-iql-s{s}"] = q["G"] + rng.normal(0, noise, q["G"].size)
    qa, qb = [q[f"t4-icql-s{s}"] for s in (0, 1, 2)], [q[f"t4-iql-s{s}"] for s in (0, 1, 2)]
    gaps = spearman_gaps(qa, qb, q["G"])
    sim = spearman_gap_simulator(qa, qb, q["G"], q["episode"], n_resamples=200, level=0.95, n_spread=50)
    runs = np.array([sim(np.random.default_rng(i)) for i in range(40)])
    assert all(lo <= e <= hi for e, lo, hi in runs)
    assert sim.spread["sd"] > 0.5 * gaps.std(ddof=1) and sim.spread["resampling_var"] > 0
    assert abs(runs[:, 0].mean() - gaps.mean()) < 3 * gaps.std(ddof=1) / np.sqrt(40) + 0.02
    one = spearman_gap_simulator(qa[:1], qb[:1], q["G"], q["episode"], n_resamples=200, level=0.95)
    effect, lo, hi = one(np.random.default_rng(0))
    assert one.spread["sd"] == 0.0 and lo <= effect <= hi and hi - lo < runs[:, 2].mean() - runs[:, 1].mean()


def test_c4_not_reproduced_or_inconclusive_carries_its_power_and_the_audit_accepts_it():
    """Issue: C4 was inconclusive without a power check. Now a C4 that is not reproduced carries the share of
    simulated runs of its design that say "reproduced" at each planted gap (multiples of delta_spearman); the
    share grows with the planted gap, and the record audit finds nothing. A reproduced C4 carries none."""
    from tests.flows.test_verdict_records import problems

    small = resolve(
        Params,
        PRESETS,
        slug="icql",
        profile="default",
        overrides=["claims.power_sims=30", "claims.power_resamples=200"],
    )
    r = claim4(small, qdata(icql_noise=1.0, iql_noise=1.0), [0, 1, 2])
    assert r.verdict == "inconclusive"
    power = r.details["power"]
    assert power["n_sim"] == 30 and power["n_resamples"] == 200
    assert [row["planted"] for row in power["rows"]] == pytest.approx([0.0, 0.02, 0.04, 0.1, 0.2])
    shares = [row["reproduced"] for row in power["rows"]]
    assert shares[0] <= 0.1 and shares[-1] >= 0.5 and shares == sorted(shares)
    assert power["between_seed_sd"] >= 0 and "design" in power
    doc = claims_document("icql", "default", [r])
    assert problems(doc) == []
    without = dict(doc["claims"][0], details={k: v for k, v in r.details.items() if k != "power"})
    assert problems({"claims": [without]}) == ["C4: inconclusive without a power check or a reason why none applies"]
    assert "power" not in claim4(small, qdata(), [0, 1, 2]).details  # reproduced: no check needed
