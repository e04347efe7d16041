"""The full profile's policy path offline: DAPO's answer rule, a tokenizer codec, a HF causal LM loaded from a
folder (an unknown id offline fails naming it), and the RL loop training it on DAPO-format prompts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.errors import OfflineError
from components.vip import codec as C
from components.vip.dapo_format import rows_to_problems
from components.vip.policy import is_tiny, load_hf, load_policy, save_policy
from tests.vip_hf_fixture import dapo_rows, tiny_hf_policy


@pytest.mark.parametrize(
    "completion, target, reward",
    [
        ("3 plus 4 is 7.\nAnswer: 7", "7", 1.0),
        ("Answer: 5\nwait, no.\nAnswer: $7$", "7", 1.0),  # the last answer counts
        ("answer:  \\boxed{132}.", "132", 1.0),
        ("Answer: 1,024", "1024", 1.0),
        ("Answer: 8", "7", 0.0),
        ("The answer is 7", "7", 0.0),  # no "Answer:" line: DAPO's format is part of the reward
        ("Answer: 77", "7", 0.0),
    ],
)
def test_math_reward_follows_dapo_s_answer_rule(completion, target, reward):
    assert C.math_reward(target, completion) == reward


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory):
    return tiny_hf_policy(tmp_path_factory.mktemp("tiny-hf") / "policy")


def test_hf_codec_round_trips_text_and_names_eos(hf_folder):
    model, codec, tok = load_policy(hf_folder)
    assert not is_tiny(hf_folder) and codec.eos == tok.eos_token_id and codec.pad == tok.pad_token_id
    text = "What is $3+4$?\nAnswer: 7"
    assert codec.decode(codec.encode(text)) == text
    assert codec.reward("7", codec.decode(codec.encode("Answer: 7"))) == 1.0


def test_an_unknown_hub_id_offline_fails_at_once_naming_it(tmp_path):
    with pytest.raises(OfflineError, match="no-such-org/no-such-model"):
        load_hf("no-such-org/no-such-model", online=False, cache_dir=tmp_path)


def test_the_rl_loop_trains_a_hf_policy_on_dapo_prompts(hf_folder, tmp_path):
    import dataclasses

    from components.vip import rl_loop
    from components.vip.strategies import Method

    model, codec, tok = load_policy(hf_folder)
    # an untrained model never writes "Answer: <n>", so every group would be all-zero and nothing would update:
    # the loop's mechanics are tested with a reward it can reach (any digit in the completion)
    codec = dataclasses.replace(codec, reward=lambda target, text: float(any(ch.isdigit() for ch in text)))
    rows = rows_to_problems(dapo_rows(24), "fixture")
    cfg = rl_loop.LoopConfig(
        steps=2,
        q=4,
        budget_per_step=16,
        lo=2,
        hi=8,
        lr=1e-3,
        max_new=6,
        eval_k=2,
        n_evals=1,
        grad_repeats=2,
        shadow=(("global", "hashed"),),
    )
    feats = {"hashed": np.random.default_rng(0).normal(size=(24, 4))}
    res = rl_loop.run(
        model, Method("vip", "vip", predictor="gp", features="hashed"), cfg, rows, feats, rows[:4], seed=0, codec=codec
    )
    assert res["updates"] == 2 and all(sum(s["sizes"]) == 16 for s in res["steps"])
    assert {c["rollouts"] for c in res["curve"]} == {0, 32}
    trained = res["model"]
    assert not all(torch.equal(a, b) for a, b in zip(trained.state_dict().values(), model.state_dict().values()))
    save_policy(trained, tmp_path / "out", tok)
    again, _, _ = load_policy(tmp_path / "out")
    assert all(torch.equal(a, b) for a, b in zip(again.state_dict().values(), trained.state_dict().values()))


def test_text_features_hash_words_for_free_text_prompts_and_arithmetic_ones_stay_strict():
    from components.errors import DataError
    from components.vip import features as F

    rows = rows_to_problems(dapo_rows(6), "fixture")
    x = F.hashed([r["prompt"] for r in rows], 256, kind="text")
    assert x.shape == (6, 256) and (x.sum(1) > 0).all()
    pair = F.hashed(["What is $3+4$?", "Find $x$ if $2x=10$."], 256, kind="text")
    assert not np.allclose(pair[0], pair[1])  # different words, different features
    assert F.text_tokens("Find $x$ if 2x = 10.")["num_len=2"] == 1.0
    with pytest.raises(DataError, match="a op b"):
        F.hashed([rows[0]["prompt"]])  # the arithmetic kind refuses free text, naming the expected form


def test_a_policy_folder_in_the_wrong_format_is_named(tmp_path):
    from components.errors import DataError

    with pytest.raises(DataError, match="no config.json"):
        load_policy(tmp_path)
    (tmp_path / "config.json").write_text('{"model_type": "no-such-architecture"}')
    with pytest.raises(DataError, match=str(tmp_path)):
        load_policy(tmp_path)


def test_a_tokenizer_without_eos_is_named():
    from types import SimpleNamespace

    from components.errors import DataError
    from components.vip.codec import hf_codec

    with pytest.raises(DataError, match="'my-tok': no eos token"):
        hf_codec(SimpleNamespace(name_or_path="my-tok", eos_token_id=None, pad_token_id=0))
