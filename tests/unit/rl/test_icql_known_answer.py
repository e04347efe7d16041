"""ICQL known-answer test and its sabotage check (ARCHITECTURE.md, "Method tests").

Fixture (built here, seeded): a compositional policy-evaluation MDP. Two regions, each a deterministic chain of
5 positions ending in a terminal; the state is (region * 10, position / 5) plus jitter, 4 copies of every
transition (40 in all). Features phi(s, a) = one-hot(position) are shared by both regions (aliased), but the
rewards differ by region (N(0, 1) per region and position), so a single global linear Q cannot fit both while
each region's local Q is exactly linear: Q(p) = sum_{j >= p} gamma^(j - p) r(j), gamma = 0.9.

The method: contexts from ``context_indices`` (the k = 19 nearest other dataset states, i.e. the rest of the
query's region), a ``LinearTDTransformer`` at its TD construction (30 layers, alpha 2.5: a batch TD step of 0.5
per position) reads Q-hat at every dataset state. Check: MSE(Q-hat, Q) <= 0.25 * the best trivial fit, the
smaller of a constant and the global least-squares linear Q on phi (scikit-learn; the "global Q" of IQL).

Measured (seed 0): MSE 4.5e-10 (exact after >= 5 layers, up to float error) vs trivial 0.224 (global linear Q;
constant 0.688); random-context critic 0.444 for reference. Sabotaged (the failing value): contexts replaced by
random transitions -> MSE 0.444; TD sign flipped (G -> -G) -> MSE 1.0e14; bootstrap sign flipped (r - gamma Q')
-> MSE 0.967. The threshold is 0.25 * 0.224 = 0.056.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error

from components.rl import linear_attention, retrieval
from components.rl.linear_attention import LinearTDTransformer

N_POS, COPIES, GAMMA, K, LAYERS, ALPHA = 5, 4, 0.9, 19, 30, 2.5
RATIO = 0.25


def chain_fixture(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    rewards = rng.normal(0, 1, (2, N_POS))
    q_true = np.zeros((2, N_POS))
    for p in reversed(range(N_POS)):
        q_true[:, p] = rewards[:, p] + (GAMMA * q_true[:, p + 1] if p + 1 < N_POS else 0.0)
    rows = [(reg, p) for reg in range(2) for p in range(N_POS) for _ in range(COPIES)]
    region, pos = np.array(rows).T
    states = np.stack([region * 10.0, pos / N_POS], 1) + rng.normal(0, 0.01, (len(rows), 2))
    eye = np.eye(N_POS)
    last = pos == N_POS - 1
    phi_next = np.where(last[:, None], 0.0, eye[np.minimum(pos + 1, N_POS - 1)])  # zero after the terminal
    return {
        "states": states,
        "phi": eye[pos],
        "phi_next": phi_next,
        "rew": rewards[region, pos],
        "q": q_true[region, pos],
    }


def in_context_q(fx: dict, mode: str = "nearest") -> np.ndarray:
    idx = retrieval.context_indices(fx["states"], K, mode)
    t = {k: torch.as_tensor(v, dtype=torch.float32) for k, v in fx.items()}
    tf = LinearTDTransformer(N_POS, n_layers=LAYERS, init="td", alpha=ALPHA)
    with torch.no_grad():
        z = tf.prompt(t["phi"][idx], t["phi_next"][idx], t["rew"][idx], t["phi"], GAMMA)
        return tf(z).numpy().astype(np.float64)


def known_answer(seed: int = 0) -> dict:
    fx = chain_fixture(seed)
    q = fx["q"]
    mse = {
        "icql": mean_squared_error(q, in_context_q(fx)),
        "random_context": mean_squared_error(q, in_context_q(fx, "random")),
        "constant": mean_squared_error(q, np.full_like(q, q.mean())),
        "global_linear": mean_squared_error(q, LinearRegression().fit(fx["phi"], q).predict(fx["phi"])),
    }
    trivial = min(mse["constant"], mse["global_linear"])
    return {**mse, "trivial": trivial, "passes": bool(mse["icql"] <= RATIO * trivial)}


def test_icql_known_answer():
    m = known_answer()
    assert m["passes"], m


def _random_context(monkeypatch):
    real = retrieval.context_indices
    monkeypatch.setattr(retrieval, "context_indices", lambda s, k, mode="nearest", **kw: real(s, k, "random", **kw))


def _td_sign_flipped(monkeypatch):
    real = linear_attention.td_construction

    def flipped(d, alpha):
        p, g = real(d, alpha)
        return p, -g

    monkeypatch.setattr(linear_attention, "td_construction", flipped)


def _bootstrap_sign_flipped(monkeypatch):
    real = linear_attention.td_construction

    def flipped(d, alpha):
        p, g = real(d, alpha)
        g[:d, d : 2 * d] *= -1
        return p, g

    monkeypatch.setattr(linear_attention, "td_construction", flipped)


@pytest.mark.parametrize(
    "sabotage",
    [_random_context, _td_sign_flipped, _bootstrap_sign_flipped],
    ids=["random-context", "td-sign-flipped", "bootstrap-sign-flipped"],
)
def test_sabotage_breaks_the_known_answer(monkeypatch, sabotage):
    sabotage(monkeypatch)
    m = known_answer()
    assert not m["passes"], m
