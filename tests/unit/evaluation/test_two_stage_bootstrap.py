"""Specification of the two-stage (clustered) bootstrap: seeds first, then items within each drawn seed."""

from __future__ import annotations

import numpy as np
import pytest

from components.errors import DataError, ParamsError
from components.evaluation.seed_ci import paired_bootstrap_ci
from components.evaluation.stats import bootstrap_samples, cluster_design, two_stage_means


def nested(n_seeds: int, rng: np.random.Generator, n_items: int = 40, sd_seed: float = 0.5, sd_item: float = 1.0):
    """Per-item differences with a seed-level random effect around a true mean of 0."""
    effects = rng.normal(0.0, sd_seed, n_seeds)
    values = np.concatenate([e + rng.normal(0.0, sd_item, n_items) for e in effects])
    return values, np.repeat(np.arange(n_seeds), n_items)


def coverage(n_seeds: int, *, clustered: bool, n_datasets: int = 400) -> tuple[float, float]:
    """(share of CIs covering the true 0, share excluding 0, i.e. a false "reproduced") over simulated datasets."""
    cover = 0
    for k in range(n_datasets):
        values, seeds = nested(n_seeds, np.random.default_rng(1000 + k))
        kw = {"clusters": seeds} if clustered else {"strata": seeds}
        _, lo, hi = paired_bootstrap_ci(values, n_resamples=1000, seed=k, **kw)
        cover += lo <= 0.0 <= hi
    return cover / n_datasets, 1 - cover / n_datasets


@pytest.mark.slow
@pytest.mark.parametrize(("n_seeds", "minimum"), [(5, 0.85), (10, 0.90)])
def test_two_stage_ci_covers_the_true_mean_at_nearly_the_nominal_rate(n_seeds, minimum):
    covered, _ = coverage(n_seeds, clustered=True)
    assert covered >= minimum


@pytest.mark.slow
def test_seed_stratified_ci_under_covers_when_the_effect_varies_by_seed():
    covered, false_positive = coverage(5, clustered=False, n_datasets=200)
    assert covered < 0.70 and false_positive > 0.30  # the old rule: far too narrow


def test_cluster_level_spread_widens_the_ci():
    values, seeds = nested(6, np.random.default_rng(3), sd_seed=1.0)
    _, lo_s, hi_s = paired_bootstrap_ci(values, strata=seeds, seed=0, n_resamples=2000)
    _, lo_c, hi_c = paired_bootstrap_ci(values, clusters=seeds, seed=0, n_resamples=2000)
    assert hi_c - lo_c > 2.5 * (hi_s - lo_s)


def test_one_unit_per_cluster_equals_the_plain_bootstrap_in_distribution():
    x = np.random.default_rng(5).normal(size=300)
    plain = bootstrap_samples(x, seed=0, n_resamples=4000)
    clustered = bootstrap_samples(x, clusters=np.arange(300), seed=1, n_resamples=4000)
    assert clustered.std() == pytest.approx(plain.std(), rel=0.08)
    assert clustered.mean() == pytest.approx(x.mean(), abs=0.01)


def test_every_resample_mean_is_a_mean_of_values_from_drawn_clusters():
    # cluster 0 holds only 0s, cluster 1 only 10s: a resample's mean is 10 x the share of units from cluster 1
    values, clusters = np.r_[np.zeros(5), np.full(5, 10.0)], np.repeat([0, 1], 5)
    means = two_stage_means(values, clusters=clusters, n_resamples=2000, seed=0)
    assert set(np.round(means, 9)) <= {0.0, 5.0, 10.0}
    assert 0.4 < np.mean(means == 5.0) < 0.6  # the two clusters drawn (either order) half the time


def test_crossed_strata_share_one_cluster_draw_and_keep_their_weights():
    # each seed's model is seen in two fixed strata; seed 1 is +1 in both, so a draw moves both together
    clusters = np.tile(np.repeat([0, 1, 2], 4), 2)
    strata = np.repeat(["easy", "hard"], 12)
    values = np.where(clusters == 1, 1.0, 0.0)
    assert cluster_design(clusters, strata, values.size) == "crossed"
    means = two_stage_means(values, clusters=clusters, strata=strata, n_resamples=3000, seed=0)
    assert set(np.round(means * 3, 9)) <= {0.0, 1.0, 2.0, 3.0}  # counts of seed 1 among 3 draws


def test_nested_clusters_are_drawn_within_their_stratum():
    clusters, strata = np.repeat([0, 1, 2, 3], 5), np.repeat(["a", "b"], 10)
    values = np.r_[np.zeros(10), np.full(10, 4.0)]  # stratum b is 4 everywhere: its mean never moves
    assert cluster_design(clusters, strata, values.size) == "nested"
    means = two_stage_means(values, clusters=clusters, strata=strata, n_resamples=2000, seed=0)
    assert np.allclose(means, 2.0)  # fixed weights 1/2 and 1/2; no unit of b ever lands in a


def test_same_seed_same_ci():
    values, seeds = nested(5, np.random.default_rng(0))
    assert paired_bootstrap_ci(values, clusters=seeds, seed=7) == paired_bootstrap_ci(values, clusters=seeds, seed=7)


def test_ten_thousand_two_stage_resamples_over_thousands_of_units_completes():
    values, seeds = nested(10, np.random.default_rng(0), n_items=300)
    samples = bootstrap_samples(values, clusters=seeds, n_resamples=10_000, seed=0)
    assert samples.shape == (10_000,) and np.isfinite(samples).all()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"clusters": [0, 1]}, DataError, "one cluster label per unit"),
        ({"clusters": [0, 0, 1], "statistic": np.median}, ParamsError, "mean only"),
        ({"n_resamples": 10**9}, ParamsError, "n_resamples: at most"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, error, match):
    with pytest.raises(error, match=match):
        paired_bootstrap_ci([1.0, 2.0, 3.0], seed=0, **kwargs)
