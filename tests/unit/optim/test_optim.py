"""Acceptance tests of components/optim: counting oracle, convergence on a quadratic, optimistic learner,
torch/numpy agreement, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.errors import PaperlineError, ParamsError
from components.optim.functions import FUNCTIONS, HardChain, Quadratic, make_function
from components.optim.learners import OptimisticOGD
from components.optim.o2nc import O2NC, log_inner_steps
from components.optim.oracle import Diverged, GradientOracle
from components.optim.runner import METHODS, build_method, run_method
from components.optim.torch_optim import ODOG

CMO23_LOG_RANGE = (250, 500)  # K = 10 at eps 1e-3: 11 calls per iteration (measured 360)
CFG = {"lr": 1.0, "adam_lr": 0.05, "eta": 1.0, "radius": 1.0, "episode": 10, "inner_steps": 2}
EXPECTED_CALLS = {  # quadratic (dim 20, eigenvalues 0.1..1), eps = 1e-3 ||grad F(x0)||, seed 0: known ranges
    "gd": (15, 40),
    "sgd": (15, 40),
    "adam": (80, 250),
    "o2nc-ogd": (50, 150),
    "cmo23": CMO23_LOG_RANGE,
    "cmo23-k2": (60, 160),
    "naive-hint": (20, 60),
    "odog": (40, 110),
    "odog-adaptive": (40, 110),
}


class Counting:
    def __init__(self, fn):
        self.fn, self.n = fn, 0

    def __call__(self, x):
        self.n += 1
        return self.fn.grad(x)


@pytest.mark.parametrize("method", METHODS)
def test_oracle_counts_every_gradient_evaluation(method):
    fn = Quadratic()
    counting = Counting(fn)
    x0 = fn.x0(0)
    g0 = float(np.linalg.norm(fn.grad(x0)))
    res = run_method(
        build_method(method, fn, g0, CFG, eps_rel=1e-3), fn, eps=1e-3 * g0, x0=x0, budget=5000, grad_fn=counting
    )
    assert res.reached
    # every evaluation of the function's gradient went through the oracle: counted calls + the runner's checks
    checks = counting.n - res.calls
    assert 1 <= checks <= res.calls
    assert res.calls >= 1


def test_methods_cannot_reach_the_function_directly():
    fn = Quadratic()
    oracle = GradientOracle(fn.grad)
    m = O2NC(radius=0.5, eta=1.0, episode=5)
    m.start(fn.x0(0), oracle)
    for _ in range(10):
        m.step(oracle)
    assert oracle.calls == 10 * 2 + 2  # 2 per ODOG iteration + the first hint of each of 2 episodes
    assert not hasattr(m, "fn") and not hasattr(m, "grad")


def test_cmo23_inner_loop_length_follows_log_one_over_eps():
    """The README's choice: K = ceil(log(1/eps) / log(2 / eta_mult)) (base 2 at the frozen eta = 1 / L1)."""
    assert [log_inner_steps(e, 1.0) for e in (0.1, 0.03, 0.01, 0.003, 0.001)] == [4, 6, 7, 9, 10]
    assert [log_inner_steps(e, 0.5) for e in (0.1, 0.01, 0.001)] == [2, 4, 5]  # q = 1/4: base 4
    assert log_inner_steps(0.5, 1.0) == 1 and log_inner_steps(1.0, 1.0) == 1
    with pytest.raises(ParamsError, match="eta"):
        log_inner_steps(0.01, 2.0)  # q = 1: the fixed-point loop no longer contracts
    with pytest.raises(ParamsError, match="eps_rel"):
        build_method("cmo23", Quadratic(), 1.0, CFG)  # K comes from eps: it must be given


