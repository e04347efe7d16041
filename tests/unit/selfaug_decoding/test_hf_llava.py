"""The paper-scale path offline: the contrastive step as a transformers LogitsProcessor on a tiny LLaVA built
from a config here (random weights, nothing downloaded), against a hand-written reference loop; an absent
model id fails at once naming it."""

from __future__ import annotations

import time

import pytest
import torch

from components.errors import DataError
from components.selfaug_decoding import hf

IMAGE_TOKEN, VOCAB = 31, 32


@pytest.fixture(scope="module")
def llava():
    from transformers import CLIPVisionConfig, LlamaConfig, LlavaConfig, LlavaForConditionalGeneration

    torch.manual_seed(0)
    vision = CLIPVisionConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                              image_size=16, patch_size=8, projection_dim=16)  # fmt: skip
    text = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=64)  # fmt: skip
    cfg = LlavaConfig(vision_config=vision, text_config=text, image_token_index=IMAGE_TOKEN,
                      vision_feature_layer=-1, vision_feature_select_strategy="default")  # fmt: skip
    model = LlavaForConditionalGeneration(cfg).eval()
    with torch.no_grad():  # a strong head so that images matter to the next token
        for p in model.parameters():
            p.mul_(3.0)
    g = torch.Generator().manual_seed(1)
    ids = torch.tensor([[1] + [IMAGE_TOKEN] * 4 + [5, 6, 7]] * 3)  # 4 patches (16 / 8)^2, CLS dropped
    pix = torch.randn(3, 3, 16, 16, generator=g)
    aug = torch.randn(3, 3, 16, 16, generator=g)
    return model, ids, pix, aug


def reference(model, ids, pix, aug, alpha, beta, steps):
    """The contrastive greedy loop by hand: full forwards, (1 + a) l - a l', mask l < log(beta) + max l."""
    out = ids.clone()
    with torch.no_grad():
        for _ in range(steps):
            lc = model(input_ids=out, pixel_values=pix).logits[:, -1]
            la = model(input_ids=out, pixel_values=aug).logits[:, -1]
            cd = (1 + alpha) * lc - alpha * la
            cd[lc < torch.log(torch.tensor(beta)) + lc.max(-1, keepdim=True).values] = -float("inf")
            out = torch.cat([out, cd.argmax(-1, keepdim=True)], 1)
    return out[:, ids.shape[1] :]


def test_the_logits_processor_equals_the_hand_written_contrastive_loop(llava):
    model, ids, pix, aug = llava
    got = hf.generate(model, ids, pix, aug, alpha=1.0, beta=0.1, max_new_tokens=4)
    want = reference(model, ids, pix, aug, 1.0, 0.1, 4)
    assert torch.equal(got, want)
    greedy = hf.generate(model, ids, pix, None, max_new_tokens=4)
    assert not torch.equal(got, greedy)  # the contrast changes at least one token here
    # alpha = 0 is greedy decoding, whatever the augmented image
    assert torch.equal(hf.generate(model, ids, pix, aug, alpha=0.0, beta=0.1, max_new_tokens=4), greedy)


def test_sat_in_the_processor_uses_sigmoid_of_minus_tau_entropy(llava):
    model, ids, pix, aug = llava
    proc = hf.VisualContrastiveProcessor(model, aug, alpha=1.0, tau=0.5)
    scores = model(input_ids=ids, pixel_values=pix).logits[:, -1].detach()
    proc(ids, scores.clone())
    p = torch.softmax(scores.double(), -1)
    h = -(p * torch.log2(p)).sum(-1)
    assert torch.allclose(proc.betas[0].double(), torch.sigmoid(-0.5 * h), atol=1e-6)


def test_an_absent_model_id_fails_at_once_naming_it(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    t = time.perf_counter()
    with pytest.raises(DataError, match=r"llava-hf/no-such-llava-for-tests"):
        hf.load_llava("llava-hf/no-such-llava-for-tests")
    assert time.perf_counter() - t < 20


def test_the_full_profile_names_its_absent_llava(monkeypatch):
    from flows.runtime.params import resolve
    from flows.selfaug_decoding.params import PRESETS, Params

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    p = resolve(Params, PRESETS, slug="selfaug-decoding", profile="full")
    assert p.paper_scale.model_id == "llava-hf/llava-1.5-7b-hf"
    with pytest.raises(DataError, match=r"'llava-hf/llava-1\.5-7b-hf' is not in the local Hugging Face cache"):
        hf.require(p.paper_scale.model_id)
