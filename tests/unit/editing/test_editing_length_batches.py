"""Batching by prompt length (issue 27: less padding) changes no value and keeps every output in prompt order."""

from __future__ import annotations

import numpy as np
import torch

from components.editing import targets as T
from components.editing.metrics import score_pair
from components.editing.model import compute_keys, edit_site, encode_batch, inverse, length_order

# Lengths out of order, so batches of two cut across them; one character per token (the char encoder).
PROMPTS = [
    "A much longer prompt about Zed Quill",
    "Bo Tarn",
    "Home of Cy Fenn",
    "Amy Rook",
    "Long ago, in a far town, lived Ida Moss",
    "Eli Vane",
]
SUBJECTS = ["Zed Quill", "Bo Tarn", "Cy Fenn", "Amy Rook", "Ida Moss", "Eli Vane"]


def test_length_order_sorts_by_tokens_and_inverse_undoes_it(encode):
    order = length_order(encode, PROMPTS)
    assert [len(PROMPTS[i]) for i in order] == sorted(len(p) for p in PROMPTS)
    values = np.array([len(p) for p in PROMPTS])
    assert np.array_equal(values[order][inverse(order)], values)


def test_scores_and_keys_come_back_in_prompt_order_equal_to_one_prompt_at_a_time(tiny_model, encode):
    new, true = list("OhRcxy"), list("RcOhyx")
    ln, lt, acc = score_pair(tiny_model, encode, PROMPTS, new, true, batch_size=2)
    one = [score_pair(tiny_model, encode, [p], [n], [t], batch_size=1) for p, n, t in zip(PROMPTS, new, true)]
    assert np.allclose(ln, [o[0][0] for o in one], atol=1e-5)
    assert np.allclose(lt, [o[1][0] for o in one], atol=1e-5)
    assert np.array_equal(acc, [o[2][0] for o in one])
    site = edit_site(tiny_model, 0)
    keys = compute_keys(tiny_model, site, encode, PROMPTS, SUBJECTS, batch_size=2)
    each = torch.cat([compute_keys(tiny_model, site, encode, [p], [s]) for p, s in zip(PROMPTS, SUBJECTS)])
    assert torch.allclose(keys, each, atol=1e-5)


def test_target_values_in_length_buckets_equal_one_padded_batch(confident_model, encode, monkeypatch):
    reqs = [
        {"id": s, "subject": s, "target_true": "R", "target_new": "O", "prompts": [p, f"Of {s}"]}
        for p, s in zip(PROMPTS, SUBJECTS)
    ]
    kw = dict(steps=15, lr=0.5, weight_decay=0.5, clamp=4.0, kl_factor=0.0625)
    site = edit_site(confident_model, 0)
    bucketed = T.compute_targets(confident_model, site, encode, reqs, **kw)
    monkeypatch.setattr(T, "LENGTH_BUCKETS", 1)
    one = T.compute_targets(confident_model, site, encode, reqs, **kw)
    assert torch.allclose(bucketed.keys, one.keys, atol=1e-5)
    assert torch.allclose(bucketed.residuals, one.residuals, atol=1e-3, rtol=1e-3)
    assert torch.allclose(bucketed.final_nll, one.final_nll, atol=1e-4)
    assert (one.final_nll < 3.0).all()  # the targets moved (so equal residuals are not two zero vectors)


def test_keys_stop_the_forward_at_the_edited_layer_with_the_full_forward_s_values(tiny_model, encode):
    site = edit_site(tiny_model, 0)
    full: list[torch.Tensor] = []
    ref = site.module.register_forward_pre_hook(lambda m, a: full.append(a[0].detach()))
    later = []
    spy = tiny_model.blocks[1].register_forward_hook(lambda m, a, o: later.append(1))
    try:
        tiny_model(encode_batch(encode, PROMPTS[:1], SUBJECTS[:1]).ids)  # a full forward: every block runs
        assert later == [1]
        keys = compute_keys(tiny_model, site, encode, PROMPTS[:1], SUBJECTS[:1])
    finally:
        ref.remove()
        spy.remove()
    assert later == [1]  # compute_keys never ran the block after the edited layer
    pos = encode_batch(encode, PROMPTS[:1], SUBJECTS[:1]).subject_pos
    assert torch.equal(keys, full[0][0, pos].float())
