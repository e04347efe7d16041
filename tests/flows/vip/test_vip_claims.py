"""vip's claim functions on synthetic run records: verdicts follow the numbers; censoring is counted."""

from __future__ import annotations

import numpy as np

from flows.runtime.params import resolve
from flows.vip import claims as K
from flows.vip.params import PRESETS, Params

P = resolve(
    Params,
    PRESETS,
    slug="vip",
    profile="default",
    overrides=["claims.n_resamples=500", "claims.power_sims=30", "claims.power_resamples=300"],
)


def _curves(shift_vip: float, n: int = 60, k: int = 8):
    """Per seed, n held-out prompts: VIP's counts are uniform's + ``shift_vip`` (clipped to [0, k]), with one
    prompt moved one count up and another one count down (the mean stays; at shift 0 the paired differences
    still vary: identical differences would make the claim not testable here); DAPO's are uniform's - 1."""
    rng = np.random.default_rng(0)
    out = []
    for s in (0, 1, 2):
        base = rng.integers(0, k + 1, n)
        for name, add in (("uniform", 0), ("vip", shift_vip), ("dapo", -1)):
            counts = np.clip(base + add, 0, k)
            if name == "vip":
                up = int(np.flatnonzero(counts < k)[0])
                down = int(next(i for i in np.flatnonzero(counts > 0) if i != up))
                counts[up] += 1
                counts[down] -= 1
            out += [
                {"method": name, "seed": s, "rollouts": 0, "mean@k": 0.1, "counts": base.tolist()},
                {
                    "method": name,
                    "seed": s,
                    "rollouts": 100,
                    "mean@k": float(counts.mean() / k),
                    "counts": counts.tolist(),
                },
            ]
    return out


def test_c1_follows_the_accuracy_difference():
    assert K.claim1(P, _curves(+1), [0, 1, 2], 8).verdict == "reproduced"
    assert K.claim1(P, _curves(-1), [0, 1, 2], 8).verdict == "not reproduced"
    assert K.claim1(P, _curves(0), [0, 1, 2], 8).verdict == "not reproduced"  # inside the 1-point band


def test_c1_and_c2_not_reproduced_carry_a_power_check_on_their_own_units():
    """Fair to the paper: a C1 with no effect says how often this design would see 0, 1, ..., 5 points."""
    r = K.claim1(P, _curves(0), [0, 1, 2], 8)
    rows = {row["planted"]: row for row in r.details["power"]["rows"]}
    assert sorted(rows) == [0.0, 0.01, 0.02, 0.03, 0.05]  # planted in points of mean@k (band 0.01)
    assert rows[0.0]["reproduced"] <= 0.1 and rows[0.05]["reproduced"] >= 0.9
    assert "power" not in K.claim1(P, _curves(+1), [0, 1, 2], 8).details  # reproduced: no power check
    steps = [
        {"method": m, "seed": s, "zero_var_frac": z}
        for s in (0, 1, 2)
        for i in range(40)
        for m, z in (("uniform", 0.5 + 0.02 * np.sin(i)), ("vip", 0.5 + 0.02 * np.cos(i)))
    ]
    c2 = K.claim2(P, steps, [0, 1, 2])
    assert c2.verdict != "reproduced" and [row["planted"] for row in c2.details["power"]["rows"]][-1] == -0.05


def test_c4_rollouts_to_threshold_and_censoring():
    assert abs(K.rollouts_to([{"rollouts": 0, "mean@k": 0.2}, {"rollouts": 100, "mean@k": 0.6}], 0.4) - 50.0) < 1e-9
    assert K.rollouts_to([{"rollouts": 0, "mean@k": 0.2}, {"rollouts": 100, "mean@k": 0.3}], 0.4) is None
    r = K.claim4(P, _curves(+1), [0, 1, 2], 100)
    assert r.n_censored == 3 and r.verdict == "inconclusive"  # dapo never reaches uniform's final accuracy


def test_c3_informative_and_uninformative_predictors():
    rng = np.random.default_rng(1)
    rows = []
    for s in (0, 1, 2):
        for _ in range(80):
            p = rng.random()
            obs = rng.binomial(8, p) / 8
            rows.append(
                {
                    "method": "vip",
                    "seed": s,
                    "seen_before": 0,
                    "observed": obs,
                    "p_used": p,
                    "p_gp-minilm": p,
                    "p_global-minilm": 0.5,
                }
            )
    assert K.claim3(P, rows, [0, 1, 2]).verdict == "reproduced"
    for r in rows:  # the allocator got noise while the shadow recomputation stayed informative: C3 must see it
        r["p_used"] = float(rng.random())
    assert K.claim3(P, rows, [0, 1, 2]).verdict != "reproduced"


def _c4_curves(finals: dict[str, list[float]], start: float = 0.25, budget: int = 100):
    """Per seed: each method starts at ``start`` and rises linearly to its final mean@k at ``budget``."""
    k, n = 8, 40
    out = []
    for s, (u, v, d) in enumerate(zip(*(finals[m] for m in ("uniform", "vip", "dapo")))):
        for name, final in (("uniform", u), ("vip", v), ("dapo", d)):
            counts = [round(final * k)] * n
            out += [
                {"method": name, "seed": s, "rollouts": 0, "mean@k": start, "counts": [round(start * k)] * n},
                {"method": name, "seed": s, "rollouts": budget, "mean@k": final, "counts": counts},
            ]
    return out


# from the start 0.25, a final of 0.875 / 0.75 / 0.25 + 0.25 / 0.6 reaches 0.5 at 40% / 50% / 60% of the budget: on
# average at half of it, with a different share on each seed (one share per seed: identical shares on every seed
# would make the paired differences identical, not testable here)
SOONER = [0.875, 0.75, 0.25 + 0.25 / 0.6]


def test_c4_known_answer_vip_reaches_the_threshold_sooner():
    # uniform ends at 0.5 on every seed; VIP reaches 0.5 at 40-60% of the budget (half on average), DAPO at the end
    r = K.claim4(P, _c4_curves({"uniform": [0.5] * 3, "vip": SOONER, "dapo": [0.5] * 3}), [0, 1, 2], 100)
    assert r.verdict == "reproduced" and r.n_censored == 0 and abs(r.effect + 0.5) < 1e-9
    flipped = K.claim4(P, _c4_curves({"uniform": [0.5] * 3, "vip": [0.5] * 3, "dapo": SOONER}), [0, 1, 2], 100)
    assert flipped.verdict == "not reproduced"


def test_c4_is_not_testable_when_uniform_does_not_rise_above_the_start():
    # uniform's final accuracy (0.25) equals the SFT start: both methods "reach" it at 0 rollouts on every seed
    r = K.claim4(P, _c4_curves({"uniform": [0.25] * 3, "vip": [0.25] * 3, "dapo": [0.375] * 3}), [0, 1, 2], 100)
    assert r.verdict == "inconclusive" and r.ci_low is None
    assert r.details["no_progress"] == 3 and "not above the start" in r.details["not_applicable"]
    assert r.reason.startswith(
        "not testable here: uniform's final accuracy is not above the start"
    )  # not "only 0 seed"
    # one seed without progress is left out and counted; the other two still decide
    r = K.claim4(P, _c4_curves({"uniform": [0.5, 0.5, 0.125], "vip": [0.75] * 3, "dapo": [0.5] * 3}), [0, 1, 2], 100)
    assert r.details["no_progress"] == 1 and r.n_seeds == 2 and r.effect < 0
