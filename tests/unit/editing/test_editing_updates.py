"""The closed-form updates solve the problems they claim to solve."""

from __future__ import annotations

import pytest
import torch

from components.editing.alphaedit import alphaedit_update, null_space_projector
from components.editing.memit import memit_update, second_moment
from components.errors import DataError, ParamsError


def _data(n=20, d_in=64, d_out=16, n0=2000, rank0=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    if rank0 is None:
        k0 = torch.randn(n0, d_in, generator=g, dtype=torch.float64)
    else:
        basis = torch.randn(rank0, d_in, generator=g, dtype=torch.float64)
        k0 = torch.randn(n0, rank0, generator=g, dtype=torch.float64) @ basis
    k1 = torch.randn(n, d_in, generator=g, dtype=torch.float64)
    r1 = torch.randn(n, d_out, generator=g, dtype=torch.float64)
    return k0, k1, r1


def test_memit_solves_its_least_squares_problem():
    k0, k1, r1 = _data()
    cov, lam = second_moment(k0), 0.5
    d = memit_update(k1, r1, cov, lam=lam)
    # the gradient of ||D K1^T - R1^T||^2 + lam tr(D C0 D^T) vanishes at the solution
    grad = (d @ k1.T - r1.T) @ k1 + lam * d @ cov
    assert grad.abs().max() < 1e-8


def test_memit_fits_edited_keys_and_barely_moves_preserved_ones():
    k0, k1, r1 = _data(rank0=32)
    d = memit_update(k1, r1, second_moment(k0), lam=1e3)
    before = r1.norm()
    after = (k1 @ d.T - r1).norm()
    assert after < 0.2 * before  # the residual on edited keys drops
    moved = (k0 @ d.T).norm(dim=1).mean()
    assert moved < 0.1 * (k1 @ d.T).norm(dim=1).mean()  # preserved outputs move far less than edited ones


def test_alphaedit_annihilates_preserved_keys():
    k0, k1, r1 = _data(rank0=32)  # the preserved keys span 32 of 64 directions
    p = null_space_projector(second_moment(k0), rel_threshold=1e-6)
    d = alphaedit_update(k1, r1, p, alpha=1e-3)
    assert (k0 @ d.T).norm() < 1e-8 * k0.norm()  # ||D K0|| ~ 0
    # the part of the edited keys outside span(K0) is still fitted
    assert (k1 @ p @ d.T - r1).norm() < 0.5 * r1.norm()


def test_projector_is_an_orthogonal_projection():
    k0, _, _ = _data(rank0=10)
    p = null_space_projector(second_moment(k0), rel_threshold=1e-6)
    assert torch.allclose(p @ p, p, atol=1e-10) and torch.allclose(p, p.T)
    assert round(float(torch.trace(p))) == 64 - 10


@pytest.mark.parametrize(
    "bad",
    [
        dict(keys=torch.zeros(0, 8), residuals=torch.zeros(0, 4)),
        dict(keys=torch.zeros(3, 8), residuals=torch.zeros(2, 4)),
        dict(keys=torch.zeros(3, 7), residuals=torch.zeros(3, 4)),
    ],
)
def test_bad_shapes_are_data_errors(bad):
    with pytest.raises(DataError):
        memit_update(**bad, cov=torch.eye(8), lam=1.0)


def test_bad_hyperparameters_name_the_key():
    with pytest.raises(ParamsError, match="mom2_weight"):
        memit_update(torch.ones(1, 4), torch.ones(1, 2), torch.eye(4), lam=-1)
    with pytest.raises(ParamsError, match="alpha"):
        alphaedit_update(torch.ones(1, 4), torch.ones(1, 2), torch.eye(4), alpha=0)
    with pytest.raises(ParamsError, match="null_threshold"):
        null_space_projector(torch.eye(4), rel_threshold=2)