@pytest.mark.parametrize(
    "method,eps,k",
    [("cmo23", 0.1, 4), ("cmo23", 0.01, 7), ("cmo23", 0.001, 10), ("cmo23-k2", 0.001, 2), ("odog", 0.001, 1)],
)
def test_calls_per_iteration_follow_k(method, eps, k):
    fn = Quadratic()
    oracle = GradientOracle(fn.grad)
    m = build_method(method, fn, 1.0, CFG, eps_rel=eps)  # episode 10
    assert m.inner_steps == k and m.calls_per_iteration == k + 1
    m.start(fn.x0(0), oracle)
    for _ in range(7):  # inside the first episode: its first hint (k queries) + 7 iterations
        m.step(oracle)
    assert oracle.calls == k + 7 * (k + 1)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_converges_on_a_convex_quadratic_within_known_counts(method):
    fn = Quadratic()
    x0 = fn.x0(0)
    g0 = float(np.linalg.norm(fn.grad(x0)))
    res = run_method(build_method(method, fn, g0, CFG, eps_rel=1e-3), fn, eps=1e-3 * g0, x0=x0, budget=20_000)
    assert res.reached and not res.diverged and res.grad_norm <= 1e-3 * g0
    lo, hi = EXPECTED_CALLS[method]
    assert lo <= res.calls <= hi, res.calls


def test_optimistic_learner_with_perfect_hint_has_zero_regret():
    rng = np.random.default_rng(0)
    g = rng.standard_normal(5)
    radius = 2.0
    learner = OptimisticOGD(5, radius=radius, eta=10.0)
    loss = 0.0
    for _ in range(50):
        d = learner.play(g)  # perfect hint: the loss vector itself
        loss += float(g @ d)
        learner.update(g)
    best = -radius * float(np.linalg.norm(g)) * 50  # best fixed decision in the ball
    assert loss - best == pytest.approx(0.0, abs=1e-9)


def test_torch_optimizer_matches_numpy_iterates():
    fn = make_function("robust-synthetic", synthetic_m=60, synthetic_d=8)
    x0 = fn.x0(3)
    oracle = GradientOracle(fn.grad)
    ref = O2NC(radius=0.3, eta=0.5 / fn.L1, episode=4, hint="extrapolated")
    ref.start(x0, oracle)
    p = torch.nn.Parameter(torch.tensor(x0, dtype=torch.float64))
    A, b = torch.tensor(fn.A), torch.tensor(fn.b)
    opt = ODOG([p], eta=0.5 / fn.L1, radius=0.3, episode=4)

    def closure():
        opt.zero_grad()
        r = A @ p - b
        loss = torch.mean(r * r / (1 + r * r))
        loss.backward()
        return loss

    for _ in range(25):
        ref.step(oracle)
        opt.step(closure)
        assert np.max(np.abs(ref.x - p.detach().numpy())) < 1e-10
    assert opt.calls == oracle.calls


def test_torch_optimizer_trains_a_small_network():
    torch.manual_seed(0)
    X = torch.randn(64, 4, dtype=torch.float64)
    y = X @ torch.tensor([1.0, -2.0, 0.5, 0.0], dtype=torch.float64)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).double()
    opt = ODOG(net.parameters(), eta=0.1, radius=0.2, episode=5)

    def closure():
        opt.zero_grad()
        loss = torch.mean((net(X).squeeze(-1) - y) ** 2)
        loss.backward()
        return loss

    first = closure().item()
    for _ in range(200):
        opt.step(closure)
    assert closure().item() < 0.5 * first


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_gradients_match_finite_differences(name):
    fn = make_function(name, chain_dim=6, synthetic_m=40, synthetic_d=5, digits_n=30, hidden=3)
    x = fn.x0(1) + (0.7 if isinstance(fn, HardChain) else 0.0)
    g = fn.grad(x)
    h = 1e-6
    for i in range(min(fn.dim, 6)):
        e = np.zeros(fn.dim)
        e[i] = h
        assert (fn.value(x + e) - fn.value(x - e)) / (2 * h) == pytest.approx(g[i], rel=1e-4, abs=1e-6)


