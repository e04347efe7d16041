"""The model's mechanics: the official heads' initialisation, the masks, the loss on the masked voxels only (its
gradient is zero on every visible voxel), the renderer attached to the decoder, the patch layout of the voxel
decoder, and the light UNETR with MONAI's Dice against a hand count."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.errors import ParamsError
from components.medgmae import model as M
from components.medgmae.segment import SegUNETR, dice_per_volume, mean_foreground_dice

TINY = M.ModelConfig(size=16, patch=4, dim=32, depth=2, heads=2, dec_dim=32, dec_depth=1, dec_heads=2, n_gaussians=16)


def test_official_head_initialisation():
    m = M.MaskedAutoencoder3D(TINY, "medgmae", seed=0)
    keep, _ = M.random_mask(3, TINY.n_tokens, 0.75, torch.Generator().manual_seed(0))
    g = m.decoder(m.encoder(torch.rand(3, 1, 16, 16, 16), keep), keep)
    assert g["mu"].shape == (3, 16, 3) and g["intensity"].shape == (3, 16)
    assert float(g["scale"].detach().mean()) == pytest.approx(0.2, abs=0.02)  # sigmoid(-1.386)
    assert float(g["intensity"].detach().mean()) == pytest.approx(0.4, abs=0.1)  # sigmoid(-0.405)
    torch.testing.assert_close(g["quat"].norm(dim=-1), torch.ones(3, 16))
    assert float(g["mu"].detach().min()) > 0 and float(g["mu"].detach().max()) < 1


def test_mask_counts_and_voxel_layout():
    keep, mask = M.random_mask(4, 64, 0.75, torch.Generator().manual_seed(1))
    assert keep.shape == (4, 16) and mask.sum(1).tolist() == [48] * 4
    assert not mask.gather(1, keep).any()
    vm = M.voxel_mask(mask, 4, 8)
    assert vm.shape == (4, 1, 32, 32, 32) and float(vm.mean()) == 0.75
    # token t = (i, j, k) in C order covers voxels [8i, 8i+8) x [8j, 8j+8) x [8k, 8k+8): compare with Conv3d's grid
    tok = torch.arange(64).view(1, 1, 4, 4, 4).float()
    up = tok.repeat_interleave(8, 2).repeat_interleave(8, 3).repeat_interleave(8, 4)
    for t in (0, 5, 37, 63):
        one = M.voxel_mask(torch.arange(64)[None] == t, 4, 8)
        assert bool(((up == t).float() == one).all())
    with pytest.raises(ParamsError, match="mask_ratio"):
        M.random_mask(1, 8, 1.0)


@pytest.mark.parametrize("objective", M.OBJECTIVES)
def test_loss_sees_only_masked_voxels_and_reaches_every_module(objective):
    torch.manual_seed(0)
    m = M.MaskedAutoencoder3D(TINY, objective, seed=0)
    x = torch.rand(2, 1, 16, 16, 16)
    pred_box = {}
    orig = m.reconstruct

    def spy(x_, keep):
        pred = orig(x_, keep)
        pred.retain_grad()
        pred_box["p"] = pred
        return pred

    m.reconstruct = spy
    g = torch.Generator().manual_seed(3)
    loss = m.loss(x, 0.75, g)
    loss.backward()
    keep, mask = M.random_mask(2, TINY.n_tokens, 0.75, torch.Generator().manual_seed(3))
    vm = M.voxel_mask(mask, TINY.grid, TINY.patch).bool()
    grad = pred_box["p"].grad
    assert float(grad[~vm].abs().max()) == 0.0  # no visible voxel in the loss
    assert float((grad[vm] != 0).float().mean()) > 0.99
    ref = ((pred_box["p"] - x)[vm] ** 2).mean()
    assert loss.item() == pytest.approx(ref.item(), rel=1e-5)
    # the renderer (or the voxel head) is attached: gradients reach the heads and the encoder
    dec_head = m.decoder.heads.position.weight if objective == "medgmae" else m.decoder.pred.weight
    for p in (dec_head, m.encoder.patch_embed.weight, m.encoder.blocks[0].attn.qkv.weight):
        assert p.grad is not None and float(p.grad.abs().sum()) > 0


def test_voxel_decoder_patch_layout_inverts_patchify():
    m = M.MaskedAutoencoder3D(TINY, "voxel-mae", seed=0)
    c = TINY
    x = torch.rand(2, 1, 16, 16, 16)
    g, q = c.grid, c.patch
    patches = x.view(2, g, q, g, q, g, q).permute(0, 1, 3, 5, 2, 4, 6).reshape(2, c.n_tokens, q**3)
    m.decoder.pred.forward = lambda h: patches  # the head emits the true patches: unpatchify must rebuild x
    keep, _ = M.random_mask(2, c.n_tokens, 0.5)
    torch.testing.assert_close(m.decoder(m.encoder(x, keep), keep), x)


def test_unknown_objective_and_shapes_are_refused():
    with pytest.raises(ParamsError, match="objective"):
        M.MaskedAutoencoder3D(TINY, "spark")
    with pytest.raises(ParamsError, match="multiple of patch"):
        M.ModelConfig(size=30, patch=8)


def test_unetr_shapes_and_monai_dice_against_a_hand_count():
    cfg = M.ModelConfig(size=16, patch=8, dim=32, depth=2, heads=2)
    seg = SegUNETR(cfg, 3, feature_size=4)
    assert seg(torch.rand(2, 1, 16, 16, 16)).shape == (2, 3, 16, 16, 16)
    rng = np.random.default_rng(0)
    lab = torch.as_tensor(rng.integers(0, 3, (2, 1, 8, 8, 8)))
    pred = torch.as_tensor(rng.integers(0, 3, (2, 1, 8, 8, 8)))
    pred[1][pred[1] == 2] = 0
    lab[1][lab[1] == 2] = 0  # class 2 absent in both for volume 1: NaN, left out of the mean
    d = dice_per_volume(pred, lab, 3)
    for b in range(2):
        for c in (1, 2):
            p, t = (pred[b] == c).numpy(), (lab[b] == c).numpy()
            want = 2 * (p & t).sum() / (p.sum() + t.sum()) if p.sum() + t.sum() else np.nan
            np.testing.assert_allclose(d[b, c - 1], want, rtol=1e-6)
    assert np.isnan(d[1, 1])
    np.testing.assert_allclose(mean_foreground_dice(d), [np.mean(d[0]), d[1, 0]], rtol=1e-6)
