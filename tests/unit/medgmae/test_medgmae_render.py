"""The dense Gaussian renderer against references: a direct numpy evaluation of the Gaussian sum, a closed form,
finite differences (gradcheck in float64), and the chunked direct variant."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.medgmae import render as R


def _params(b=2, k=5, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    mu = torch.rand(b, k, 3, generator=g, dtype=dtype)
    scale = 0.05 + 0.25 * torch.rand(b, k, 3, generator=g, dtype=dtype)
    quat = torch.randn(b, k, 4, generator=g, dtype=dtype)
    inten = torch.rand(b, k, generator=g, dtype=dtype)
    return mu, scale, quat, inten


def _numpy_reference(mu, scale, quat, inten, shape, gain):
    """sum_k I_k exp(-1/2 d^T Sigma^-1 d), voxel by voxel, Sigma built from the quaternion in numpy."""
    mu, scale, quat, inten = (t.detach().numpy() for t in (mu, scale, quat, inten))
    axes = [np.linspace(0, 1, n) for n in shape]
    pts = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)
    out = np.zeros((mu.shape[0], len(pts)))
    for b in range(mu.shape[0]):
        for k in range(mu.shape[1]):
            w, x, y, z = quat[b, k] / np.linalg.norm(quat[b, k])
            rot = np.array(
                [
                    [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
                    [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
                    [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
                ]
            )
            cov = rot @ np.diag(scale[b, k] ** 2) @ rot.T
            d = pts - mu[b, k]
            out[b] += inten[b, k] * np.exp(-0.5 * np.einsum("ni,ij,nj->n", d, np.linalg.inv(cov), d))
    return gain * out.reshape(mu.shape[0], *shape)


def test_render_equals_numpy_sum_on_random_parameters():
    shape = (6, 7, 5)
    p = _params()
    ref = _numpy_reference(*p, shape, 0.3)
    np.testing.assert_allclose(R.render(*p, shape, gain=0.3).numpy(), ref, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(R.render_direct(*p, shape, gain=0.3, chunk=17).numpy(), ref, rtol=1e-9, atol=1e-11)


def test_render_float32_matches_float64_at_pipeline_scale():
    p64 = _params(b=1, k=64, seed=3)
    p32 = [t.float() for t in p64]
    v64, v32 = R.render(*p64, (16, 16, 16)), R.render(*p32, (16, 16, 16))
    assert float((v64 - v32.double()).abs().max()) < 1e-4 * float(v64.abs().max())


def test_single_isotropic_gaussian_is_its_closed_form():
    n, sigma, c = 9, 0.2, torch.tensor([0.5, 0.25, 0.75], dtype=torch.float64)
    q = torch.tensor([[[0.3, -0.5, 0.7, 0.1]]], dtype=torch.float64)  # any rotation: isotropic
    vol = R.render(c[None, None], torch.full((1, 1, 3), sigma, dtype=torch.float64), q,
                   torch.tensor([[0.8]], dtype=torch.float64), (n, n, n))[0]  # fmt: skip
    i = torch.arange(n, dtype=torch.float64) / (n - 1)
    d2 = (i[:, None, None] - c[0]) ** 2 + (i[None, :, None] - c[1]) ** 2 + (i[None, None, :] - c[2]) ** 2
    torch.testing.assert_close(vol, 0.8 * torch.exp(-d2 / (2 * sigma**2)), rtol=1e-12, atol=1e-14)
    assert float(vol[4, 2, 6]) == pytest.approx(0.8)  # the peak sits on the voxel at the centre


def test_rotation_is_orthonormal_and_covariance_inverts_precision():
    _, scale, quat, _ = _params(k=7, seed=1)
    rot = R.quat_to_rotmat(quat)
    torch.testing.assert_close(rot @ rot.transpose(-1, -2), torch.eye(3, dtype=torch.float64).expand_as(rot))
    assert torch.allclose(torch.linalg.det(rot), torch.ones(2, 7, dtype=torch.float64))
    eye = R.covariance(scale, quat) @ R.precision(scale, quat)
    torch.testing.assert_close(eye, torch.eye(3, dtype=torch.float64).expand_as(eye))


def test_gradients_match_finite_differences():
    mu, scale, quat, inten = (t.requires_grad_() for t in _params(b=1, k=3, seed=2))
    assert torch.autograd.gradcheck(lambda *a: R.render(*a, (4, 3, 5), gain=0.7), (mu, scale, quat, inten))


def test_bad_shapes_are_refused():
    mu, scale, quat, inten = _params()
    with pytest.raises(ValueError, match="quaternion"):
        R.render(mu, scale, quat[..., :3], inten, (4, 4, 4))
    with pytest.raises(ValueError, match="intensity"):
        R.render(mu, scale, quat, inten[..., None], (4, 4, 4))
