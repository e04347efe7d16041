"""Known answers and sabotage checks for OFMU (components/unlearning), the "trusted verdicts" contract.

Fixture: 3 Gaussian classes in 8 dimensions (240 points), an MLP 8-16-3 (tanh) trained on all of them for
100 Adam steps; forget = the first 40 points (a random 1/6 of every class), retain = the rest. Forget and
retain share one distribution, so under gradient ascent their gradients become strongly correlated
(|cos| ~ 0.9). Batches of 16 + 16, seeded; every method gets the same 540 gradient evaluations (30 OFMU
rounds of T = 3), Adam at lr 1e-2.

Known answer 1 (the mechanism, card claims 2-3): over the last half of the steps OFMU's mean |cos(g_f, g_r)|
is at most half that of OFMU with beta = 0 (measured 0.29 vs 0.90); OFMU's final retain loss is at most a
tenth of GA's (0.25 vs 134); and OFMU still forgets: its forget loss is at least 5x the pre-unlearning one
(0.78 vs 0.015).

Known answer 2 (the penalty step): one outer step (T = 0, SGD, lr 1e-4, rho 1, float64, full batches, at
the model after 10 training steps, where no gradient is near zero) is a descent step on the card's
penalised objective F = L_r + rho ||grad Phi||^2, computed here independently by autograd: its decrease is
within 5% of the first-order prediction lr ||grad F||^2 and exceeds the decrease of a retain-only step (the
step without the Hessian-vector term) by at least half of that prediction (measured 4.377e-4 vs prediction
4.382e-4; retain-only 7.3e-5).

Sabotage: the similarity penalty's sign flipped, the similarity term set to zero, the HVP term dropped; each
must make a known-answer check fail (the parametrised test names the check that must catch it).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch import nn

from components.unlearning import hvp as hvp_mod
from components.unlearning import make_config, ofmu, run_method

LR, ROUNDS = 1e-2, 30
BUDGET = 18 * ROUNDS  # an OFMU round with T = 3 costs 4 * 3 + 6 evaluations


def ce(model, batch):
    x, y = batch
    return nn.functional.cross_entropy(model(x), y, reduction="none")


def _data(dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    centers = torch.randn(3, 8, generator=g) * 2
    y = torch.randint(0, 3, (240,), generator=g)
    x = (centers[y] + torch.randn(240, 8, generator=g)).to(dtype)
    return (x[:40], y[:40]), (x[40:], y[40:]), (x, y)


def _trained(dtype=torch.float32, steps: int = 100) -> nn.Module:
    _, _, everything = _data(dtype)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3)).to(dtype)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(steps):
        loss = ce(model, everything).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


def _stream(forget, retain):
    g = torch.Generator().manual_seed(5)
    while True:
        a = torch.randint(0, len(forget[1]), (16,), generator=g)
        b = torch.randint(0, len(retain[1]), (16,), generator=g)
        yield (forget[0][a], forget[1][a]), (retain[0][b], retain[1][b])


def unlearn(kind: str, opts: dict) -> dict:
    """Run a method on a copy of the trained model; mean |cos| over the last half of steps, final losses."""
    torch.set_num_threads(1)
    forget, retain, _ = _data()
    model = copy.deepcopy(BASE)
    res = run_method(
        kind,
        model,
        cfg=make_config(kind, opts),
        forget_loss=ce,
        retain_loss=ce,
        batches=_stream(forget, retain),
        budget=BUDGET,
    )
    half = res.history[len(res.history) // 2 :]
    with torch.no_grad():
        return {
            "abs_cos": float(np.mean([abs(h["cos"]) for h in half])),
            "loss_f": ce(model, forget).mean().item(),
            "loss_r": ce(model, retain).mean().item(),
        }


BASE = _trained()
OFMU_OPTS = {"lr_inner": LR, "lr_outer": LR}


@pytest.fixture(scope="module")
def baselines() -> dict:
    forget, _, _ = _data()
    with torch.no_grad():
        before = ce(BASE, forget).mean().item()
    return {
        "ga": unlearn("ga", {"lr": LR}),
        "beta0": unlearn("ofmu", {**OFMU_OPTS, "beta": 0.0}),
        "loss_f_before": before,
    }


def mechanism_known_answer(base: dict) -> tuple[bool, str]:
    got = unlearn("ofmu", OFMU_OPTS)
    ok = (
        got["abs_cos"] <= 0.5 * base["beta0"]["abs_cos"]
        and got["loss_r"] <= 0.1 * base["ga"]["loss_r"]
        and got["loss_f"] >= 5 * base["loss_f_before"]
    )
    return ok, f"ofmu {got}; beta=0 {base['beta0']}; ga {base['ga']}; forget loss before {base['loss_f_before']:.4f}"


def penalised_objective(model: nn.Module, forget, retain, *, rho: float, beta: float = 1.0) -> torch.Tensor:
    """The card's F = L_r + rho ||grad Phi||^2 with Phi = L_f - beta cos(g_f, g_r), written out independently."""
    ps = list(model.parameters())
    gf = torch.autograd.grad(ce(model, forget).mean(), ps, create_graph=True)
    lr_ = ce(model, retain).mean()
    gr = torch.autograd.grad(lr_, ps, create_graph=True)
    ff, fr = torch.cat([t.reshape(-1) for t in gf]), torch.cat([t.reshape(-1) for t in gr])
    cos = ff @ fr / (ff.norm() * fr.norm())
    gcos = torch.autograd.grad(cos, ps, create_graph=True)
    gphi = torch.cat([(a - beta * c).reshape(-1) for a, c in zip(gf, gcos)])
    return lr_ + rho * gphi.pow(2).sum()


