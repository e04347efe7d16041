"""ebt, fair to the paper: the power check of a claim not reproduced, the plateau measure of the report, and the
dev-split tuning of alpha_0 beside the learning rate."""

from __future__ import annotations

import numpy as np
import pytest

from flows.ebt import train
from flows.ebt.claims import claim2, decided
from flows.ebt.params import PRESETS, Params
from flows.ebt.report import PLATEAU_TOL, _stable_plateau
from flows.runtime.params import resolve


def params(**claims):
    over = [f"claims.{k}={v}" for k, v in claims.items()]
    return resolve(Params, PRESETS, slug="ebt", profile="default", overrides=over)


def rows_with_gains(far_gain: float, id_gain: float, *, seeds=(0, 1, 2), n=150, sd=2.0, seed=0) -> list[dict]:
    """Per-window NLLs whose thinking gain (points, M 2 -> 4) is ``far_gain`` on linux_docs, ``id_gain`` on id.
    Best of 4 lowers each window's NLL by 0.05 give or take 0.01 (its own generator, so the other draws stay as
    they were): a drop of exactly 0.05 on every window would leave C3 not testable here (identical differences)."""
    rng = np.random.default_rng(seed)
    rng_bon = np.random.default_rng(seed + 1)
    rows = []
    for s in seeds:
        for name, gain in (("linux_docs", far_gain), ("id", id_gain)):
            for w in range(n):
                base = 2.0 + rng.normal(0, 0.1)
                g = gain + rng.normal(0, sd)
                rows.append(
                    {
                        "set": name,
                        "seed": s,
                        "width": 64,
                        "window": w,
                        "ebt_m2": base,
                        "ebt_m4": base - g / 100.0,
                        "bon_1": base,
                        "bon_4": base - 0.05 + rng_bon.normal(0, 0.01),
                    }
                )
    return rows


def test_c2_effect_moves_one_for_one_with_the_far_sets_gain():
    p = params()
    rows = rows_with_gains(3.0, 3.0)
    shifted = [{**r, "ebt_m4": r["ebt_m4"] - 0.02} if r["set"] == "linux_docs" else r for r in rows]
    assert claim2(p, shifted, "id", {}).effect - claim2(p, rows, "id", {}).effect == pytest.approx(2.0, abs=1e-9)


def test_a_claim_not_reproduced_carries_its_power_which_grows_with_the_planted_effect():
    p = params(power_sims=30, power_resamples=300)
    results = decided(p, rows_with_gains(3.0, 3.0), "id", {})  # no amplification: C2 cannot be reproduced
    c1, c2, c3 = results
    assert c1.verdict == c3.verdict == "reproduced" and "power" not in c1.details  # reproduced: no check needed
    assert c2.verdict != "reproduced"
    rows = c2.details["power"]["rows"]
    assert [r["planted"] for r in rows] == [k * p.claims.delta_gain for k in p.claims.power_deltas]
    assert rows[0]["reproduced"] <= 0.1  # at no planted effect: few false positives
    assert rows[-1]["reproduced"] >= 0.9  # 10 bands (5 points) on 900 windows per set: found
    assert [r["reproduced"] for r in rows] == sorted(r["reproduced"] for r in rows)


def test_no_power_check_when_switched_off():
    results = decided(params(power_sims=0), rows_with_gains(3.0, 3.0), "id", {})
    assert all("power" not in r.details for r in results)


def curve(name: str, losses: list[float]) -> list[dict]:
    return [{"name": name, "step": 10 * (k + 1), "loss": v} for k, v in enumerate(losses)]


def test_plateau_leaves_out_the_cooldown_and_flags_a_curve_still_falling():
    p = params()  # cooldown_frac 0.1: the last tenth of the steps
    flat = [3.0] * 5 + [2.0] * 85 + [1.5] * 10  # flat stable phase, then the cooldown's drop
    falling = list(np.linspace(3.0, 1.0, 90)) + [0.8] * 10
    out = _stable_plateau(p, curve("flat", flat) + curve("falling", falling))
    assert out["flat"] < PLATEAU_TOL < out["falling"]


def test_tuning_picks_alpha0_on_the_dev_split_and_trains_with_it(tmp_path):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "train.npy", rng.integers(0, 12, 4000).astype(np.int64))
    np.save(tmp_path / "dev.npy", rng.integers(0, 12, 800).astype(np.int64))
    p = resolve(
        Params,
        PRESETS,
        slug="ebt",
        profile="smoke",
        overrides=["energy.step_size_grid=[2,20]", "training.tune_steps=10"],
    )
    plain = {
        "n_layers": 1,
        "n_heads": 2,
        "seq_len": 8,
        "training": p.training.model_dump(),
        "ebt": p.energy.model_dump(),
        "threads": 1,
        "progress": False,
        "dev_windows": 16,
        "think_steps": [1, 2],
    }
    out = train.tune(
        train.TuneJob(
            p=plain, train=str(tmp_path / "train.npy"), dev=str(tmp_path / "dev.npy"), vocab=12, width=16, seed=0
        )
    )
    scores = {r["step_size"]: r["dev_nll"] for r in out.scores["ebt"]}
    assert set(scores) == {2.0, 20.0} and scores[2.0] != scores[20.0]  # both were trained, with different alpha_0
    assert out.step_size == min(scores, key=scores.get)
    assert out.lr == {"ebt": p.training.lr, "tpp": p.training.lr}  # no lr grid: the configured lr for both
    alpha0, mult = plain["ebt"]["step_size"], plain["ebt"]["step_size_lr_mult"]
    assert train._alpha_mult(plain, alpha0) == pytest.approx(mult)  # the configured pair is kept as it is
    assert train._alpha_mult(plain, alpha0 / 10) == pytest.approx(mult / 10)
