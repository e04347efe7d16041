"""The ERF tool against closed forms: a single conv layer's ERF is its kernel support."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.dka import erf as E


@pytest.mark.parametrize("k", [1, 3, 5, 7])
def test_erf_of_one_conv_layer_is_its_kernel_support(k):
    conv = torch.nn.Conv2d(1, 2, k, padding=k // 2, bias=False)
    with torch.no_grad():
        conv.weight.copy_(torch.rand(conv.weight.shape) + 0.5)  # no zero tap
    x = np.random.default_rng(0).normal(size=(3, 1, 16, 16)).astype(np.float32)
    maps = E.erf_maps(conv, x, tokens=False)
    support = maps[0] > 0
    rows, cols = np.nonzero(support)
    assert support.sum() == k * k
    assert (rows.min(), rows.max(), cols.min(), cols.max()) == (8 - k // 2, 8 + k // 2, 8 - k // 2, 8 + k // 2)
    assert np.allclose(E.erf_area(maps, 1e-9), k * k / 256)
    # with all-equal taps the normalised map is 1 on the support: every threshold below 1 gives k^2 pixels
    with torch.no_grad():
        conv.weight.fill_(1.0)
    assert np.allclose(E.erf_area(E.erf_maps(conv, x, tokens=False), 0.2), k * k / 256)


def test_erf_area_thresholds_and_empty_maps():
    maps = np.zeros((2, 4, 4))
    maps[0, 0, 0], maps[0, 1, 1], maps[0, 2, 2] = 1.0, 0.1, 0.01
    assert E.erf_area(maps, 0.05).tolist() == [2 / 16, 0.0]
    assert E.erf_area(maps, 0.2).tolist() == [1 / 16, 0.0]


def test_token_centre_is_the_middle_patch():
    def fn(x):  # tokens = CLS + 4x4 grid of 2x2-pixel patches (each token its patch's pixel sum)
        b = x.shape[0]
        patches = x.reshape(b, 1, 4, 2, 4, 2).sum((1, 3, 5)).reshape(b, 16, 1)
        return torch.cat([patches.sum(1, keepdim=True), patches], 1)

    maps = E.erf_maps(fn, np.ones((1, 1, 8, 8), np.float32), tokens=True)
    assert np.argwhere(maps[0] > 0).tolist() == [[4, 4], [4, 5], [5, 4], [5, 5]]
