"""DEC pieces, the diversity loss and the Chebyshev MMD."""

from __future__ import annotations

import torch

from components.graph.clustering import diversity_loss, kl_loss, mmd2, soft_assign, target_distribution


def _q(share: float, n: int = 100) -> torch.Tensor:
    k = int(share * n)
    return torch.cat([torch.tensor([[0.9, 0.1]]).repeat(n - k, 1), torch.tensor([[0.1, 0.9]]).repeat(k, 1)])


def test_diversity_loss_is_lowest_for_balanced_use():
    eps = 0.45
    losses = {s: float(diversity_loss(_q(s), eps)) for s in (0.0, 0.01, 0.1, 0.3, 0.5)}
    assert losses[0.5] == min(losses.values()) == 0.0
    assert losses[0.0] > losses[0.01] > losses[0.1] > losses[0.3] > losses[0.5]


def test_diversity_loss_is_zero_above_eps_only():
    assert float(diversity_loss(_q(0.3), 0.05)) == 0.0
    assert float(diversity_loss(_q(0.0), 0.2)) > 0.0  # soft usage 0.1 < 0.2


def test_soft_assign_and_target():
    z = torch.tensor([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0]])
    q = soft_assign(z, torch.tensor([[0.0, 0.0], [5.0, 5.0]]))
    assert torch.allclose(q.sum(1), torch.ones(3)) and q[0, 0] > 0.9 and q[2, 1] > 0.9
    p = target_distribution(q)
    assert torch.allclose(p.sum(1), torch.ones(3)) and p[0, 0] > q[0, 0]  # sharpened
    assert float(kl_loss(q, q)) < 1e-6 < float(kl_loss(p, q))


def test_mmd_zero_for_same_set_and_grows_with_separation():
    torch.manual_seed(0)
    a = torch.randn(50, 4)
    assert abs(float(mmd2(a, a, 1.0))) < 1e-6
    near, far = mmd2(a, torch.randn(50, 4) + 0.5, 1.0), mmd2(a, torch.randn(50, 4) + 3.0, 1.0)
    assert 0 < float(near) < float(far)


def _collapsed(n: int = 400) -> tuple[torch.Tensor, torch.Tensor]:
    """Nodes around 0 and a second centre at distance 6: no node's argmax is cluster 1 (a collapse), yet the
    Student-t tail gives cluster 1 a soft usage of about 0.06."""
    torch.manual_seed(0)
    return torch.randn(n, 2), torch.tensor([[0.0, 0.0], [6.0, 0.0]])


def test_soft_usage_cannot_see_a_collapse_but_the_sharpened_one_can():
    z, centres = _collapsed()
    q = soft_assign(z, centres)
    assert float((q.argmax(1) == 1).float().mean()) < 0.01 < 0.02 < float(q[:, 1].mean())
    assert float(diversity_loss(q, 0.02, temperature=1.0)) == 0.0  # the card's soft usage: blind to it
    assert float(diversity_loss(q, 0.02, temperature=0.1)) > 0.01


def test_diversity_loss_pulls_a_collapsed_centre_back():
    z, centres = _collapsed()
    centres = centres.clone().requires_grad_(True)
    opt = torch.optim.Adam([centres], lr=0.1)
    for _ in range(100):
        opt.zero_grad()
        diversity_loss(soft_assign(z, centres), 0.1, temperature=0.1).backward()
        opt.step()
    hard_usage = float((soft_assign(z, centres.detach()).argmax(1) == 1).float().mean())
    assert hard_usage >= 0.05, hard_usage
