"""fit_chinchilla: the published replication is recovered, synthetic truths are recovered,
bad inputs fail with our errors, and the fast search matches the sequential SciPy procedure."""

from pathlib import Path

import numpy as np
import pytest

from components.errors import DataError, ParamsError
from components.scaling.chinchilla import ScalingFit, default_grid, fit_chinchilla
from components.scaling.reference import fit_chinchilla_reference
from components.scaling.table import load_scaling_table

REFERENCE_CSV = Path(__file__).parents[3].parent / "shared" / "reference" / "chinchilla_svg_extracted_data.csv"
# Besiroglu et al. (2024), Table 1: estimate and standard error on this file, top-5 losses excluded.
PUBLISHED = {
    "A": (482.0, 124.5),
    "B": (2085.0, 1293.0),
    "E": (1.817, 0.026),
    "alpha": (0.348, 0.015),
    "beta": (0.366, 0.021),
}
TRUTH = {"A": 400.0, "B": 1100.0, "E": 1.7, "alpha": 0.34, "beta": 0.30}
SMALL_GRID = default_grid()[::9]  # 500 of the 4,500 starts keeps synthetic tests fast


def synthetic(noise: float, seed: int = 0, truth: dict = TRUTH):
    """6 x 6 (N, D) grid of losses from ``truth`` with multiplicative log-normal noise."""
    rng = np.random.default_rng(seed)
    n, d = (x.ravel() for x in np.meshgrid(np.geomspace(1e7, 3e9, 6), np.geomspace(1e9, 3e11, 6)))
    loss = truth["E"] + truth["A"] / n ** truth["alpha"] + truth["B"] / d ** truth["beta"]
    return n, d, loss * np.exp(rng.normal(0.0, noise, n.size))


@pytest.fixture(scope="module")
def chinchilla_fit() -> ScalingFit:
    if not REFERENCE_CSV.is_file():
        pytest.skip(f"reference data not found at {REFERENCE_CSV} (the ../shared checkout beside the repo)")
    table = load_scaling_table(
        REFERENCE_CSV, n_column="Model Size", loss_column="loss", flops_column="Training FLOP", exclude_top_loss=5
    )
    return fit_chinchilla(table.N, table.D, table.L)


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_reference_fit_within_one_published_standard_error(chinchilla_fit, name):
    estimate, se = PUBLISHED[name]
    assert abs(getattr(chinchilla_fit, name) - estimate) <= se


def test_reference_fit_matches_the_plain_huber_grid_result(chinchilla_fit):
    # README: the Huber-loss grid fit gives A 477.8, B 2143.9, E 1.817, alpha 0.3473, beta 0.3672.
    assert chinchilla_fit.n_points == 240
    assert chinchilla_fit.alpha == pytest.approx(0.3473, abs=5e-4)
    assert chinchilla_fit.beta == pytest.approx(0.3672, abs=5e-4)
    assert pytest.approx(477.8, rel=0.01) == chinchilla_fit.A
    assert pytest.approx(2143.9, rel=0.01) == chinchilla_fit.B


def test_synthetic_truth_recovered():
    fit = fit_chinchilla(*synthetic(noise=0.002), grid=SMALL_GRID)
    assert fit.alpha == pytest.approx(TRUTH["alpha"], abs=0.01)
    assert fit.beta == pytest.approx(TRUTH["beta"], abs=0.01)
    assert pytest.approx(TRUTH["E"], rel=0.02) == fit.E
    assert pytest.approx(TRUTH["A"], rel=0.2) == fit.A
    assert pytest.approx(TRUTH["B"], rel=0.2) == fit.B


def test_noise_free_data_recovered_almost_exactly():
    fit = fit_chinchilla(*synthetic(noise=0.0), grid=SMALL_GRID)
    for name, value in TRUTH.items():
        assert getattr(fit, name) == pytest.approx(value, rel=1e-3), name


def test_never_worse_than_sequential_scipy_procedure_from_the_same_starts():
    n, d, loss = synthetic(noise=0.01, seed=3)
    grid = default_grid()[::900]  # 5 starts: the reference is slow
    fast = fit_chinchilla(n, d, loss, grid=grid)
    slow = fit_chinchilla_reference(n, d, loss, grid=grid)
    assert fast.objective <= slow.objective * (1 + 1e-9)


