"""The evaluate stage's checks on the per-window NLL table: one overshooting window is a result, a broken mean
or a negative NLL is an error naming the column."""

import math

import pytest

from components.data.validate import validate
from components.errors import DataError
from flows.ebt.evaluate import eval_suite

COLS = ["ebt_m0", "ebt_m1", "tpp"]


def rows(m1_values):
    return [
        {"width": 32, "seed": 0, "set": "kjv", "window": i, "ebt_m0": 40.0, "ebt_m1": v, "tpp": 2.0}
        for i, v in enumerate(m1_values)
    ]


def test_one_window_above_the_bound_passes():
    values = [2.0] * 999 + [math.log(1e6) + 0.6]  # 14.4 nats on one window, as in a default run
    assert validate(rows(values), eval_suite(COLS, ["kjv"]), name="ebt/eval").success


def test_a_broken_mean_fails_naming_the_column():
    with pytest.raises(DataError, match="ebt_m1"):
        validate(rows([20.0] * 10), eval_suite(COLS, ["kjv"]), name="ebt/eval")


def test_a_negative_nll_fails_naming_the_column():
    with pytest.raises(DataError, match="ebt_m1"):
        validate(rows([2.0] * 9 + [-0.1]), eval_suite(COLS, ["kjv"]), name="ebt/eval")
