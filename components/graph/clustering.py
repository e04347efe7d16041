"""CER-GOD's loss pieces: DEC soft assignments and target, the diversity loss, and MMD on a Chebyshev kernel."""

from __future__ import annotations

import torch


def soft_assign(z: torch.Tensor, centres: torch.Tensor) -> torch.Tensor:
    """Student-t assignment q_ij proportional to (1 + ||z_i - mu_j||^2)^-1, rows summing to 1 (DEC)."""
    q = 1.0 / (1.0 + torch.cdist(z, centres) ** 2)
    return q / q.sum(1, keepdim=True)


def target_distribution(q: torch.Tensor) -> torch.Tensor:
    """DEC target p_ij proportional to q_ij^2 / sum_i q_ij (sharpened, frequency-normalised); no gradient."""
    q = q.detach()
    w = q**2 / q.sum(0, keepdim=True)
    return w / w.sum(1, keepdim=True)


def kl_loss(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """KL(P || Q) averaged over nodes."""
    return (p * (torch.log(p + 1e-12) - torch.log(q + 1e-12))).sum(1).mean()


def sharpened(q: torch.Tensor, temperature: float) -> torch.Tensor:
    """Rows of q^(1/T), renormalised: T = 1 is q itself, T -> 0 the hard (argmax) assignment."""
    if temperature == 1.0:
        return q
    return torch.softmax(torch.log(q + 1e-12) / temperature, dim=1)


def diversity_loss(q: torch.Tensor, eps: float, temperature: float = 1.0) -> torch.Tensor:
    """sum_k max(0, eps - u_k) with u_k = mean_i of q sharpened at ``temperature``: zero unless some cluster's
    usage falls below eps.

    At T = 1 (the card's soft usage) Student-t assignments keep a cluster that no node joins by argmax above a
    small eps (its heavy tail gives every node some share of it), so the loss cannot see a collapse; a low T
    makes u_k track the share of nodes whose argmax is k, while keeping a gradient.
    """
    return torch.clamp(eps - sharpened(q, temperature).mean(0), min=0.0).sum()


def chebyshev_kernel(a: torch.Tensor, b: torch.Tensor, sigma: float) -> torch.Tensor:
    """exp(-(max_i |a_i - b_i|)^2 / (2 sigma^2)) for every pair of rows."""
    d = torch.cdist(a, b, p=float("inf"))
    return torch.exp(-(d**2) / (2.0 * sigma**2))


def mmd2(a: torch.Tensor, b: torch.Tensor, sigma: float) -> torch.Tensor:
    """Biased (V-statistic) squared MMD between the row sets ``a`` and ``b``."""
    return (
        chebyshev_kernel(a, a, sigma).mean()
        + chebyshev_kernel(b, b, sigma).mean()
        - 2.0 * chebyshev_kernel(a, b, sigma).mean()
    )
