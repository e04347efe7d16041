"""Prediction as optimisation: gradient descent on the candidate logits y_hat under the learned energy.

    y_0 ~ N(0, I) * init_scale                      (``denoising_initial_condition="random_noise"``)
    y_i = y_{i-1} - alpha * dE(x, y_{i-1}) / dy       (alpha learnable; per position when randomised)

As in the repo's ``EBT_NLP.forward``: with ``detach`` (the repo default, ``no_mcmc_detach=False``) each step starts
from a detached y, and with ``create_graph`` (training) the gradient dE/dy is itself differentiable, so the loss
reaches theta and alpha through the update: a second-order (Hessian-vector) backward. Langevin noise is added to
y before the energy is evaluated, as in the repo.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from components.ebt.energy_model import Context, EnergyTransformer


@dataclass
class Trajectory:
    """Candidates y_0..y_M (B, S, V) and the energies E(x, y_{i-1}) evaluated at each step i (B, S)."""

    ys: list[torch.Tensor]
    energies: list[torch.Tensor] = field(default_factory=list)

    @property
    def final(self) -> torch.Tensor:
        return self.ys[-1]


def initial_logits(
    shape: tuple[int, ...],
    *,
    scale: float = 1.0,
    generator: torch.Generator | None = None,
    device: torch.device | str = "cpu",
) -> torch.Tensor:
    """y_0: standard normal logits times ``scale`` (the repo's ``gaussian_random_noise_scaling``)."""
    return torch.randn(shape, generator=generator, device=device) * scale


def minimise(
    model: EnergyTransformer,
    ctx: Context,
    y0: torch.Tensor,
    *,
    steps: int,
    alpha: torch.Tensor | float | None = None,
    create_graph: bool = False,
    detach: bool = True,
    noise_std: float = 0.0,
    generator: torch.Generator | None = None,
    keep_graph: bool = False,
) -> Trajectory:
    """Run ``steps`` gradient steps on y from ``y0``; ``steps=0`` returns ``y0`` unchanged.

    ``alpha`` defaults to the model's clamped learnable step size; a tensor broadcastable to (B, S, 1) gives a
    randomised step per position. Gradients are enabled inside even under ``torch.no_grad`` (inference).
    ``keep_graph`` keeps y_i attached to alpha even without ``create_graph`` (the first-order ablation).
    """
    a = model.step_size() if alpha is None else alpha
    y = y0
    traj = Trajectory([y0])
    with torch.enable_grad():
        for _ in range(steps):
            if detach or not y.requires_grad:
                y = y.detach().requires_grad_()
            if noise_std > 0:
                y = y + noise_std * torch.randn(y.shape, generator=generator, device=y.device)
            energy = model.energy(ctx, y)
            (grad,) = torch.autograd.grad(energy.sum(), y, create_graph=create_graph)
            if not torch.isfinite(grad).all():
                raise FloatingPointError("NaN or Inf gradient of the energy during the inner optimisation")
            y = y - a * grad
            if not (create_graph or keep_graph):
                y, energy = y.detach(), energy.detach()
            traj.ys.append(y)
            traj.energies.append(energy)
    return traj
