"""Known answer for CDRA's core, and the sabotages a reviewer would try.

With a PRM that scores steps by the true rule (the rule critic), CDPA's per-step token rewards credit the
implicit step directly, so after 40 RL steps the policy infers the implicit constraint far more often than
outcome-scalar GRPO from the same SFT policy, same prompts, same budget (stated margin: 0.2 on the held-out
share of responses whose implicit step names the right constraint; measured 0.90 against 0.63 and 0.35 on the
two seeds), and the Acc_DA stand-in follows. Moving each step's score onto another step's tokens, or a PRM
that cannot see the preference, removes that credit and fails these tests.
"""

from __future__ import annotations

import numpy as np
import pytest

from components.cdra import cdpa as C
from components.cdra import prm as P
from components.cdra import task as T
from components.training.qa_lm import train_lm

MARGIN = 0.2


@pytest.mark.parametrize("seed", [1, 2])
def test_true_rule_prm_cdpa_beats_outcome_grpo_on_the_implicit_constraint(sft, split, seed):
    train, held = split
    cfg = C.ArmConfig(steps=40, lr=1e-3)
    start = C.summary(C.evaluate(sft, held))
    cdra, _ = C.rl_train(sft, train, "oracle", cfg, seed=seed)
    grpo, _ = C.rl_train(sft, train, "grpo_outcome", cfg, seed=seed)
    a, b = C.summary(C.evaluate(cdra, held)), C.summary(C.evaluate(grpo, held))
    assert start["implicit_step"] < 0.8  # the SFT policy is partly competent: room to improve
    assert a["implicit_step"] >= b["implicit_step"] + MARGIN, (a, b)
    assert a["implicit_step"] >= start["implicit_step"] + 0.15, (a, start)
    assert a["da"] > b["da"], (a, b)
    assert a["valid"] >= 0.95  # no collapse into malformed responses


def _step_queries(pairs, seed):
    rng = np.random.default_rng(seed)
    out = []
    for p in pairs:
        ids = T.noisy_chain(p, rng, 0.5)
        out += [q for q in P.queries_of(p, ids) if q.step == 1]
    return out


def test_a_trained_prm_reads_the_preference(split):
    """A score-only PRM trained on implicit steps only scores them well because it sees the stated value: the
    step's right answer is not in the step itself. A PRM that ignores the preference is held to the share of
    the majority label (about 0.6 here) and fails the 0.85 bar."""
    train, held = split
    q_train, q_held = _step_queries(train * 2, 0), _step_queries(held, 1)
    model = P.new_backbone(64, 1, seed=0)
    train_lm(model, P.sft_items(q_train, "score_only"), steps=300, batch_size=64, lr=5e-3, seed=0)
    gold = P.rule_scores(q_held)
    acc = P.step_accuracy(P.prm_scores(model, q_held), gold).mean()
    majority = max(np.mean(np.asarray(gold) == v) for v in (-1, 1))
    assert majority < 0.75
    assert acc >= 0.85, (acc, majority)


def test_prm_context_holds_the_preference_and_the_step_so_far():
    p = T.Pair("x", "topic00", "nuts", "pregnant")
    ids = T.gold_chain(p)
    qs = P.queries_of(p, ids)
    assert [q.step for q in qs] == [0, 1, 2]
    for q in qs:
        ctx = q.context()
        assert ctx[: len(p.prompt())] == p.prompt()  # the preference: explicit constraint and stated value
        assert ctx[len(p.prompt()) : -1] == ids[: q.span[1]]  # earlier steps as context, then this step
        assert ctx[-1] == T.CRITIQUE
