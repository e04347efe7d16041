"""Known answers for MedGMAE's core: a volume that is itself a sum of Gaussians is fitted to > 40 dB (a constant
volume, the trivial baseline, stays far below), and masked pretraining lowers the masked-voxel loss of held-out
volumes against the untrained model, for both objectives (sabotage: loss on the visible voxels, or the renderer
detached from the decoder, breaks these or test_medgmae_model's gradient checks)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.medgmae import fit as FT
from components.medgmae import model as M
from components.medgmae.volumes import phantoms

TINY = M.ModelConfig(size=16, patch=4, dim=32, depth=2, heads=2, dec_dim=32, dec_depth=1, dec_heads=2, n_gaussians=16)


@pytest.mark.parametrize("seed", [0, 4])
def test_fit_to_a_sum_of_gaussians_reaches_40_db(seed):
    g = torch.Generator().manual_seed(seed)
    torch.set_num_threads(1)
    truth = FT.random_raw(4, g, scale_sd=0.3)  # 4 Gaussians, centres well inside the cube, intensities in (0, 1)
    u = 0.25 + 0.5 * torch.rand(4, 3, generator=g)
    truth["mu"], truth["intensity"] = torch.log(u / (1 - u)), torch.randn(4, 1, generator=g)
    target = FT.render_raw(truth, (12, 12, 12), 1.0).detach()
    res = FT.fit(target, FT.random_raw(8, g), iters=600, lr=0.1, gain=1.0, target_psnr=40.0)  # 2K from random
    const = float(10 * torch.log10(1 / (target - target.mean()).pow(2).mean()))
    assert res.iters_to_target is not None and res.final_psnr >= 40.0
    assert res.final_psnr > const + 15  # far above the best constant volume
    assert res.psnr[0] < 40.0  # the random start is not already there


def test_pretraining_lowers_held_out_masked_loss():
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    pool = torch.as_tensor(phantoms(48, 16, rng))
    held = torch.as_tensor(phantoms(16, 16, np.random.default_rng(99)))
    for objective in M.OBJECTIVES:
        m = M.MaskedAutoencoder3D(TINY, objective, seed=0)
        before = M.masked_loss(m, held, 0.75, seed=5)
        M.pretrain(m, lambda g: pool[torch.randint(len(pool), (8,), generator=g)],
                   steps=60, lr=3e-3, ratio=0.75, seed=0, warmup=5)  # fmt: skip
        after = M.masked_loss(m, held, 0.75, seed=5)
        assert after < 0.5 * before, (objective, before, after)
