"""CDRA's mathematics pinned against references: per-position group normalisation against the official
formula (``view(-1, G, T)``, mean and ``torch.std`` over the group, + 1e-8) and a brute-force loop; step
scores on step tokens against a hand computation; the step splitter and the rule critic on hand cases."""

from __future__ import annotations

import pytest
import torch

from components.cdra import cdpa as C
from components.cdra import prm as P
from components.cdra import task as T
from components.errors import ParamsError
from components.rl_text.advantages import position_group_advantages


def test_position_advantages_equal_the_official_formula_for_equal_groups():
    g = torch.Generator().manual_seed(0)
    r = torch.randint(-1, 2, (15, 7), generator=g).float()
    groups = torch.arange(3).repeat_interleave(5)
    grouped = r.view(-1, 5, 7)
    ref = ((grouped - grouped.mean(1, keepdim=True)) / (grouped.std(1, keepdim=True) + 1e-8)).view(-1, 7)
    assert torch.allclose(position_group_advantages(r, groups), ref, atol=1e-5)


def test_position_advantages_brute_force_with_variable_groups_in_any_order():
    g = torch.Generator().manual_seed(1)
    r = torch.randn(9, 4, generator=g)
    groups = torch.tensor([2, 0, 1, 0, 2, 2, 1, 0, 3])  # sizes 3, 2, 3, 1; not contiguous
    adv = position_group_advantages(r, groups)
    for b in range(9):
        members = (groups == groups[b]).nonzero().flatten()
        for t in range(4):
            col = r[members, t].double()
            want = 0.0 if len(members) == 1 else float((r[b, t] - col.mean()) / (col.std() + 1e-8))
            assert adv[b, t].item() == pytest.approx(want, abs=1e-5)


def test_hand_computed_step_advantages():
    """Two completions of one prompt, three steps of 2 tokens each. Scores (1, -1, 0) and (1, 1, -1): step 1
    has no spread (advantage 0); steps 2 and 3 differ by 2 and 1, so with n = 2 the std is |d| / sqrt(2) and
    the advantages are -/+ 1/sqrt(2) (times the sign of the difference)."""
    spans = [[(0, 2), (2, 4), (4, 6)]] * 2
    rewards = C.token_rewards(spans, [[1, -1, 0], [1, 1, -1]], (2, 6))
    assert rewards.tolist() == [[1, 1, -1, -1, 0, 0], [1, 1, 1, 1, -1, -1]]
    adv = position_group_advantages(rewards, torch.tensor([0, 0]))
    s = 2**-0.5
    want = torch.tensor([[0, 0, -s, -s, s, s], [0, 0, s, s, -s, -s]])
    assert torch.allclose(adv, want, atol=1e-6)


def test_token_rewards_leave_other_tokens_at_zero_and_check_lengths():
    r = C.token_rewards([[(1, 3)]], [[0.5]], (1, 5))
    assert r.tolist() == [[0, 0.5, 0.5, 0, 0]]
    with pytest.raises(ParamsError):
        C.token_rewards([[(0, 1), (1, 2)]], [[1.0]], (1, 3))


def test_group_of_one_and_bad_shapes():
    assert position_group_advantages(torch.ones(1, 3), torch.tensor([0])).abs().sum() == 0
    with pytest.raises(ParamsError):
        position_group_advantages(torch.ones(3), torch.tensor([0, 0, 0]))


def test_split_steps_follows_the_official_run_and_covers_every_token():
    p = T.Pair("x", "topic00", "nuts", "pregnant")
    ids = T.gold_chain(p)
    assert T.split_steps(ids) == [(0, 5), (5, 10), (10, len(ids))]
    junk = T.encode(["avoid"]) + ids  # a token before the first marker belongs to step 1 (and spoils it)
    assert T.split_steps(junk)[0] == (0, 6)
    restart = T.encode(["Step", "2:", "avoid"]) + ids  # a "Step 2:" before any "Step 1:" is not a step start
    assert [s for s, _ in T.split_steps(restart)][1:] == [8, 13]
    assert T.split_steps(T.encode(["avoid", "nuts"])) == [(0, 2)]  # no marker: one segment


def test_rule_critic_scores_by_the_preference():
    p = T.Pair("x", "topic00", "nuts", "pregnant")  # implicit alcohol, risk strenuous
    good = T.gold_chain(p)
    spans, scores = T.step_scores(p, good)
    assert scores == [1, 1, 1]
    item = T.answer_of(good)
    wrong2 = T.encode(T.chain_words("nuts", "spicy", "strenuous", item)) + [T.EOS]
    assert T.step_scores(p, wrong2)[1] == [1, -1, 1]
    no_risk = T.encode(T.chain_words("nuts", "alcohol", "none", item)) + [T.EOS]
    assert T.step_scores(p, no_risk)[1] == [1, 1, 0]  # the answer still avoids everything; the risk step missed
    other = T.Pair("y", "topic00", "nuts", "saving_money")  # the same text judged for another user's value
    assert T.step_scores(other, good)[1][1] == -1
    cut = good[:10] + [T.EOS]  # stops after step 2: that step is malformed, no answer
    assert T.step_scores(p, cut)[1] == [1, -1]
    c = T.critic(p, good, 2, spans[2])
    assert c.text.startswith("**Reasoning:**") and T.decode(c.tokens)[-1] == "ok"


def test_judge_and_prm_score_parsing():
    p = T.Pair("x", "topic00", "nuts", "pregnant")
    j = T.judge(p, T.gold_chain(p))
    assert all(j.values())
    assert P.parse_score([T.ID["expected"], T.SCORE, T.SCORE_TOKEN[-1], T.EOS]) == -1
    assert P.parse_score([T.ID["expected"], T.EOS]) == 0  # no score: the official fallback


def test_every_pair_has_both_constraints_and_a_valid_gold_item():
    pairs = T.make_pairs(5, seed=0)
    assert len(pairs) == 100
    for p in pairs:
        assert p.explicit not in {p.implicit, p.risk} and p.valid_items()
        assert T.judge(p, T.gold_chain(p))["pf"]
