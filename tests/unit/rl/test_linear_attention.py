"""One linear-attention layer at the TD construction is exactly one TD(0) step on the in-context weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.errors import ParamsError
from components.rl.linear_attention import LinearTDLayer, LinearTDTransformer, td_construction


def _toy_linear_mdp(k=12, d=4, gamma=0.9, seed=0):
    """Random features of a toy linear MDP: phi_i, phi'_i, rewards r_i = theta^T phi_i, one query phi_q."""
    g = torch.Generator().manual_seed(seed)
    phi = torch.randn(1, k, d, generator=g, dtype=torch.float64)
    phi_next = torch.randn(1, k, d, generator=g, dtype=torch.float64)
    theta = torch.randn(d, generator=g, dtype=torch.float64)
    r = phi[0] @ theta
    phi_q = torch.randn(1, d, generator=g, dtype=torch.float64)
    return phi, phi_next, r.unsqueeze(0), phi_q, gamma


def _td_steps(phi, phi_next, r, gamma, alpha, n):
    """Reference: n batch TD(0) steps w <- w + alpha/k sum_i (r_i + gamma w.phi'_i - w.phi_i) phi_i from w = 0."""
    w = np.zeros(phi.shape[-1])
    P, Pn, R = phi[0].numpy(), phi_next[0].numpy(), r[0].numpy()
    for _ in range(n):
        delta = R + gamma * Pn @ w - P @ w
        w = w + alpha / len(R) * (delta[:, None] * P).sum(0)
    return w


@pytest.mark.parametrize("n_layers", [1, 3])
def test_td_layers_equal_td0_steps(n_layers):
    phi, phi_next, r, phi_q, gamma = _toy_linear_mdp()
    alpha = 0.75  # exactly representable in float32, so the comparison can be exact up to float64 rounding
    tf = LinearTDTransformer(d=4, n_layers=n_layers, init="td", alpha=alpha).double()
    z = tf.prompt(phi, phi_next, r, phi_q, gamma)
    q_hat = tf(z)
    w = _td_steps(phi, phi_next, r, gamma, alpha, n_layers)
    assert q_hat.item() == pytest.approx(float(w @ phi_q[0].numpy()), rel=1e-10, abs=1e-12)


def test_one_layer_updates_only_the_td_error_row():
    phi, phi_next, r, phi_q, gamma = _toy_linear_mdp(seed=3)
    layer = LinearTDLayer(4, init="td", alpha=0.5).double()
    z0 = LinearTDTransformer.prompt(phi, phi_next, r, phi_q, gamma)
    with torch.no_grad():
        z1 = layer(z0)
    assert torch.equal(z1[:, :-1], z0[:, :-1])  # features never change
    w = _td_steps(phi, phi_next, r, gamma, 0.5, 1)
    delta_ctx = r[0].numpy() + (gamma * phi_next[0].numpy() - phi[0].numpy()) @ w
    assert np.allclose(z1[0, -1, :-1].numpy(), delta_ctx)  # row holds each context TD error under w_1
    assert z1[0, -1, -1].item() == pytest.approx(-float(w @ phi_q[0].numpy()))


def test_query_column_is_masked_from_the_keys():
    phi, phi_next, r, phi_q, gamma = _toy_linear_mdp(seed=5)
    tf = LinearTDTransformer(d=4, n_layers=2).double()
    a = tf(tf.prompt(phi, phi_next, r, phi_q, gamma))
    b = tf(tf.prompt(phi, phi_next, r, 2 * phi_q, gamma))
    assert b.item() == pytest.approx(2 * a.item())  # linear in the query: the query never acts as a key


def test_td_construction_shapes_and_bad_init():
    p, g = td_construction(3, 1.0)
    assert p.shape == g.shape == (7, 7) and p.sum() == 1
    with pytest.raises(ParamsError, match="init"):
        LinearTDLayer(3, init="zeros")


def test_random_init_differs_and_is_seeded():
    a = LinearTDTransformer(4, 2, init="random", seed=1)
    b = LinearTDTransformer(4, 2, init="random", seed=1)
    assert torch.equal(a.layers[0].P, b.layers[0].P)
    assert not torch.equal(a.layers[0].P, td_construction(4, 1.0)[0])


def test_stacked_heads_equal_separate_transformers_and_the_readout_equals_the_full_last_layer():
    """heads=2 (ICQL's twin critics in one batched forward) computes what two separate transformers with the same
    P, G compute on their own prompts; the last layer's query readout equals the full layer's Z[-1, -1]."""
    torch.manual_seed(0)
    d, k, b, n = 3, 6, 5, 2
    stacked = LinearTDTransformer(d, n_layers=3, init="random", seed=4, heads=n).double()
    with torch.no_grad():
        for layer in stacked.layers:  # large enough that every entry of P and G matters
            layer.P.normal_(0, 0.3), layer.G.normal_(0, 0.3)
    phi, phi_next, phi_q = (torch.randn(n, b, *s, dtype=torch.float64) for s in ((k, d), (k, d), (d,)))
    r = torch.randn(b, k, dtype=torch.float64)
    got = stacked(stacked.prompt(phi, phi_next, r, phi_q, 0.9))
    assert got.shape == (n, b)
    for h in range(n):
        single = LinearTDTransformer(d, n_layers=3, init="td").double()
        with torch.no_grad():
            for one, many in zip(single.layers, stacked.layers):
                one.P.copy_(many.P[h]), one.G.copy_(many.G[h])
            z = single.prompt(phi[h], phi_next[h], r, phi_q[h], 0.9)
            full = z
            for layer in single.layers:
                full = layer(full)
        assert torch.allclose(got[h], single(z), rtol=1e-10, atol=1e-12)
        assert torch.allclose(got[h], -full[:, -1, -1], rtol=1e-10, atol=1e-12)  # the readout is the full layer's


def test_td_heads_each_equal_td0_steps():
    phi, phi_next, r, phi_q, gamma = _toy_linear_mdp(seed=7)
    tf = LinearTDTransformer(d=4, n_layers=2, init="td", alpha=0.75, heads=2).double()
    q = tf(tf.prompt(phi.expand(2, -1, -1, -1), phi_next.expand(2, -1, -1, -1), r, phi_q.expand(2, -1, -1), gamma))
    w = _td_steps(phi, phi_next, r, gamma, 0.75, 2)
    assert q.shape == (2, 1) and np.allclose(q.detach().numpy(), float(w @ phi_q[0].numpy()), rtol=1e-10)
