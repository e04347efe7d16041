"""DKA, the bottleneck adapter, Convpass and LoRA (peft): identities, parameter counts, frozen weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.dka import adapters as A
from components.dka.methods import METHODS, AdapterConfig, build, load_adapted, save_adapted
from components.dka.train import fit
from components.dka.vit import TinyViT, ViTConfig

CFG = ViTConfig(img_size=32, patch=8, dim=32, depth=2, heads=2)


def _tokens(b=3, side=4, dim=32, seed=0):
    return torch.randn(b, 1 + side * side, dim, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("branches", A.BRANCHES)
def test_dka_with_zeroed_up_is_the_identity(branches):
    m = A.DKA(32, 8, 5, 3, branches).eval()
    x = _tokens()
    assert not torch.allclose(m(x), x)  # default init (as the official code): not the identity
    torch.nn.init.zeros_(m.adapter_up.weight)
    assert torch.equal(m(x), x)


def test_dka_matches_a_hand_written_forward():
    """The official block: GELU(Down), dwconv_large + dwconv_small on the patch grid, CLS skips the convs,
    GELU, Up, residual (checked against an explicit loop over the grid, eval mode)."""
    m = A.DKA(32, 4, 3, 1).eval()
    x = _tokens(b=1, side=4)
    z = torch.nn.functional.gelu(x @ m.adapter_down.weight.T)[0]
    grid = z[1:].reshape(4, 4, 4)  # (row, col, channel)
    wl, ws = m.conv_large.weight[:, 0], m.conv_small.weight[:, 0, 0, 0]
    mixed = torch.zeros_like(grid)
    for r in range(4):
        for c in range(4):
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    if 0 <= r + dr < 4 and 0 <= c + dc < 4:
                        mixed[r, c] += wl[:, dr + 1, dc + 1] * grid[r + dr, c + dc]
            mixed[r, c] += ws * grid[r, c]
    h = torch.cat([z[:1], mixed.reshape(16, 4)])
    want = x[0] + torch.nn.functional.gelu(h) @ m.adapter_up.weight.T
    assert torch.allclose(m(x)[0], want, atol=1e-5)


def test_dka_cls_token_skips_the_convolutions():
    m = A.DKA(32, 8, 5, 3).eval()
    x = _tokens()
    y = x.clone()
    y[:, 1:] += 1.0
    assert torch.allclose(m(x)[:, 0], m(y)[:, 0] - (y - x)[:, 0])  # CLS output depends on the CLS input only
    assert not torch.allclose(m(x)[:, 1:], m(y)[:, 1:] - 1.0)


def test_parameter_counts_follow_the_closed_forms():
    dim, mid, kl, ks = 96, 16, 15, 3
    for br in A.BRANCHES:
        n = sum(p.numel() for p in A.DKA(dim, mid, kl, ks, br).parameters())
        assert n == A.dka_params(dim, mid, kl, ks, br)
    mm = A.matched_mid(dim, mid, kl, ks)
    matched = sum(p.numel() for p in A.Bottleneck(dim, mm).parameters())
    assert abs(matched / A.dka_params(dim, mid, kl, ks) - 1) < 0.05  # the parameter-matched adapter, within 5%
    assert mm > mid


def test_built_methods_train_only_their_groups():
    base = TinyViT(CFG)
    x = np.random.default_rng(0).normal(size=(8, 1, 32, 32)).astype(np.float32)
    counts = {}
    for m in METHODS:
        b = build(m, base, n_classes=4, seed=0)
        trainable = {id(p) for p in b.model.parameters() if p.requires_grad}
        assert trainable == {id(p) for g in b.groups.values() for p in g}, m
        assert b.model(torch.as_tensor(x)).shape == (8, 4)
        counts[m] = b.trainable()
    assert counts["linear"] == 33 * 4 < counts["lora"] < counts["dka"] < counts["full"]
    assert counts["dka-small"] < counts["dka-large"] < counts["dka"]


def test_lora_through_peft_leaves_the_frozen_weights_unchanged():
    base = TinyViT(CFG)
    b = build("lora", base, n_classes=4, seed=0)
    names = [n for n, _ in b.model.named_parameters()]
    assert any("lora_A" in n for n in names) and any("blocks.0.attn.qkv.base_layer" in n for n in names)
    frozen = {n: p.detach().clone() for n, p in b.model.named_parameters() if not p.requires_grad}
    lora = {n: p.detach().clone() for n, p in b.model.named_parameters() if "lora_" in n}
    rng = np.random.default_rng(0)
    fit(
        b,
        rng.normal(size=(8, 1, 32, 32)).astype(np.float32),
        np.arange(8) % 4,
        steps=3,
        batch=8,
        lr_adapter=1e-2,
        lr_head=1e-2,
        seed=0,
    )
    now = dict(b.model.named_parameters())
    assert all(torch.equal(now[n], v) for n, v in frozen.items())
    assert any(not torch.equal(now[n], v) for n, v in lora.items())  # the LoRA factors did move
    assert torch.equal(
        dict(base.named_parameters())["blocks.0.attn.qkv.weight"],
        dict(b.model.named_parameters())["blocks.0.attn.qkv.base_layer.weight"],
    )


def test_adapted_models_round_trip(tmp_path):
    base = TinyViT(CFG)
    x = torch.randn(2, 1, 32, 32)
    for m in ("dka", "lora", "convpass"):
        b = build(m, base, n_classes=4, seed=1, cfg=AdapterConfig(mid=8, k_large=5))
        save_adapted(b, m, 4, AdapterConfig(mid=8, k_large=5), tmp_path / m)
        assert torch.allclose(load_adapted(tmp_path / m)(x), b.model.eval()(x))


def test_linear_probe_on_cached_features_is_the_plain_head_training():
    """The linear probe's shortcut (features of the drawn images, once) gives the losses of training the head on
    the frozen forward pass at every step."""
    base = TinyViT(CFG)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(12, 1, 32, 32)).astype(np.float32), np.arange(12) % 4
    fast = fit(
        build("linear", base, n_classes=4, seed=0),
        x[:10],
        y[:10],
        steps=2,
        batch=4,
        lr_adapter=0.0,
        lr_head=1e-2,
        seed=0,
        linear_probe=True,
    )  # 2 x 4 draws of 10: two images never drawn
    plain = fit(
        build("linear", base, n_classes=4, seed=0),
        x[:10],
        y[:10],
        steps=2,
        batch=4,
        lr_adapter=0.0,
        lr_head=1e-2,
        seed=0,
    )
    assert len(fast) == 2 and np.allclose(fast, plain, atol=1e-5)


def test_the_backbone_depends_on_its_seed_only_not_on_torch_s_global_generator():
    """Every weight, the patch embedding's included, comes from the seed: the global generator's state (which other
    code in the process moves) changes nothing, and another seed changes the weights."""
    torch.manual_seed(1)
    a = TinyViT(CFG, seed=0).state_dict()
    torch.manual_seed(2)
    torch.rand(17)
    b = TinyViT(CFG, seed=0).state_dict()
    c = TinyViT(CFG, seed=1).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["patch_embed.weight"], c["patch_embed.weight"])
