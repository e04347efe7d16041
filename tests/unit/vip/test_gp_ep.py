"""The GP's moment-matching option (EP) against exact posteriors: one site by adaptive quadrature, two
correlated sites on a fine 2-D grid; EP is closer to the exact mean than Laplace there, and the two agree where
the likelihood is sharp."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate
from scipy.special import expit

from components.errors import ParamsError
from components.vip.predictor import GPPredictor, ep_sites, laplace_mode, tilted_moments


@pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")  # quad's own round-off note at v = 0.01
@pytest.mark.parametrize(
    "m, v, k, n, mean",
    [(0.3, 2.0, 7, 8, -0.5), (-1.0, 0.5, 0, 24, 1.0), (2.0, 4.0, 3, 3, 0.0), (0.0, 0.01, 12, 24, 0.0)],
)
def test_tilted_moments_equal_adaptive_quadrature(m, v, k, n, mean):
    dens = lambda f: np.exp(-0.5 * (f - m) ** 2 / v) * expit(f + mean) ** k * (1 - expit(f + mean)) ** (n - k)  # noqa: E731
    z = integrate.quad(dens, -40, 40, epsabs=0, epsrel=1e-12, limit=200, points=[m])[0]
    mu = integrate.quad(lambda f: f * dens(f), -40, 40, epsabs=0, epsrel=1e-12, limit=200, points=[m])[0] / z
    var = (
        integrate.quad(lambda f: (f - mu) ** 2 * dens(f), -40, 40, epsabs=0, epsrel=1e-12, limit=200, points=[m])[0] / z
    )
    got_mu, got_var = tilted_moments(*(np.array([x], float) for x in (m, v, k, n)), mean)
    assert got_mu[0] == pytest.approx(mu, abs=1e-8) and got_var[0] == pytest.approx(var, rel=1e-7)


def _exact_two_sites(K, k, n, mean):
    g = np.linspace(-10, 10, 1601)
    f1, f2 = np.meshgrid(g, g, indexing="ij")
    ki = np.linalg.inv(K)
    logp = -0.5 * (ki[0, 0] * f1**2 + 2 * ki[0, 1] * f1 * f2 + ki[1, 1] * f2**2)
    for f, a, b in ((f1, k[0], n[0]), (f2, k[1], n[1])):
        logp += a * np.log(expit(f + mean)) + (b - a) * np.log(expit(-(f + mean)))
    w = np.exp(logp - logp.max())
    w /= w.sum()
    mu = np.array([(w * f1).sum(), (w * f2).sum()])
    var = np.array([(w * (f1 - mu[0]) ** 2).sum(), (w * (f2 - mu[1]) ** 2).sum()])
    return mu, var


@pytest.mark.parametrize("k, n, rho", [([7, 1], [8, 8], 0.6), ([2, 0], [2, 3], 0.3), ([5, 4], [6, 4], 0.9)])
def test_ep_is_near_the_exact_posterior_and_nearer_than_laplace(k, n, rho):
    K = 2.0 * np.array([[1.0, rho], [rho, 1.0]])
    k, n = np.array(k, float), np.array(n, float)
    exact_mu, exact_var = _exact_two_sites(K, k, n, 0.2)
    sw, cf, alpha = ep_sites(K, k, n, 0.2)
    ep_mu = K @ alpha
    ep_var = np.diag(np.linalg.inv(np.linalg.inv(K) + np.diag(sw**2)))  # (K^-1 + site precisions)^-1
    lap_mu = laplace_mode(K, k, n, 0.2)[0]
    assert np.max(np.abs(ep_mu - exact_mu)) < 0.02
    assert np.max(np.abs(ep_var / exact_var - 1)) < 0.05
    assert np.max(np.abs(ep_mu - exact_mu)) < np.max(np.abs(lap_mu - exact_mu))  # Laplace's mode sits off the mean


def test_ep_and_laplace_agree_when_every_visit_has_many_rollouts():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(60, 4))
    p = expit(x[:, 0])
    ep, lap = GPPredictor(x, window=64, inference="ep"), GPPredictor(x, window=64)
    ids = np.arange(40)
    k = rng.binomial(2000, p[ids])
    for gp in (ep, lap):
        gp.update(ids, k, np.full(40, 2000))
    assert np.max(np.abs(ep.predict(range(60)) - lap.predict(range(60)))) < 0.01


def test_unknown_inference_is_named():
    with pytest.raises(ParamsError, match="inference"):
        GPPredictor(np.zeros((3, 2)), inference="vi")


def test_ep_through_the_loop_s_predictor_factory_generalises_to_unseen_prompts():
    """Known answer with the option on: the factory the RL loop uses builds an EP GP from the loop's gp settings,
    and on tiered prompts it ranks unseen prompts' success as the Laplace GP does."""
    from scipy.stats import spearmanr

    from components.vip.strategies import make_predictor

    rng = np.random.default_rng(1)
    tier = rng.integers(0, 4, 300)
    x = np.eye(4)[tier] + 0.05 * rng.normal(size=(300, 4))
    p_true = np.array([0.9, 0.6, 0.3, 0.05])[tier]
    gp = make_predictor("gp", 300, {"hashed": x}, "hashed", {"window": 128, "amplitude": 2.0, "inference": "ep"})
    assert gp.inference == "ep"
    seen = np.arange(128)
    gp.update(seen, rng.binomial(8, p_true[seen]), np.full(128, 8))
    unseen = np.arange(128, 300)
    brier = float(np.mean((gp.predict(unseen) - p_true[unseen]) ** 2))
    assert brier < 0.5 * float(np.mean((p_true[seen].mean() - p_true[unseen]) ** 2))
    assert spearmanr(gp.predict(unseen), p_true[unseen]).statistic > 0.8
