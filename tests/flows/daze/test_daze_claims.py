"""daze's claims on synthetic evaluation rows: the verdicts follow the numbers, the reward-integrity check and
the clean-agent precondition can each overturn a claim, and the ratio bootstrap matches its closed form."""

from __future__ import annotations

import numpy as np
import pytest

from flows.daze.claims import claim1, claim2, claim3, claim4, ratio_ci
from flows.daze.params import PRESETS, Params


def _rows(asr: dict, br: dict, seeds=(0, 1, 2), n_states=50, n_eps=6):
    """Triggered-state hits at rate ``asr[method]``; benign returns ``br[method]`` x the max return, Daze's with
    +-1% per-episode noise (its own generator, so the hits stay as they were) so that the returns vary."""
    rng = np.random.default_rng(0)
    noise = np.random.default_rng(1)
    states, episodes = [], []
    for env in ("CartPole-v1", "InvertedPendulum-v5"):
        for m in ("clean", "daze", "trojdrl"):
            for s in seeds:
                for cond in ("clean", "mass x0.8", "length x1.2"):
                    states += [
                        {
                            "env": env,
                            "method": m,
                            "seed": s,
                            "condition": cond,
                            "item": i,
                            "hit": float(rng.random() < asr[m]),
                        }
                        for i in range(n_states)
                    ]
                episodes += [
                    {
                        "env": env,
                        "method": m,
                        "seed": s,
                        "condition": "clean",
                        "episode": i,
                        "return": br[m]
                        * (500 if env == "CartPole-v1" else 1000)
                        * (1 + (noise.uniform(-0.01, 0.01) if m == "daze" else 0.0)),
                    }
                    for i in range(n_eps)
                ]
    return states, episodes


@pytest.fixture(scope="module")
def p():
    params = Params(**PRESETS["default"])
    params.claims.n_resamples = 500
    return params


def test_verdicts_follow_the_numbers(p):
    states, episodes = _rows({"clean": 0.5, "daze": 0.95, "trojdrl": 0.2}, {"clean": 1.0, "daze": 0.99, "trojdrl": 1})
    ok = {"r": {"max_gap": 0.0, "steps": 100}}
    assert [
        c.verdict
        for c in (
            claim1(p, states, episodes, ok),
            claim2(p, episodes),
            claim3(p, states, episodes),
            claim4(p, states, episodes),
        )
    ] == ["reproduced"] * 4
    bad = claim1(p, states, episodes, {"r": {"max_gap": 1.0, "steps": 100}})
    assert bad.verdict == "not reproduced" and bad.parts[-1]["details"]["failing_runs"] == ["r"]
    weak, _ = _rows({"clean": 0.5, "daze": 0.5, "trojdrl": 0.5}, {"clean": 1.0, "daze": 0.5, "trojdrl": 1})
    assert claim1(p, weak, episodes, ok).verdict == "not reproduced"
    tie, _ = _rows({"clean": 0.5, "daze": 1.0, "trojdrl": 1.0}, {"clean": 1.0, "daze": 1.0, "trojdrl": 1})
    # both at ASR 1 on every state: every paired difference is 0, so the comparison cannot discriminate
    tied = claim3(p, tie, episodes)
    assert tied.verdict == "inconclusive" and tied.reason.startswith("not testable here")


def test_an_agent_that_never_learned_makes_the_claims_inconclusive(p):
    states, episodes = _rows({"clean": 0.5, "daze": 1.0, "trojdrl": 0.2}, {"clean": 0.3, "daze": 0.3, "trojdrl": 0.3})
    assert claim1(p, states, episodes, {"r": {"max_gap": 0.0, "steps": 1}}).verdict == "inconclusive"
    assert claim4(p, states, episodes).verdict == "inconclusive"


def test_ratio_bootstrap_point_and_spread():
    num = {0: np.array([90.0, 110.0]), 1: np.array([95.0, 105.0])}
    den = {0: np.array([100.0, 100.0]), 1: np.array([100.0, 100.0])}
    point, lo, hi, seeds = ratio_ci(num, den, n=2000, level=0.95, seed=0)
    assert point == pytest.approx(1.0) and seeds == [0, 1] and 0.89 <= lo < 1.0 < hi <= 1.11
    same = {0: np.full(3, 7.0), 1: np.full(3, 7.0)}
    assert ratio_ci(same, same, n=200, level=0.95, seed=0)[1:3] == (1.0, 1.0)
