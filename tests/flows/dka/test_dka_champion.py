"""DKA's champion evaluator and loader, without a pipeline run.

A DKA-adapted tiny ViT trained for a couple of seconds on an easy 4-class task (a bright square in one of the
four quadrants) is scored by ``flows.dka.champion.evaluate`` on a held-out pool saved in the data stage's format
(``pool.npz`` with ``test_x``/``test_y``). Sabotage: the head's sign flipped must give a clearly worse accuracy
and AUC; the allow-listed loader must round-trip the saved folder bit for bit (same logits, same metrics); a
missing pool is a DataError naming the file.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.dka.methods import AdapterConfig, build, save_adapted
from components.dka.train import fit
from components.dka.vit import TinyViT, ViTConfig
from components.errors import DataError
from flows.dka import champion
from flows.dka.champion import LOADER
from flows.runtime.mlflow_model import ALLOWED_LOADERS, resolve_loader

CFG = AdapterConfig(mid=8, k_large=5, k_small=3)
SETTINGS = {"pool": "data/pool.npz", "split": "test"}


def _quadrants(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 4
    x = rng.normal(0, 0.3, size=(n, 1, 32, 32)).astype(np.float32)
    for i, c in enumerate(y):
        r, col = divmod(int(c), 2)
        oy, ox = rng.integers(2, 8, size=2)
        x[i, 0, r * 16 + oy : r * 16 + oy + 6, col * 16 + ox : col * 16 + ox + 6] += 3.0
    return x, y


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(built DKA model, root holding data/pool.npz)."""
    torch.set_num_threads(1)
    base = TinyViT(ViTConfig(img_size=32, patch=8, dim=32, depth=2, heads=2), seed=0)
    built = build("dka", base, n_classes=4, seed=0, cfg=CFG)
    x, y = _quadrants(200, 0)
    fit(built, x, y, steps=80, batch=32, lr_adapter=1e-2, lr_head=3e-2, seed=0)
    root = tmp_path_factory.mktemp("dka-root")
    (root / "data").mkdir()
    test_x, test_y = _quadrants(80, 1)
    np.savez_compressed(root / "data/pool.npz", train_x=x, train_y=y, test_x=test_x, test_y=test_y)
    return built, root


def test_the_evaluator_scores_the_model_and_catches_a_flipped_head(trained):
    built, root = trained
    model = built.model.eval()
    good = champion.evaluate(model, SETTINGS, root)
    assert set(good) == set(champion.RULES)
    assert good["acc"] > 0.8 and good["auc"] > 0.9, good  # chance: 0.25 and 0.5
    sd = {k: v.clone() for k, v in model.state_dict().items()}
    with torch.no_grad():  # sabotage: the head's sign flipped
        model.head.weight.neg_()
        model.head.bias.neg_()
    try:
        bad = champion.evaluate(model, SETTINGS, root)
    finally:
        model.load_state_dict(sd)
    assert bad["acc"] < 0.3 and bad["acc"] < good["acc"] - 0.5 and bad["auc"] < good["auc"] - 0.4, (good, bad)


def test_the_loader_round_trips_the_saved_folder_bit_for_bit(trained, tmp_path):
    built, root = trained
    assert LOADER in ALLOWED_LOADERS
    save_adapted(built, "dka", 4, CFG, tmp_path / "dka-f0.01")
    back = resolve_loader(LOADER)(tmp_path / "dka-f0.01")
    x = torch.randn(5, 1, 32, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert torch.equal(back(x), built.model.eval()(x))
    assert champion.evaluate(back, SETTINGS, root) == champion.evaluate(built.model.eval(), SETTINGS, root)


def test_a_missing_pool_names_the_file_and_how_to_make_it(trained, tmp_path):
    with pytest.raises(DataError, match=r"pool\.npz.*paperline run dka --stage data"):
        champion.evaluate(trained[0].model, SETTINGS, tmp_path)


def test_no_tracked_run_proposes_no_champion(tmp_path):
    assert champion.candidate(None, "dka-f0.01-s0", tmp_path, "data/pool.npz", tmp_path) is None
