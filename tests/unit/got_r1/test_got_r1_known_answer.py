"""Known answer: GRPO with the full product reward lifts position accuracy of a policy weak on position.

The fixture (``components.got_r1.toy_policy``) plans a reversed relation half the time and draws exactly what it
plans, so the plan is the only lever. GRPO (``components.rl_text``, unchanged) with the full reward must raise
sampled position accuracy by at least 0.3; with R_RI alone the reward is 1 for every valid plan (the picture
always follows it), there is no signal on position, and accuracy stays within 0.15 of SFT's (the collapse
ablation's mechanism). Sabotage: scoring each picture against another prompt of the batch removes the signal and
fails the first test.
"""

from __future__ import annotations

import pytest
import torch

from components.got_r1 import train as T
from components.got_r1.tokens import Vocab
from components.got_r1.toy_policy import ToyChainPolicy, fixture_specs
from components.training.threads import threads

V = Vocab(8)
SPECS = fixture_specs()


def _position_accuracy(model, seed: int) -> float:
    out = T.generate(model, V, SPECS * 16, with_chain=True, temperature=1.0, seed=seed)
    return T.summary(T.score_outputs(SPECS * 16, out, with_chain=True))["acc_position"]


def _trained(kind: str) -> tuple[float, float]:
    with threads(1):  # tiny tensors: extra threads only contend on a shared machine
        torch.manual_seed(0)
        m = ToyChainPolicy(V)
        m.fit_weak_sft(SPECS, reversed_share=0.5)
        before = _position_accuracy(m, 1)
        settings = T.GRPOSettings(kind=kind, steps=5, prompts_per_step=4, group=8, lr=0.5, beta=0.0)
        T.grpo(m, V, SPECS, settings, seed=0)
        return before, _position_accuracy(m, 2)


def test_full_reward_raises_position_accuracy_of_a_policy_weak_on_position():
    before, after = _trained("full")
    assert 0.3 < before < 0.7  # the fixture is weak on position
    assert after >= before + 0.3


def test_r_ri_alone_gives_no_signal_on_position():
    before, after = _trained("ri")
    assert after == pytest.approx(before, abs=0.15)
