"""The decoding maths against hand computations and references: the contrastive logits, the plausibility mask,
SAT's beta = sigmoid(-tau H) with H in bits (scipy's entropy, base 2), VCD's noise schedule, the augmentations,
VACoDe's choice and SAS's rule map; alpha = 0 makes every method greedy on a real (untrained) tiny VLM."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import entropy

from components.errors import ParamsError
from components.selfaug_decoding import augment as A
from components.selfaug_decoding import decoding as D
from components.selfaug_decoding import model as M


def test_contrastive_logits_and_mask_equal_a_hand_computation():
    clean = torch.tensor([[2.0, 1.0, 0.0, -3.0]])
    aug = torch.tensor([[1.0, 2.0, 0.0, 0.0]])
    assert D.contrastive_logits(clean, aug, 1.0).tolist() == [[3.0, 0.0, 0.0, -6.0]]
    assert D.contrastive_logits(clean, aug, 0.5).tolist() == [[2.5, 0.5, 0.0, -4.5]]
    # threshold = log(0.1) + 2 = -0.3026: tokens 0, 1, 2 stay, token 3 goes
    assert D.plausible(clean, 0.1).tolist() == [[True, True, True, False]]
    out = D.cd_step(clean, aug, 1.0, 0.1)
    assert out[0, :3].tolist() == [3.0, 0.0, 0.0] and out[0, 3] == -math.inf
    # beta = 0.5: threshold 2 - 0.693 = 1.307 keeps token 0 only; the argmax is then the clean top token
    assert D.plausible(clean, torch.tensor([0.5])).tolist() == [[True, False, False, False]]
    # the mask is taken on the clean logits, not the contrastive ones: token 1 wins the contrast but is cut
    assert D.cd_step(clean, torch.tensor([[3.0, -5.0, 0.0, 0.0]]), 1.0, 0.5).argmax().item() == 0


def test_sat_beta_is_sigmoid_of_minus_tau_entropy_in_bits():
    uniform4 = torch.zeros(1, 4)
    assert D.entropy_bits(uniform4).item() == pytest.approx(2.0)
    assert D.sat_beta(uniform4, 0.5).item() == pytest.approx(1 / (1 + math.e))  # sigmoid(-1)
    rng = np.random.default_rng(0)
    logits = torch.tensor(rng.normal(0, 3, (5, 31)))
    p = torch.softmax(logits, -1).numpy()
    h = entropy(p, base=2, axis=1)
    assert D.entropy_bits(logits).numpy() == pytest.approx(h, rel=1e-9)
    assert D.sat_beta(logits, 0.7).numpy() == pytest.approx(1 / (1 + np.exp(0.7 * h)), rel=1e-9)
    one_hot = torch.tensor([[0.0, -1e4, -1e4]])
    assert D.sat_beta(one_hot, 0.5).item() == pytest.approx(0.5)  # confident: beta -> 0.5, few candidates


def test_noise_schedule_and_statistics_match_vcd():
    betas = 1 / (1 + np.exp(-np.linspace(-6, 6, 1000))) * (0.5e-2 - 1e-5) + 1e-5
    assert A.alpha_bar(500) == pytest.approx(np.prod(1 - betas[:501]), rel=1e-5)
    x = torch.full((4, 3, 64, 64), 2.0)
    y = A.augment("noise", x, torch.Generator().manual_seed(0), noise_step=500)
    ab = A.alpha_bar(500)
    assert y.mean().item() == pytest.approx(2.0 * ab**0.5, abs=0.01)
    assert y.std().item() == pytest.approx((1 - ab) ** 0.5, rel=0.02)
    with pytest.raises(ParamsError, match="noise_step"):
        A.augment("noise", x, torch.Generator(), noise_step=1000)


def test_augmentations_do_what_the_card_says():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 64, 64)
    assert torch.equal(A.augment("horizontal_flip", x, g)[..., 0], x[..., -1])
    assert torch.equal(A.augment("vertical_flip", x, g)[:, :, 0], x[:, :, -1])
    img01 = torch.rand(2, 3, 64, 64)
    inv = A.augment("color_inversion", A.normalise(img01), g)
    assert torch.allclose(inv * A.STD + A.MEAN, 1 - img01, atol=1e-6)
    masked = A.augment("random_mask", x, g, mask_ratio=2.0)
    assert [int((masked[i] != x[i]).any(0).sum()) for i in range(2)] == [32 * 32] * 2
    crop = A.augment("random_crop", x, g, crop_ratio=2.0)
    assert crop.shape == x.shape and not torch.allclose(crop, x)
    assert torch.equal(A.augment("identity", x, g), x)
    with pytest.raises(ParamsError, match="augmentation 'blur'"):
        A.augment("blur", x, g)


class _OnlyFlipMatters:
    """A toy whose output reads |x| of the left half minus the right half (|x| is unchanged by colour inversion,
    which maps a normalised x to -x): a horizontal flip moves the output most."""

    def encode(self, images):
        a = images.abs()
        return torch.stack([a[..., :32].mean((1, 2, 3)) - a[..., 32:].mean((1, 2, 3)), images.mean((1, 2, 3))],
                           1)[:, None]  # fmt: skip

    def __call__(self, prefix, tokens):
        logits = torch.zeros(tokens.shape[0], tokens.shape[1], 8)
        logits[:, -1, 0] = 5 * prefix[:, 0, 0]
        logits[:, -1, 1] = 0.01 * prefix[:, 0, 1]
        return logits


def test_vacode_picks_the_augmentation_whose_distribution_moves_most():
    x = torch.zeros(3, 3, 64, 64)
    x[..., :32] = 1.5  # a strong left half, a flat right half
    toy = _OnlyFlipMatters()
    res = D.generate(toy.encode, toy, x, torch.zeros(3, 1, dtype=torch.long), D.methods()["vacode"], seed=0)
    assert res.augs == ["horizontal_flip"] * 3


def test_sas_uses_the_rule_map_and_names_a_missing_type():
    x = torch.zeros(3, 3, 64, 64)
    toy = _OnlyFlipMatters()
    res = D.generate(toy.encode, toy, x, torch.zeros(3, 1, dtype=torch.long), D.methods()["selfaug"],
                     qtypes=["position", "colour", "count"])  # fmt: skip
    assert res.augs == ["horizontal_flip", "color_inversion", "random_mask"]
    with pytest.raises(ParamsError, match="question type"):
        D.generate(toy.encode, toy, x, torch.zeros(3, 1, dtype=torch.long), D.methods()["selfaug"],
                   qtypes=["position", "colour", "poetry"])  # fmt: skip


def test_alpha_zero_every_method_equals_greedy_on_a_tiny_vlm():
    torch.manual_seed(0)
    vlm = M.TinyVLM(M.VLMConfig(d=32, n_heads=2, d_ff=64, channels=(8, 8, 8))).eval()
    with torch.no_grad():
        vlm.encoder[-1].weight.mul_(30.0)  # so that the untrained model's output depends on the image
    x = torch.randn(6, 3, 64, 64)
    prompt = torch.tensor([M.prompt_ids(["describe"])] * 6)
    kw = {"qtypes": ["caption"] * 6, "max_new": 6, "seed": 3}
    greedy = D.generate(vlm.encode, vlm, x, prompt, D.methods()["greedy"], **kw).tokens
    for name, meth in D.methods(alpha=0.0).items():
        assert D.generate(vlm.encode, vlm, x, prompt, meth, **kw).tokens == greedy, name
    # and with alpha = 1 at least one method departs from greedy somewhere (the test can fail)
    assert any(D.generate(vlm.encode, vlm, x, prompt, m, **kw).tokens != greedy for m in D.methods().values())