def outer_step_known_answer(rho: float = 1.0, lr: float = 1e-4) -> tuple[bool, str]:
    """At an early-training point (10 Adam steps: gradients far from zero, so the cosine is smooth)."""
    torch.set_num_threads(1)
    forget, retain, _ = _data(torch.float64)
    base = _trained(torch.float64, steps=10)
    f0 = penalised_objective(base, forget, retain, rho=rho)
    grad_f = torch.autograd.grad(f0, list(base.parameters()))
    predicted = lr * sum(float((g * g).sum()) for g in grad_f)

    stepped = copy.deepcopy(base)
    cfg = make_config("ofmu", {"inner_steps": 0, "optimizer": "sgd", "lr_outer": lr, "rho0": rho})
    fixed = iter(lambda: (forget, retain), None)
    run_method("ofmu", stepped, cfg=cfg, forget_loss=ce, retain_loss=ce, batches=fixed, budget=6)
    drop_ofmu = float(f0.detach()) - float(penalised_objective(stepped, forget, retain, rho=rho).detach())

    retain_only = copy.deepcopy(base)
    gr = torch.autograd.grad(ce(retain_only, retain).mean(), list(retain_only.parameters()))
    with torch.no_grad():
        for p, g in zip(retain_only.parameters(), gr):
            p -= lr * g
    drop_retain = float(f0.detach()) - float(penalised_objective(retain_only, forget, retain, rho=rho).detach())
    ok = abs(drop_ofmu / predicted - 1) <= 0.05 and drop_ofmu >= drop_retain + 0.5 * predicted
    return ok, (
        f"F decrease: ofmu {drop_ofmu:.6g}, first-order prediction {predicted:.6g}, retain-only {drop_retain:.6g}"
    )


def test_ofmu_decorrelates_gradients_keeps_retain_loss_and_forgets(baselines):
    ok, msg = mechanism_known_answer(baselines)
    assert ok, msg


def test_ofmu_outer_step_descends_the_penalised_objective():
    ok, msg = outer_step_known_answer()
    assert ok, msg


def _flip_penalty(a, b, kind, _original=hvp_mod.penalty):
    return -_original(a, b, kind)


def _zero_penalty(a, b, kind, _original=hvp_mod.penalty):
    return 0.0 * _original(a, b, kind)


def _no_hvp(grad_with_graph, params, v, budget, *, units=1, create_graph=False):
    budget.spend(units)  # same cost, no Hessian term
    return [torch.zeros_like(p) for p in params]


@pytest.mark.parametrize(
    "module,attr,fake,check",
    [
        (hvp_mod, "penalty", _flip_penalty, "mechanism"),
        (hvp_mod, "penalty", _zero_penalty, "mechanism"),
        (ofmu, "hvp", _no_hvp, "outer_step"),
    ],
    ids=["flip-penalty-sign", "zero-similarity-term", "drop-hvp-term"],
)
def test_sabotaged_ofmu_fails_a_known_answer_check(baselines, monkeypatch, module, attr, fake, check):
    monkeypatch.setattr(module, attr, fake)
    ok, msg = mechanism_known_answer(baselines) if check == "mechanism" else outer_step_known_answer()
    assert not ok, f"sabotage {fake.__name__} went unnoticed by the {check} check: {msg}"
