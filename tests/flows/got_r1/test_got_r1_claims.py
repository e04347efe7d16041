"""got-r1's claims on fixture rows with known verdicts: a clear gain is reproduced, identical arms are not
testable (the automatic check and the mechanism check), and C3's direction is "less"."""

from __future__ import annotations

import numpy as np

from flows.got_r1.claims import claim1, claim3, claim4
from flows.got_r1.params import PRESETS, Params
from flows.runtime.params import resolve

P = resolve(Params, PRESETS, slug="got-r1", profile="smoke")
SEEDS = [0, 1, 2]


def _rows(p_sft: float, arms: dict[str, float], n: int = 60) -> list[dict]:
    rng = np.random.default_rng(0)
    rows = []
    tags = ["position", "colors", "counting"]
    sft = rng.random(n) < p_sft
    for i in range(n):
        rows.append(
            {
                "id": f"t{i}",
                "tag": tags[i % 3],
                "method": "got-sft",
                "seed": -1,
                "correct": float(sft[i]),
                "iou": 0.5,
                "image": [[0]],
            }
        )
    for arm, p in arms.items():
        for s in SEEDS:
            hit = rng.random(n) < p
            for i in range(n):
                rows.append(
                    {
                        "id": f"t{i}",
                        "tag": tags[i % 3],
                        "method": arm,
                        "seed": s,
                        "correct": float(hit[i]),
                        "iou": float(0.5 + 0.4 * hit[i]),
                        "image": [[s + 1]],
                    }
                )
    return rows


def test_a_clear_gain_is_reproduced_and_a_loss_is_reproduced_for_the_less_claim():
    rows = _rows(0.3, {"grpo-full": 0.9, "grpo-pi": 0.3, "grpo-ri": 0.05})
    assert claim1(P, rows, SEEDS).verdict == "reproduced"
    assert claim3(P, rows, SEEDS).verdict == "reproduced"
    assert claim4(P, rows, SEEDS).verdict == "reproduced"


def test_identical_arms_are_not_testable():
    rows = _rows(0.5, {"grpo-full": 0.5, "grpo-pi": 0.5, "grpo-ri": 0.5})
    for r in rows:  # every arm answers exactly as SFT
        if r["method"] != "got-sft":
            r["correct"] = next(x["correct"] for x in rows if x["method"] == "got-sft" and x["id"] == r["id"])
            r["image"] = [[0]]
    res = claim1(P, rows, SEEDS)
    assert res.verdict == "inconclusive"
    checks = {c["name"]: c["passed"] for c in res.testability}
    assert checks["GRPO moved the policy"] is False and checks["paired differences vary"] is False
