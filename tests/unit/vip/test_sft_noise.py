"""The slipped SFT answers (vip.data.sft_noise): one digit changed, at the asked share, problems untouched."""

import numpy as np
import pytest

from components.errors import ParamsError
from components.vip import task as T


@pytest.mark.parametrize("target", ["0", "7", "10", "99", "123", "4096", "81"])
def test_corrupt_changes_exactly_one_digit_and_keeps_the_length(target):
    rng = np.random.default_rng(0)
    for _ in range(200):
        c = T.corrupt(target, rng)
        assert len(c) == len(target) and c != target and c.isdigit()
        assert sum(a != b for a, b in zip(c, target)) == 1
        assert len(c) == 1 or c[0] != "0"  # no new leading zero


def test_corrupt_reaches_every_position_and_digit():
    rng = np.random.default_rng(1)
    seen = {T.corrupt("505", rng) for _ in range(2000)}
    # 9 other digits at the two lower places, 8 non-zero others at the leading one
    assert len(seen) == 9 + 9 + 8


def test_noisy_answers_share_flags_and_the_true_answer_kept():
    rows = [p.row() for p in T.make_problems(4000, {"add2": 1.0, "mul1": 1.0}, np.random.default_rng(0), "s")]
    out = T.noisy_answers(rows, 0.3, np.random.default_rng(2))
    flags = np.array([r["corrupted"] for r in out])
    assert abs(flags.mean() - 0.3) < 0.03
    for r, o in zip(rows, out):
        assert o["answer"] == r["target"] and o["prompt"] == r["prompt"] and o["id"] == r["id"]
        assert (o["target"] != r["target"]) == o["corrupted"]
    assert T.sft_items(out)[0][0] == T.encode(out[0]["prompt"] + out[0]["target"] + "\n")


def test_no_noise_leaves_every_answer_and_a_bad_share_is_refused():
    rows = [p.row() for p in T.make_problems(200, {"sub1": 1.0}, np.random.default_rng(0), "s")]
    out = T.noisy_answers(rows, 0.0, np.random.default_rng(0))
    assert all(o["target"] == r["target"] and not o["corrupted"] for r, o in zip(rows, out))
    for bad in (-0.1, 1.0):
        with pytest.raises(ParamsError, match="sft_noise"):
            T.noisy_answers(rows, bad, np.random.default_rng(0))


def test_the_data_stage_slips_sft_answers_only_and_leaves_every_problem_as_without_noise():
    from flows.runtime.params import resolve
    from flows.vip.data import _problems
    from flows.vip.params import PRESETS, Params

    noisy = _problems(resolve(Params, PRESETS, slug="vip", profile="smoke"))
    clean = _problems(resolve(Params, PRESETS, slug="vip", profile="smoke", overrides=["data.sft_noise=0"]))
    assert noisy["train"] == clean["train"] and noisy["heldout"] == clean["heldout"]
    assert [r["prompt"] for r in noisy["sft"]] == [r["prompt"] for r in clean["sft"]]
    share = np.mean([r["corrupted"] for r in noisy["sft"]])
    assert abs(share - 0.3) < 0.04  # the default share, 2,000 smoke examples
    assert not any(r["corrupted"] for r in clean["sft"])
