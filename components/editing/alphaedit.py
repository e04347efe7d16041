"""AlphaEdit (Fang et al., 2025): MEMIT's update projected onto the null space of the preserved keys.

``P`` projects onto the eigenvectors of ``C0 = E[k0 k0^T]`` (the uncentred second moment) whose eigenvalues are
below ``rel_threshold * max eigenvalue``. The published code (jianghoucheng/AlphaEdit, ``experiments/evaluate.py``
``get_project``) takes the SVD of the same uncentred moment (MEMIT's ``layer_stats`` mom2) and keeps the singular
vectors with singular value below an *absolute* ``nullspace_threshold`` (2e-2 in its GPT-2 XL, GPT-J and Llama-3
hparams; 2e-2 hard-coded in ``evaluate_sequential.py``). For a symmetric PSD matrix the SVD and the eigendecomposition
coincide, so the subspace is the same family; only the threshold's scale differs (an absolute value is meaningless
for another model's activations), so the relative threshold is tuned on the dev split. The update is

    D = R1^T K1 P ((K1^T K1 + Kp^T Kp) P + alpha I)^-1

(AlphaEdit's ``solve(P (K K^T + Kp Kp^T) + L2 I, P K R^T)^T``, with ``Kp`` the keys of earlier edits
when editing sequentially). For any preserved key ``x`` with ``P x = 0``, ``D x = 0`` exactly.
"""

from __future__ import annotations

import torch

from components.editing.memit import _check
from components.errors import ParamsError


def null_space_projector(cov: torch.Tensor, *, rel_threshold: float = 1e-2) -> torch.Tensor:
    """``P = U0 U0^T`` over the eigenvectors of ``cov`` with eigenvalue < rel_threshold * max eigenvalue."""
    if not 0 < rel_threshold < 1:
        raise ParamsError(f"null_threshold: must be in (0, 1), got {rel_threshold}")
    evals, evecs = torch.linalg.eigh(cov.double())
    keep = evecs[:, evals < rel_threshold * evals.max()]
    return keep @ keep.T


def alphaedit_update(
    keys: torch.Tensor,
    residuals: torch.Tensor,
    projector: torch.Tensor,
    *,
    alpha: float = 10.0,
    prev_keys: torch.Tensor | None = None,
) -> torch.Tensor:
    """The projected weight change ``D`` (d_out x d_in)."""
    if alpha <= 0:
        raise ParamsError(f"alpha (L2): must be > 0, got {alpha}")
    _check(keys, residuals, projector.shape[0])
    k1, r1, p = keys.double(), residuals.double(), projector.double()
    kk = k1.T @ k1
    if prev_keys is not None and prev_keys.numel():
        kk = kk + prev_keys.double().T @ prev_keys.double()
    a = p @ kk + alpha * torch.eye(p.shape[0], dtype=torch.float64)
    return torch.linalg.solve(a, p @ k1.T @ r1).T
