"""Specification of components.evaluation.stats: the paired, stratified percentile bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from components.errors import DataError, ParamsError
from components.evaluation.seed_ci import paired_bootstrap_ci
from components.evaluation.stats import (
    bootstrap_samples,
    percentile_ci,
    relative_delta,
    stratum_signs,
)


def test_ci_of_a_normal_mean_is_close_to_the_t_interval():
    x = np.random.default_rng(7).normal(10.0, 2.0, size=400)
    point, lo, hi = paired_bootstrap_ci(x, seed=0)
    t_lo, t_hi = sps.t.interval(0.95, df=x.size - 1, loc=x.mean(), scale=sps.sem(x))
    width = t_hi - t_lo
    assert point == pytest.approx(x.mean())
    assert lo == pytest.approx(t_lo, abs=0.1 * width)
    assert hi == pytest.approx(t_hi, abs=0.1 * width)


def test_effect_is_method_minus_baseline_on_paired_units():
    method = np.array([3.0, 5.0, 7.0, 9.0])
    baseline = np.array([1.0, 2.0, 3.0, 4.0])
    point, lo, hi = paired_bootstrap_ci(method, baseline, seed=1, n_resamples=2000)
    assert point == pytest.approx(3.5)
    assert 2.0 <= lo <= point <= hi <= 5.0


def test_pairing_removes_shared_unit_noise():
    rng = np.random.default_rng(3)
    shared = rng.normal(0, 10, size=300)  # item difficulty, common to both systems
    method, baseline = shared + 1.0 + rng.normal(0, 0.1, 300), shared + rng.normal(0, 0.1, 300)
    _, lo, hi = paired_bootstrap_ci(method, baseline, seed=0, n_resamples=2000)
    assert 0.9 < lo < hi < 1.1


def test_stratification_keeps_per_stratum_counts_fixed():
    # stratum "s0" holds a single unit marked 1000; stratum "s1" holds 50 units in [0, 1)
    values = np.r_[1000.0, np.random.default_rng(0).random(50)]
    strata = ["s0"] + ["s1"] * 50

    def n_marked(x, axis):
        return (x >= 1000).sum(axis=axis)

    stratified = bootstrap_samples(values, strata=strata, seed=5, n_resamples=3000, statistic=n_marked)
    assert set(stratified.tolist()) == {1.0}
    unstratified = bootstrap_samples(values, seed=5, n_resamples=3000, statistic=n_marked)
    assert unstratified.min() == 0 and unstratified.max() >= 2


def test_same_seed_same_ci_different_seed_different_ci():
    x = np.random.default_rng(1).normal(size=500)
    strata = np.repeat([1, 2, 3, 4, 5], 100)
    a = paired_bootstrap_ci(x, strata=strata, seed=42)
    b = paired_bootstrap_ci(x, strata=strata, seed=42)
    c = paired_bootstrap_ci(x, strata=strata, seed=43)
    assert a == b
    assert a[1:] != c[1:]


def test_custom_statistic_is_used_for_point_and_resamples():
    x = np.r_[np.zeros(99), 1000.0]
    point, lo, hi = paired_bootstrap_ci(x, seed=0, n_resamples=2000, statistic=np.median)
    assert point == 0.0 and lo == 0.0 and hi == 0.0


def test_percentile_ci_matches_numpy_quantiles():
    samples = np.arange(1001, dtype=float)
    assert percentile_ci(samples, 0.9) == pytest.approx((50.0, 950.0))


def test_ten_thousand_resamples_over_thousands_of_units_completes():
    x = np.random.default_rng(0).normal(size=3000)
    samples = bootstrap_samples(x, strata=np.repeat([0, 1, 2], 1000), seed=0)
    assert samples.shape == (10_000,)
    assert np.isfinite(samples).all()


def test_stratum_signs_are_signs_of_mean_differences_in_sorted_seed_order():
    labels, signs = stratum_signs([1.0, -3.0, 2.0, 0.0, -1.0, 1.0], [2, 2, 0, 0, 1, 1])
    assert labels == [0, 1, 2]
    assert signs == [1, 0, -1]


def test_relative_delta_is_two_percent_of_the_reference_by_default():
    assert relative_delta(3.5) == pytest.approx(0.07)
    assert relative_delta(-10.0, 0.05) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"method_values": [1.0, np.nan]}, DataError, "method_values: value at position 1 is not finite"),
        ({"method_values": [1.0, 2.0], "baseline_values": [1.0]}, DataError, "paired units must align"),
        ({"method_values": []}, DataError, "non-empty"),
        ({"method_values": [1.0, 2.0], "strata": [0]}, DataError, "one stratum label per unit"),
        ({"method_values": [1.0, 2.0], "level": 1.5}, ParamsError, "level"),
        ({"method_values": [1.0, 2.0], "n_resamples": 0}, ParamsError, "n_resamples"),
    ],
)
def test_bad_inputs_name_the_argument(kwargs, error, match):
    with pytest.raises(error, match=match):
        paired_bootstrap_ci(**kwargs, seed=0)
