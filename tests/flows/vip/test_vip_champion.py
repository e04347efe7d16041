"""VIP's champion evaluator on a tiny policy SFT'd to answer at once (the empty target: success iff the first
token is eos): the saved folder loads back (the logged loader) to the same logits and the same metrics bit for
bit; sabotage (weights replaced by noise, the logits' sign flipped) gives clearly worse mean@k and pass@k;
missing held-out prompts are a DataError naming the file; the settings follow the rl stage's evaluation."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from components.errors import DataError
from components.io import write_jsonl
from components.models.tiny_lm import TinyLM, TinyLMConfig, save_model
from components.training.qa_lm import train_lm
from components.vip import task as T
from flows.runtime.mlflow_model import ALLOWED_LOADERS, resolve_loader
from flows.runtime.params import resolve
from flows.vip import champion
from flows.vip.params import PRESETS, Params

SETTINGS = {"heldout": "data/vip/data/heldout.jsonl", "k": 4, "max_new": 3, "sample_seed": 10_000, "threads": 1}


def _rows(n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [{**x.row(), "target": ""} for x in T.make_problems(n, {"add1": 1.0, "mul1": 1.0}, rng, "h")]


@functools.lru_cache(maxsize=1)
def _policy() -> TinyLM:
    model = TinyLM(TinyLMConfig(vocab_size=T.VOCAB, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=24), seed=0)
    train_lm(model, T.sft_items(_rows(200, 0)), steps=60, batch_size=32, lr=1e-2, seed=0)
    return model.eval()


@pytest.fixture
def saved(tmp_path):
    """(checkout root holding the held-out prompts, the champion's folder)."""
    path = tmp_path / SETTINGS["heldout"]
    path.parent.mkdir(parents=True)
    write_jsonl(path, _rows(30, 1))
    return tmp_path, save_model(_policy(), tmp_path / "vip-seed0")


def test_loader_round_trips_the_folder_and_the_metrics(saved):
    root, folder = saved
    assert champion.LOADER in ALLOWED_LOADERS
    loaded = resolve_loader(champion.LOADER)(folder)
    idx = torch.tensor([T.encode(r["prompt"]) for r in _rows(4, 2)])
    with torch.no_grad():
        assert torch.equal(loaded(idx)[0], _policy()(idx)[0])  # the same logits, bit for bit
    got = champion.evaluate(loaded, SETTINGS, root)
    assert got == champion.evaluate(_policy(), SETTINGS, root) and set(got) == set(champion.RULES)
    assert got["mean_at_k"] > 0.8 and got["pass_at_k"] >= got["mean_at_k"]  # it learned to answer at once


def test_sabotaged_policies_score_clearly_worse(saved):
    root, folder = saved
    good = champion.evaluate(resolve_loader(champion.LOADER)(folder), SETTINGS, root)
    noisy = resolve_loader(champion.LOADER)(folder)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for w in noisy.parameters():
            w.copy_(0.02 * torch.randn(w.shape, generator=g))
    flipped = resolve_loader(champion.LOADER)(folder)  # the final norm's sign flipped: every logit negated
    with torch.no_grad():
        flipped.norm.weight.neg_()
    for broken in (noisy, flipped):
        bad = champion.evaluate(broken, SETTINGS, root)
        for metric in champion.RULES:
            assert bad[metric] < good[metric] - 0.3, (metric, bad, good)


def test_missing_heldout_prompts_are_a_data_error_naming_the_file(saved):
    _, folder = saved
    with pytest.raises(DataError, match=r"heldout.jsonl: .*paperline run vip --stage data"):
        champion.evaluate(resolve_loader(champion.LOADER)(folder), SETTINGS, folder / "nowhere")


def test_settings_follow_the_rl_stage_evaluation():
    p = resolve(Params, PRESETS, slug="vip", profile="smoke")
    method, seed = champion.choose(p)
    s = champion.settings_for(p, seed)
    assert method == "vip" and method in p.rl.methods and seed == p.rl.seeds[0]
    assert s["sample_seed"] == 10_000 + seed and s["k"] == p.rl.eval_k and s["max_new"] == p.rl.max_new
    assert not s["heldout"].startswith("/")  # relative to the checkout
