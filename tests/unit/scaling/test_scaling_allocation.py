"""Compute-optimal allocation: the closed form agrees with brute-force minimisation,
and crossing_compute finds where two optimal-loss curves cross (None where they don't)."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from components.errors import ParamsError
from components.scaling.allocation import compute_optimal, crossing_compute, optimal_loss, tokens_per_param
from components.scaling.chinchilla import ScalingFit

HOFFMANN = ScalingFit(A=406.4, B=410.7, E=1.69, alpha=0.34, beta=0.28, objective=0.0, n_points=0)
EPOCH = ScalingFit(A=482.0, B=2085.0, E=1.817, alpha=0.348, beta=0.366, objective=0.0, n_points=0)


def numeric_optimum(fit: ScalingFit, c: float) -> tuple[float, float, float]:
    """Minimise the loss over log N with D = C / (6 N), by a bounded scalar search."""

    def loss(log_n):
        n = np.exp(log_n)
        return fit.predict(n, c / (6 * n))

    res = minimize_scalar(loss, bounds=(0.0, np.log(c)), method="bounded", options={"xatol": 1e-10})
    n = float(np.exp(res.x))
    return n, c / (6 * n), float(res.fun)


@pytest.mark.parametrize("fit", [HOFFMANN, EPOCH])
@pytest.mark.parametrize("c", [1e18, 5.76e23, 1e26])
def test_closed_form_matches_numeric_minimisation(fit, c):
    n_opt, d_opt = compute_optimal(fit, c)
    n_num, d_num, loss_num = numeric_optimum(fit, c)
    assert n_opt == pytest.approx(n_num, rel=1e-4)
    assert d_opt == pytest.approx(d_num, rel=1e-4)
    assert 6 * n_opt * d_opt == pytest.approx(c, rel=1e-12)
    assert optimal_loss(fit, c) == pytest.approx(loss_num, rel=1e-10)
    assert optimal_loss(fit, c) <= fit.predict(n_opt * 1.5, c / (6 * n_opt * 1.5))


def test_vectorised_budgets_and_tokens_per_param():
    budgets = np.array([1e20, 1e22, 1e24])
    n_opt, d_opt = compute_optimal(EPOCH, budgets)
    assert n_opt.shape == (3,)
    np.testing.assert_allclose(tokens_per_param(EPOCH, budgets), d_opt / n_opt)
    # Epoch's fit is close to "20 tokens per parameter" at Chinchilla's budget.
    assert 15 < tokens_per_param(EPOCH, 5.76e23) < 40
    # alpha < beta: N grows faster than D, so tokens per parameter falls with compute.
    assert np.all(np.diff(tokens_per_param(EPOCH, budgets)) < 0)


def test_allocation_uses_only_a_alpha_for_n_and_b_beta_for_d():
    swapped_e = ScalingFit(A=EPOCH.A, B=EPOCH.B, E=99.0, alpha=EPOCH.alpha, beta=EPOCH.beta, objective=1, n_points=1)
    assert compute_optimal(swapped_e, 1e21) == compute_optimal(EPOCH, 1e21)
    bigger_a = ScalingFit(
        A=2 * EPOCH.A, B=EPOCH.B, E=EPOCH.E, alpha=EPOCH.alpha, beta=EPOCH.beta, objective=0, n_points=0
    )
    assert compute_optimal(bigger_a, 1e21)[0] > compute_optimal(EPOCH, 1e21)[0]


def test_crossing_found_where_the_curves_cross():
    # Same exponents, so the loss difference is monotone in C: worse offset, faster decay.
    low_e = ScalingFit(A=400.0, B=400.0, E=1.70, alpha=0.5, beta=0.5, objective=0, n_points=0)
    steep = ScalingFit(A=2000.0, B=2000.0, E=1.60, alpha=0.5, beta=0.5, objective=0, n_points=0)
    c = crossing_compute(low_e, steep, 1e15, 1e30)
    assert c is not None and 1e15 < c < 1e30
    assert optimal_loss(low_e, c) == pytest.approx(optimal_loss(steep, c), abs=1e-9)
    assert optimal_loss(low_e, c / 10) < optimal_loss(steep, c / 10)
    assert optimal_loss(low_e, c * 10) > optimal_loss(steep, c * 10)
    assert crossing_compute(steep, low_e, 1e15, 1e30) == pytest.approx(c, rel=1e-9)


def test_no_crossing_returns_none():
    better = ScalingFit(A=300.0, B=300.0, E=1.6, alpha=0.34, beta=0.28, objective=0, n_points=0)
    assert crossing_compute(HOFFMANN, better, 1e18, 1e26) is None
    assert crossing_compute(HOFFMANN, HOFFMANN, 1e18, 1e26) is None
    low_e = ScalingFit(A=400.0, B=400.0, E=1.70, alpha=0.5, beta=0.5, objective=0, n_points=0)
    steep = ScalingFit(A=2000.0, B=2000.0, E=1.60, alpha=0.5, beta=0.5, objective=0, n_points=0)
    c = crossing_compute(low_e, steep, 1e15, 1e30)
    assert crossing_compute(low_e, steep, 1e15, c / 100) is None  # range ends before the crossing


@pytest.mark.parametrize("bad", [0.0, -1e20, np.inf, np.nan])
def test_bad_budget_raises(bad):
    with pytest.raises(ParamsError, match="C:"):
        compute_optimal(EPOCH, bad)


def test_bad_fit_and_range_raise():
    flat = ScalingFit(A=400.0, B=400.0, E=1.7, alpha=0.0, beta=0.3, objective=0, n_points=0)
    with pytest.raises(ParamsError, match="fit.alpha"):
        optimal_loss(flat, 1e20)
    with pytest.raises(ParamsError, match="c_lo"):
        crossing_compute(EPOCH, HOFFMANN, 1e22, 1e20)