def test_hard_chain_matches_its_formula_and_finite_differences_on_both_sides_of_the_kink():
    """Coordinates on both sides of +-0.5, so Psi(x) and Psi(-x) are each live somewhere (the stacked fast path
    must not swap them): the value against the chain's sum written out with math, the gradient by differences."""
    import math

    from scipy.special import ndtr

    def psi(t):
        return math.exp(1 - 1 / (2 * t - 1) ** 2) if t > 0.5 else 0.0

    def phi(t):
        return math.sqrt(math.e) * math.sqrt(2 * math.pi) * float(ndtr(t))

    fn = HardChain(7)
    x = np.array([0.9, -0.8, 1.3, 0.2, -1.7, 0.6, -0.55])
    ref = -psi(1.0) * phi(x[0]) + sum(psi(-x[i - 1]) * phi(-x[i]) - psi(x[i - 1]) * phi(x[i]) for i in range(1, 7))
    assert fn.value(x) == pytest.approx(ref, rel=1e-12)
    g, h = fn.grad(x), 1e-6
    for i in range(fn.dim):
        e = np.zeros(fn.dim)
        e[i] = h
        assert (fn.value(x + e) - fn.value(x - e)) / (2 * h) == pytest.approx(g[i], rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("eps", [0.0, -1e-3, float("nan")])
def test_eps_not_positive_is_a_params_error(eps):
    fn = Quadratic()
    with pytest.raises(ParamsError, match="eps"):
        run_method(build_method("gd", fn, 1.0, CFG), fn, eps=eps, x0=fn.x0(0), budget=10)


@pytest.mark.parametrize("field,method", [("lr", "gd"), ("eta", "odog"), ("radius", "cmo23"), ("adam_lr", "adam")])
def test_non_positive_step_size_is_a_params_error(field, method):
    fn = Quadratic()
    with pytest.raises(ParamsError, match=field):
        build_method(method, fn, 1.0, {**CFG, field: 0.0}, eps_rel=1e-3)
    with pytest.raises(ParamsError, match="eta"):
        ODOG([torch.nn.Parameter(torch.zeros(2))], eta=-1.0, radius=1.0)


@pytest.mark.parametrize("method", METHODS)
def test_nan_gradient_is_reported_as_diverged_not_success(method):
    fn = Quadratic()

    seen = []

    def bad(x):  # a correct gradient for three evaluations, then NaN
        seen.append(1)
        return fn.grad(x) if len(seen) <= 3 else np.full_like(x, np.nan)

    res = run_method(
        build_method(method, fn, 1.0, CFG, eps_rel=1e-3), fn, eps=1e-12, x0=fn.x0(0), budget=1000, grad_fn=bad
    )
    assert res.diverged and not res.reached
    assert "NaN" in res.message and "diverged" in res.message
    assert issubclass(Diverged, PaperlineError)


def test_noise_is_seeded_and_shared_between_the_two_odog_queries():
    fn = Quadratic()
    o1, o2 = GradientOracle(fn.grad, sigma=0.1, seed=5), GradientOracle(fn.grad, sigma=0.1, seed=5)
    x = fn.x0(0)
    assert np.array_equal(o1.grad(x), o2.grad(x))
    a = o1.grad(x)
    b = o1.grad(x, reuse_noise=True)
    assert np.array_equal(a, b)
    with pytest.raises(ParamsError, match="sigma"):
        GradientOracle(fn.grad, sigma=-1.0)


def test_noise_sigma_bounds_the_vector_variance_by_default():
    """sigma is the paper's variance bound E||g - grad F||^2 = sigma^2 (total); per-coordinate gives d sigma^2."""
    fn = Quadratic(dim=100)
    x = fn.x0(0)
    for noise, want in (("total", 0.3**2), ("per-coordinate", 100 * 0.3**2)):
        o = GradientOracle(fn.grad, sigma=0.3, seed=1, noise=noise)
        sq = np.mean([np.sum((o.grad(x) - fn.grad(x)) ** 2) for _ in range(400)])
        assert sq == pytest.approx(want, rel=0.05), noise
    with pytest.raises(ParamsError, match="noise"):
        GradientOracle(fn.grad, sigma=0.1, noise="norm")
