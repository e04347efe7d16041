"""EBT's champion evaluator on a tiny trained EBT: the saved folder loads back (the logged loader) to the same
outputs and the same metrics bit for bit; sabotage (weights replaced by noise, the energy's sign flipped) gives a
clearly worse NLL; missing windows are a DataError naming the file; the settings follow the evaluate stage."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch

from components.ebt.energy_model import EBTConfig, EnergyTransformer, save_model
from components.ebt.predictor import Predictor
from components.ebt.training import train_ebt
from components.errors import DataError
from flows.ebt import champion
from flows.ebt.params import PRESETS, Params
from flows.runtime.mlflow_model import ALLOWED_LOADERS, resolve_loader
from flows.runtime.params import resolve

V, S = 8, 16
SETTINGS = {
    "windows": "data/ebt/data/sets/id.npy",
    "eval_seed": 0,
    "m_train": 2,
    "think_m": 4,
    "best_of": [1, 4],
    "best_n": 4,
    "best_of_noise": 0.0,
    "batch_size": 32,
    "init_scale": 1.0,
    "threads": 1,
    "max_windows": 48,
}


def _successor(n: int, seed: int) -> np.ndarray:
    """token t+1 = token t + 1 mod 8 from random starts: the next token is a function of the current one."""
    starts = np.random.default_rng(seed).integers(0, V, n // S)
    return ((starts[:, None] + np.arange(S)) % V).reshape(-1).astype(np.int64)


@functools.lru_cache(maxsize=1)
def _trained() -> EnergyTransformer:
    torch.manual_seed(0)
    model = EnergyTransformer(
        EBTConfig(
            vocab_size=V, d_model=32, n_layers=1, n_heads=2, d_ff=64, max_seq_len=S, step_size=2.0, infer_steps=2
        ),
        seed=0,
    )
    train_ebt(
        model,
        _successor(20_000, 0),
        steps=120,
        batch_size=16,
        seq_len=S,
        peak_lr=1e-2,
        mcmc_steps=2,
        alpha_lr_mult=6.0,
        seed=0,
        progress=False,
    )
    return model.eval()


@pytest.fixture
def saved(tmp_path):
    """(checkout root holding the ID windows, the champion's folder)."""
    path = tmp_path / SETTINGS["windows"]
    path.parent.mkdir(parents=True)
    np.save(path, _successor(2_000, 1)[: 48 * (S + 1)].reshape(48, S + 1))
    return tmp_path, save_model(_trained(), tmp_path / "ebt-d32-s0")


def test_loader_round_trips_the_folder_and_the_metrics(saved):
    root, folder = saved
    assert champion.LOADER in ALLOWED_LOADERS
    loaded = resolve_loader(champion.LOADER)(folder)
    assert isinstance(loaded, Predictor)
    idx = torch.from_numpy(np.load(root / SETTINGS["windows"])[:4, :-1])
    with torch.no_grad():
        assert torch.equal(loaded(idx)[0], Predictor(_trained())(idx)[0])  # the same served logits, bit for bit
    got = champion.evaluate(loaded, SETTINGS, root)
    assert got == champion.evaluate(_trained(), SETTINGS, root)  # the bare EBT: the same numbers
    assert set(got) == set(champion.RULES)
    assert got["id_nll"] < math.log(V) - 1.0  # trained: a nat better than the unigram baseline
    assert got["id_nll_think"] <= got["id_nll"] + 0.05  # thinking longer does not undo the prediction


def test_sabotaged_models_score_clearly_worse(saved):
    root, folder = saved
    good = champion.evaluate(resolve_loader(champion.LOADER)(folder), SETTINGS, root)
    noisy = resolve_loader(champion.LOADER)(folder)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, w in noisy.model.named_parameters():
            if name != "alpha":
                w.copy_(0.02 * torch.randn(w.shape, generator=g))
    flipped = resolve_loader(champion.LOADER)(folder)  # -E: the inner steps climb the learned energy
    with torch.no_grad():
        flipped.model.energy_head.weight.neg_()
        if flipped.model.energy_head.bias is not None:
            flipped.model.energy_head.bias.neg_()
    for broken in (noisy, flipped):
        bad = champion.evaluate(broken, SETTINGS, root)
        for metric in champion.RULES:
            assert bad[metric] > good[metric] + 0.5, (metric, bad, good)


def test_missing_windows_are_a_data_error_naming_the_file(saved):
    _, folder = saved
    with pytest.raises(DataError, match=r"sets/id.npy: .*paperline run ebt --stage data"):
        champion.evaluate(resolve_loader(champion.LOADER)(folder), SETTINGS, folder / "nowhere")


def test_settings_follow_the_evaluate_stage():
    p = resolve(Params, PRESETS, slug="ebt", profile="smoke")
    width, seed = champion.choose(p)
    s = champion.settings_for(p, seed)
    assert (width, seed) == (p.model.widths[0], p.training.seeds[0]) and s["eval_seed"] == seed * 100  # ID set first
    assert (
        s["m_train"] == p.energy.mcmc_steps and s["best_of"] == p.eval.best_of and s["batch_size"] == p.eval.batch_size
    )
    assert s["max_windows"] == p.eval.batch_size  # one batch of the stage's own: a few seconds
    assert not s["windows"].startswith("/")  # relative to the checkout
