"""The EBT's mathematics against references: finite differences, the causal layout, gradient flow, FLOPs."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from components.ebt import chars
from components.ebt import flops as FL
from components.ebt.energy_model import EBTConfig, EnergyTransformer, load_model, save_model
from components.ebt.inference import best_of_n
from components.ebt.optimise import minimise
from components.ebt.predictor import load_predictor
from components.ebt.training import ebt_loss
from components.ebt.tricks import ReplayBuffer, Tricks, randomised_alpha, step_plan

V, S = 11, 6


def _model(seed: int = 0, **kw) -> EnergyTransformer:
    cfg = EBTConfig(vocab_size=V, d_model=16, n_layers=2, n_heads=2, d_ff=32, max_seq_len=8, step_size=3.0, **kw)
    return EnergyTransformer(cfg, seed=seed)


def _batch(b: int = 3, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, V, (b, S), generator=g), torch.randint(0, V, (b, S), generator=g)


def test_one_step_is_gradient_descent_on_the_energy_by_finite_differences():
    model = _model().double()
    x, _ = _batch()
    ctx = model.context(x)
    y0 = torch.randn(3, S, V, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    y1 = minimise(model, ctx, y0, steps=1).final
    step = (y0 - y1) / model.step_size().item()  # should equal dE/dy
    eps, rng = 1e-6, np.random.default_rng(0)
    for _ in range(12):
        b, s, v = int(rng.integers(3)), int(rng.integers(S)), int(rng.integers(V))
        up, down = y0.clone(), y0.clone()
        up[b, s, v] += eps
        down[b, s, v] -= eps
        with torch.no_grad():
            fd = (model.energy(ctx, up).sum() - model.energy(ctx, down).sum()) / (2 * eps)
        assert step[b, s, v].item() == pytest.approx(fd.item(), rel=1e-5, abs=1e-9)


def test_zero_steps_return_the_initial_prediction():
    model = _model()
    x, _ = _batch()
    y0 = torch.randn(3, S, V)
    traj = minimise(model, model.context(x), y0, steps=0)
    assert traj.final is y0 and traj.energies == []


def test_the_step_size_and_the_energy_receive_gradient_through_the_optimisation():
    model = _model()
    x, y = _batch()
    loss, info = ebt_loss(
        model, x, y, steps=2, tricks=Tricks(), gen=torch.Generator().manual_seed(0), rng=random.Random(0)
    )
    loss.backward()
    assert len(info["ce"]) == 2
    assert model.alpha.grad is not None and torch.isfinite(model.alpha.grad) and model.alpha.grad != 0
    # the energy head reaches the loss only through dE/dy: a second-order path
    assert model.energy_head.weight.grad is not None and model.energy_head.weight.grad.abs().sum() > 0
    first = _model()
    loss, _ = ebt_loss(
        first,
        x,
        y,
        steps=2,
        tricks=Tricks(),
        gen=torch.Generator().manual_seed(0),
        rng=random.Random(0),
        second_order=False,
    )
    loss.backward()
    assert first.energy_head.weight.grad is None and first.alpha.grad is not None


def test_energy_is_causal_in_the_context_and_local_in_the_prediction():
    model = _model()
    x, _ = _batch(1)
    y = torch.randn(1, S, V)
    with torch.no_grad():
        e = model(x, y)
        x2 = x.clone()
        x2[0, 3] = (x2[0, 3] + 1) % V
        e_x = model(x2, y)
        y2 = y.clone()
        y2[0, 2] += 5 * torch.randn(V)
        e_y = model(x, y2)
    assert torch.allclose(e[0, :3], e_x[0, :3]) and not torch.allclose(e[0, 3:], e_x[0, 3:])
    changed = ~torch.isclose(e[0], e_y[0])
    assert changed.tolist() == [i == 2 for i in range(S)]  # a prediction attends to itself, not to the others


def test_best_of_n_keeps_the_minimum_energy_candidate_and_one_candidate_is_the_plain_prediction():
    model = _model()
    x, t = _batch(2)
    w = torch.cat([x, t[:, -1:]], dim=1)
    out = best_of_n(model, w, ns=[1, 3], steps=2, seed=0)
    assert out[1].shape == (2,) and out[3].shape == (2,)
    # selection among 3 includes candidate 0, so per token its energy is never above candidate 0's
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        ctx = model.context(x).repeat(3)
        y0 = torch.randn(6, S, V, generator=g)
        final = minimise(model, ctx, y0, steps=2).final
        e = model.energy(ctx, final).reshape(2, 3, S)
    assert (e.min(1).values <= e[:, 0] + 1e-7).all()


def test_system2_tricks():
    rng = random.Random(0)
    assert step_plan(2, Tricks(), rng) == 2
    plans = {step_plan(2, Tricks(random_steps=2, random_steps_min=1), rng) for _ in range(200)}
    assert plans <= set(range(2, 7)) and len(plans) > 2
    a = randomised_alpha(torch.tensor(4.0), (50, 7), Tricks(step_size_scale=2.0), torch.Generator().manual_seed(0))
    assert a.shape == (50, 7, 1) and a.min() >= 2.0 and a.max() <= 8.0
    buf = ReplayBuffer(max_size=4, sample_size=2)
    assert buf.sample() is None
    buf.add(torch.zeros(6, S + 1, dtype=torch.long), torch.zeros(6, S, V))
    w, y = buf.sample()
    assert len(buf.items) == 4 and w.shape == (2, S + 1) and y.shape == (2, S, V)
    model = _model()
    x, t = _batch()
    loss, _ = ebt_loss(
        model,
        x,
        t,
        steps=1,
        tricks=Tricks(langevin_noise=0.5, replay_buffer=True),
        gen=torch.Generator().manual_seed(0),
        rng=rng,
        replay=buf,
    )
    assert torch.isfinite(loss)


def test_flops_grow_linearly_with_inference_steps_and_training_costs_more():
    model = _model()
    x, y = _batch()
    f = [FL.ebt_infer_flops(model, x, steps=m) for m in (1, 2, 3)]
    assert f[2] - f[1] == pytest.approx(f[1] - f[0]) and f[1] > f[0] > 0
    assert FL.ebt_train_flops(model, x, y, steps=2) > 2 * FL.ebt_infer_flops(model, x, steps=2)


def test_save_load_round_trip_and_served_predictor(tmp_path):
    model = _model(seed=3)
    save_model(model, tmp_path / "m")
    back = load_model(tmp_path / "m")
    x, _ = _batch(1)
    y = torch.randn(1, S, V)
    with torch.no_grad():
        assert torch.allclose(model(x, y), back(x, y)) and back.alpha.item() == model.alpha.item()
        logits, _ = load_predictor(tmp_path / "m")(x)
    assert logits.shape == (1, S, V)


def test_char_vocabulary():
    ids = chars.encode("Café\tok\n\u2603")
    assert chars.decode(ids) == "Cafe ok\n\ufffd" and ids[-1] == chars.UNK and chars.VOCAB_SIZE == 97
