"""Unlearning methods: HVP and penalty gradients are exact, budgets are spent exactly, GA forgets, zero is a no-op."""

import copy

import pytest
import torch
from torch import nn
from torch.func import functional_call

from components.errors import ParamsError
from components.unlearning import make_config, run_method, step_cost
from components.unlearning.base import Budget, cosine, grads
from components.unlearning.hvp import hvp, penalty
from components.unlearning.npo import npo_loss


def _model(dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3)).to(dtype)


def _data(dtype=torch.float32, seed=1, n=12):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 4, generator=g, dtype=dtype), torch.randint(0, 3, (n,), generator=g)


def ce(model, batch):
    x, y = batch
    return nn.functional.cross_entropy(model(x), y, reduction="none")


def _stream(seed=0):
    forget, retain = _data(seed=seed + 10, n=8), _data(seed=seed + 20, n=8)
    while True:
        yield forget, retain


def _params(m):
    return [p for p in m.parameters()]


def test_hvp_matches_finite_differences():
    m, batch = _model(torch.float64), _data(torch.float64)
    ps = _params(m)
    g = grads(ce(m, batch).mean(), ps, Budget(10), create_graph=True)
    v = [torch.randn_like(p) for p in ps]
    hv = hvp(g, ps, v, Budget(10))
    eps = 1e-5

    def grad_at(sign):
        mm = copy.deepcopy(m)
        with torch.no_grad():
            for p, d in zip(mm.parameters(), v):
                p.add_(sign * eps * d)
        return torch.autograd.grad(ce(mm, batch).mean(), list(mm.parameters()))

    fd = [(a - b) / (2 * eps) for a, b in zip(grad_at(1), grad_at(-1))]
    for a, b in zip(hv, fd):
        assert torch.allclose(a, b, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("kind", ["cos", "cos2", "abs"])
def test_penalty_gradient_passes_gradcheck(kind):
    m = _model(torch.float64)
    names = [n for n, _ in m.named_parameters()]
    shapes = [p.shape for p in m.parameters()]
    f_batch, r_batch = _data(torch.float64, seed=3), _data(torch.float64, seed=4)

    def pen(flat):
        chunks, i = {}, 0
        for n, s in zip(names, shapes):
            chunks[n] = flat[i : i + s.numel()].view(s)
            i += s.numel()
        vals = list(chunks.values())
        lf = ce(lambda x: functional_call(m, chunks, (x,)), f_batch).mean()
        lr = ce(lambda x: functional_call(m, chunks, (x,)), r_batch).mean()
        gf = torch.autograd.grad(lf, vals, create_graph=True)
        gr = torch.autograd.grad(lr, vals, create_graph=True)
        return penalty(gf, gr, kind)

    flat = torch.cat([p.detach().reshape(-1) for p in m.parameters()]).requires_grad_(True)
    assert torch.autograd.gradcheck(pen, (flat,), eps=1e-6, atol=1e-5)


METHOD_CASES = [
    ("ga", {}),
    ("graddiff", {}),
    ("npo", {}),
    ("ofmu", {}),
    ("ofmu", {"hvp_mode": "forget_only"}),
    ("ofmu", {"inner_on_copy": True}),
    ("ofmu", {"beta": 0.0, "inner_steps": 1}),
]


@pytest.mark.parametrize("kind,opts", METHOD_CASES)
def test_every_method_spends_exactly_its_budget(kind, opts):
    cfg = make_config(kind, opts)
    cost = step_cost(kind, cfg)
    budget = 3 * cost
    res = run_method(kind, _model(), cfg=cfg, forget_loss=ce, retain_loss=ce, batches=_stream(), budget=budget)
    assert res.used == budget
    assert res.budget == budget
    assert len(res.history) == res.steps > 0
    assert all(-1.0 <= h["cos"] <= 1.0 for h in res.history)


def test_ofmu_round_cost_counts_inner_and_outer_evaluations():
    assert step_cost("ofmu", make_config("ofmu", {"inner_steps": 3})) == 4 * 3 + 6
    assert step_cost("ofmu", make_config("ofmu", {"inner_steps": 3, "hvp_mode": "forget_only"})) == 4 * 3 + 5
    res = run_method(
        "ofmu",
        _model(),
        cfg=make_config("ofmu", {"inner_steps": 2}),
        forget_loss=ce,
        retain_loss=ce,
        batches=_stream(),
        budget=2 * 14,
    )
    assert [h["phase"] for h in res.history] == ["inner", "inner", "outer"] * 2
    assert res.history[-1]["rho"] == pytest.approx(0.01 * 1.1)


@pytest.mark.parametrize("kind", ["graddiff", "npo", "ofmu"])  # GA costs 1: every budget is a multiple
def test_budget_that_is_not_a_whole_number_of_steps_is_refused(kind):
    cfg = make_config(kind, {})
    with pytest.raises(ParamsError, match="not a multiple"):
        run_method(
            kind, _model(), cfg=cfg, forget_loss=ce, retain_loss=ce, batches=_stream(), budget=step_cost(kind, cfg) + 1
        )


def test_negative_budget_is_refused():
    with pytest.raises(ParamsError, match="budget"):
        Budget(-1)


def test_budget_refuses_overspending():
    b = Budget(2)
    b.spend(2)
    with pytest.raises(ParamsError, match="exceed"):
        b.spend(1)


def test_gradient_ascent_raises_the_forget_loss():
    m = _model()
    forget = _data(seed=10, n=8)
    before = ce(m, forget).mean().item()
    run_method(
        "ga", m, cfg=make_config("ga", {"lr": 1e-2}), forget_loss=ce, retain_loss=ce, batches=_stream(), budget=20
    )
    assert ce(m, forget).mean().item() > before + 0.1


@pytest.mark.parametrize("kind", ["ga", "graddiff", "npo", "ofmu"])
def test_zero_steps_leave_the_model_unchanged(kind):
    m = _model()
    before = copy.deepcopy(m.state_dict())
    res = run_method(kind, m, cfg=make_config(kind, {}), forget_loss=ce, retain_loss=ce, batches=_stream(), budget=0)
    assert res.steps == 0 and res.used == 0
    for k, v in m.state_dict().items():
        assert torch.equal(v, before[k])


def test_npo_loss_is_two_over_beta_log2_at_the_reference():
    nll = torch.tensor([1.0, 2.0, 3.0])
    assert npo_loss(nll, nll, beta=0.1).item() == pytest.approx(2 / 0.1 * torch.log(torch.tensor(2.0)).item())
    assert npo_loss(nll + 1.0, nll, beta=0.1).item() < npo_loss(nll, nll, beta=0.1).item()


def test_unknown_method_and_option_are_named():
    with pytest.raises(ParamsError, match="unknown unlearning method 'rmu'"):
        make_config("rmu", {})
    with pytest.raises(ParamsError, match="unknown option"):
        make_config("ofmu", {"betta": 1.0})
    with pytest.raises(ParamsError, match="hvp_mode"):
        make_config("ofmu", {"hvp_mode": "exact"})


def test_cosine_of_parallel_and_opposite_gradients():
    a = [torch.tensor([1.0, 2.0]), torch.tensor([3.0])]
    assert cosine(a, [2 * t for t in a]).item() == pytest.approx(1.0)
    assert cosine(a, [-t for t in a]).item() == pytest.approx(-1.0)


def test_ga_early_stop_ends_once_the_forget_loss_passes_the_threshold():
    """Issue 19: GA spent every evaluation on pure ascent and always ended at MU = 0. With ``stop_loss_f`` it stops
    (keeping the weights it had) once the forget-batch loss exceeds the threshold, and says so."""
    forget, retain = _data(seed=10, n=8), _data(seed=20, n=8)
    m0 = _model()
    threshold = ce(m0, forget).mean().item() + 0.5
    free, stopped = copy.deepcopy(m0), copy.deepcopy(m0)
    r_free = run_method(
        "ga", free, cfg=make_config("ga", {"lr": 5e-2}), forget_loss=ce, retain_loss=ce, batches=_stream(), budget=60
    )
    r_stop = run_method(
        "ga",
        stopped,
        cfg=make_config("ga", {"lr": 5e-2, "stop_loss_f": threshold}),
        forget_loss=ce,
        retain_loss=ce,
        batches=_stream(),
        budget=60,
    )
    assert not r_free.stopped and r_free.used == 60
    assert r_stop.stopped and 0 < r_stop.used < 60 and r_stop.steps == r_stop.used
    assert r_stop.history[-1]["loss_f"] <= threshold < ce(stopped, forget).mean().item()  # stopped right after
    assert ce(stopped, retain).mean().item() < ce(free, retain).mean().item() / 2
    assert r_stop.to_dict()["stopped"] is True


def test_ga_without_a_threshold_never_stops():
    r = run_method(
        "ga",
        _model(),
        cfg=make_config("ga", {"lr": 1e-2}),
        forget_loss=ce,
        retain_loss=ce,
        batches=_stream(),
        budget=10,
    )
    assert not r.stopped and r.used == 10
