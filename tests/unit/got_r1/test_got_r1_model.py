"""The chain-then-image decoder: cached decoding equals a full forward pass (the absolute position embedding is
added at the right position in ``step``), save/load round trip, and SFT learns a fixed completion."""

from __future__ import annotations

import torch
from torch import nn

from components.got_r1 import model as M
from components.got_r1 import train as T
from components.got_r1.tokens import Vocab
from components.rl_text.sampling import sample
from components.training.threads import threads

V = Vocab(8)


class NoCache(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)


def _model(seed=0):
    return M.build(len(V), V.seq_len(True), d_model=16, n_layers=1, n_heads=2, seed=seed)


def test_cached_decoding_equals_a_full_forward_pass():
    m = _model()
    with torch.no_grad():
        m.pos.weight.normal_(0, 1.0)  # a position embedding large enough to change every greedy choice if misplaced
    prompts = [V.encode_prompt("a photo of a red square"), V.encode_prompt("a photo of two rings")]
    kw = {"max_new": 30, "eos": V.eos, "pad": V.pad, "temperature": 0.0}
    a = sample(m, prompts, [2, 1], **kw).completions
    b = sample(NoCache(m), prompts, [2, 1], **kw).completions
    assert torch.equal(a, b)
    x = torch.tensor([prompts[0] + a[0].tolist()])
    full, _ = m(x)
    pre, cache = m.prefill(x[:, :20], x.shape[1])
    step = m.step(x[:, 20], torch.tensor([20]), cache)
    assert torch.allclose(full[0, 20], step[0], atol=1e-5) and torch.allclose(full[0, :20], pre[0], atol=1e-5)


def test_save_and_load_round_trip(tmp_path):
    m = _model(3)
    M.save_model(m, tmp_path / "m")
    back = M.load_model(tmp_path / "m")
    x = torch.tensor([V.encode_prompt("a photo of a square")])
    assert torch.equal(m(x)[0], back(x)[0])


def test_sft_fits_a_fixed_completion():
    m = _model(1)
    from components.got_r1.render import render

    objs = [{"colour": "red", "shape": "square", "box": (0, 0, 2, 2)}]
    data = [(V.encode_prompt("a photo of a red square"), V.completion(objs, render(objs, 8)))]
    with threads(1):
        log = T.sft(m, data, steps=30, batch=2, lr=2e-2, seed=0, log_every=29)
        out = T.generate(m, V, [{"prompt": "a photo of a red square"}], with_chain=True)[0]
    assert log[-1]["loss"] < 0.1 < log[0]["loss"]
    assert out["chain_valid"] and out["objects"] == [{**objs[0], "box": (0, 0, 2, 2)}]
