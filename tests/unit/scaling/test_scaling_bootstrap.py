"""bootstrap_fits: percentile CIs cover the truth on synthetic data, a seed repeats
bit for bit, and each refit equals a fresh fit of its resample."""

import numpy as np
import pytest

from components.errors import ParamsError
from components.scaling.bootstrap import BootstrapFits, bootstrap_fits, resample_counts
from components.scaling.chinchilla import default_grid, fit_chinchilla

TRUTH = {"A": 400.0, "B": 1100.0, "E": 1.7, "alpha": 0.34, "beta": 0.30}
SMALL_GRID = default_grid()[::9]
TINY_GRID = default_grid()[::45]  # 100 starts, for tests about bookkeeping rather than accuracy


def synthetic(noise: float = 0.01, seed: int = 0):
    """20 runs on a 5 x 4 (N, D) grid, multiplicative log-normal noise."""
    rng = np.random.default_rng(seed)
    n, d = (x.ravel() for x in np.meshgrid(np.geomspace(1e7, 3e9, 5), np.geomspace(1e9, 3e11, 4)))
    loss = TRUTH["E"] + TRUTH["A"] / n ** TRUTH["alpha"] + TRUTH["B"] / d ** TRUTH["beta"]
    return n, d, loss * np.exp(rng.normal(0.0, noise, n.size))


@pytest.fixture(scope="module")
def boot() -> BootstrapFits:
    return bootstrap_fits(*synthetic(), n_boot=200, seed=7, grid=SMALL_GRID)


def test_shapes_and_order(boot):
    assert boot.samples.shape == (200, 5)
    assert boot.objectives.shape == (200,)
    np.testing.assert_allclose(np.median(boot.samples[:, 3]), boot.full.alpha, atol=0.02)
    assert list(boot.ci()) == ["A", "B", "E", "alpha", "beta"]


def test_95_percent_cis_cover_the_true_parameters(boot):
    for name, (lo, hi) in boot.ci(0.95).items():
        assert lo < TRUTH[name] < hi, name
        assert lo <= getattr(boot.full, name) <= hi, name


def test_narrower_level_gives_nested_interval(boot):
    wide, narrow = boot.ci(0.95), boot.ci(0.5)
    for name in wide:
        assert wide[name][0] <= narrow[name][0] < narrow[name][1] <= wide[name][1]


def test_same_seed_repeats_bit_for_bit_and_another_seed_differs():
    data = synthetic(seed=1)
    first = bootstrap_fits(*data, n_boot=20, seed=3, grid=TINY_GRID)
    again = bootstrap_fits(*data, n_boot=20, seed=3, grid=TINY_GRID)
    other = bootstrap_fits(*data, n_boot=20, seed=4, grid=TINY_GRID)
    assert np.array_equal(first.samples, again.samples)
    assert not np.array_equal(first.samples, other.samples)


def test_each_refit_matches_a_fresh_fit_of_its_resample():
    n, d, loss = synthetic(seed=2)
    boot = bootstrap_fits(n, d, loss, n_boot=3, seed=11, grid=TINY_GRID)
    counts = resample_counts(n.size, 3, 11)
    for i in range(3):
        rows = np.repeat(np.arange(n.size), counts[i].astype(int))
        fresh = fit_chinchilla(n[rows], d[rows], loss[rows], grid=SMALL_GRID)
        assert boot.objectives[i] <= fresh.objective * (1 + 1e-6)
        np.testing.assert_allclose(boot.samples[i, 3:], [fresh.alpha, fresh.beta], atol=1e-3)


def test_resample_counts_sum_to_n():
    counts = resample_counts(20, 50, seed=0)
    assert counts.shape == (50, 20)
    assert np.all(counts.sum(axis=1) == 20)


def test_to_dict_is_plain(boot):
    out = boot.to_dict()
    assert out["n_boot"] == 200 and out["seed"] == 7
    assert set(out["ci"]) == {"A", "B", "E", "alpha", "beta"}
    assert out["std"]["alpha"] > 0


@pytest.mark.parametrize("kwargs", [{"n_boot": 0}, {"n_boot": 2.5}, {"extra_starts": -1}])
def test_bad_settings(kwargs):
    args = {"n_boot": 5, "seed": 0, **kwargs}
    with pytest.raises(ParamsError):
        bootstrap_fits(*synthetic(), grid=TINY_GRID, **args)


def test_bad_level(boot):
    with pytest.raises(ParamsError, match="level"):
        boot.ci(1.5)