@pytest.mark.slow
def test_matches_sequential_scipy_procedure_on_reference_data(chinchilla_fit):
    table = load_scaling_table(
        REFERENCE_CSV, n_column="Model Size", loss_column="loss", flops_column="Training FLOP", exclude_top_loss=5
    )
    grid = default_grid()[::100]  # 45 starts, ~1 minute of sequential L-BFGS-B
    fast = fit_chinchilla(table.N, table.D, table.L, grid=grid)
    slow = fit_chinchilla_reference(table.N, table.D, table.L, grid=grid)
    assert fast.objective <= slow.objective * (1 + 1e-9)
    assert abs(fast.alpha - slow.alpha) < 1e-3
    assert abs(fast.beta - slow.beta) < 1e-3


def test_same_input_same_fit():
    data = synthetic(noise=0.01, seed=5)
    grid = default_grid()[::30]
    assert fit_chinchilla(*data, grid=grid) == fit_chinchilla(*data, grid=grid)


def test_predict_and_to_dict():
    fit = ScalingFit(A=400.0, B=1000.0, E=1.7, alpha=0.5, beta=0.25, objective=0.1, n_points=10)
    assert fit.predict(1e4, 1e8) == pytest.approx(1.7 + 400 / 100 + 1000 / 100)
    np.testing.assert_allclose(fit.predict(np.array([1e4, 1e6]), 1e8), [15.7, 12.1])
    assert fit.to_dict() == {
        "A": 400.0,
        "B": 1000.0,
        "E": 1.7,
        "alpha": 0.5,
        "beta": 0.25,
        "objective": 0.1,
        "n_points": 10,
    }


def test_default_grid_is_epochs_4500_starts():
    grid = default_grid()
    assert grid.shape == (4500, 5)
    assert sorted(set(grid[:, 0])) == [0, 5, 10, 15, 20, 25]
    assert sorted(set(grid[:, 2])) == [-1, -0.5, 0, 0.5, 1]
    assert sorted(set(grid[:, 3])) == [0, 0.5, 1, 1.5, 2]


@pytest.mark.parametrize(
    ("n", "d", "loss", "error", "fragment"),
    [
        ([1.0] * 6, [1.0] * 6, [1.0] * 5, ParamsError, "equal lengths"),
        (np.ones((6, 1)), [1.0] * 6, [1.0] * 6, ParamsError, "1-D"),
        ([1.0] * 6, [1.0, 2, 3, np.nan, 5, 6], [1.0] * 6, DataError, "D[3]"),
        ([1.0] * 6, [1.0] * 6, [1.0, 2, -3, 4, 5, 6], DataError, "L[2]"),
        ([0.0] + [1.0] * 5, [1.0] * 6, [1.0] * 6, DataError, "N[0]"),
        ([np.inf] + [1.0] * 5, [1.0] * 6, [1.0] * 6, DataError, "N[0]"),
        ([1.0] * 5, [1.0] * 5, [1.0] * 5, DataError, "at least 6"),
    ],
)
def test_bad_inputs_raise_named_errors(n, d, loss, error, fragment):
    with pytest.raises(error, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        fit_chinchilla(n, d, loss)


@pytest.mark.parametrize("kwargs", [{"huber_delta": 0.0}, {"grid": np.zeros((3, 4))}, {"polish_top": 0}])
def test_bad_settings_raise_params_error(kwargs):
    with pytest.raises(ParamsError):
        fit_chinchilla(*synthetic(noise=0.01), **{"grid": SMALL_GRID, **kwargs})


def test_a_degenerate_fit_is_inf_and_said_once_not_a_numpy_overflow_warning(caplog, monkeypatch):
    import logging
    import warnings

    from components.scaling import chinchilla as C

    n, d, loss = synthetic(0.0)
    problem = C.make_problem(n, d, loss, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow RuntimeWarning would fail here
        fit = C.fit_from_centred(problem, np.array([1e4, 0.0, 0.0, 0.3, 0.3]), 1.0)
    assert float("inf") == fit.A and np.isfinite(fit.B)

    monkeypatch.setattr(C, "fit_problem", lambda *a, **k: (fit, None))
    with caplog.at_level(logging.INFO, logger="components.scaling.chinchilla"):
        C.fit_chinchilla(n, d, loss, grid=SMALL_GRID)
    (line,) = [r.getMessage() for r in caplog.records if "chinchilla fit" in r.getMessage()]
    assert "degenerate: A overflow" in line and "alpha=0.3" in line
