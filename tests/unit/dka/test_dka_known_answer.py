"""Known answer for DKA's mechanism: on a frozen backbone that cannot mix tokens (attention and MLP outputs
zeroed), all spatial context must come from the adapter. DKA's large kernel (15 on the 8x8 grid) must then
widen the centre token's ERF to (nearly) the whole image, while the token-wise bottleneck adapter and the linear
probe keep exactly one 8x8 patch (1/64 of the pixels): a stated margin of 0.9 of the image.

Sabotage check (see the README): dropping DKA's large-kernel branch (or replacing the large kernel by 1x1)
leaves the 3x3 kernel's 24x24 pixels (0.14 of the image) and fails the first test.
"""

from __future__ import annotations

import numpy as np
import torch

from components.dka import erf as E
from components.dka.methods import AdapterConfig, build
from components.dka.vit import TinyViT, ViTConfig


def _no_mixing_backbone() -> TinyViT:
    m = TinyViT(ViTConfig(dim=32, depth=2, heads=2), seed=0)
    with torch.no_grad():
        for blk in m.blocks:
            for lin in (blk.attn.proj, blk.mlp.fc2):
                lin.weight.zero_()
                lin.bias.zero_()
    return m


def _area(method: str, t: float = 1e-6) -> float:
    b = build(method, _no_mixing_backbone(), n_classes=4, seed=0, cfg=AdapterConfig(mid=8, k_large=15, k_small=3))
    x = np.random.default_rng(0).normal(size=(4, 1, 64, 64)).astype(np.float32)
    return float(E.erf_area(E.erf_maps(b.model.eval().tokens, x, tokens=True), t).mean())


def test_dka_widens_the_erf_where_the_backbone_cannot():
    dka, bottleneck, linear = _area("dka"), _area("bottleneck"), _area("linear")
    assert abs(bottleneck - 1 / 64) < 1e-9 and abs(linear - 1 / 64) < 1e-9
    assert dka - bottleneck >= 0.9 and dka >= 0.95


def test_each_kernel_sets_its_own_support():
    # one small 3x3 kernel, one adapter per block, 2 blocks: centre patch +- 2 patches -> 5x5 patches
    assert abs(_area("dka-small") - 25 / 64) < 0.01
    assert _area("dka-large") >= 0.95
