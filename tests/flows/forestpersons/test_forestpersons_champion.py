"""ForestPersons' champion evaluator and loader, without a pipeline run.

A tiny CenterNet trained for a few seconds on easy 64 px street scenes (the known-answer recipe) is scored by
``flows.forestpersons.champion.evaluate`` on a held-out set saved in the stage's on-disk format. Sabotage: its
weights replaced by noise must give a clearly worse AP50; the allow-listed loader must round-trip the saved
folder bit for bit (same heatmaps, same metrics); a missing test set is a DataError naming the file.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from components.detection import centernet as CN
from components.detection.augment import AugmentConfig
from components.errors import DataError
from components.scenes.compose import DOMAINS
from components.scenes.sequences import generate_set
from flows.forestpersons import champion
from flows.forestpersons.common import LOADER, save_set
from flows.runtime.mlflow_model import ALLOWED_LOADERS, resolve_loader

EASY = replace(DOMAINS["urban"], height=(14, 30), trunks=(0, 0), people=(1, 2))
SETTINGS = {"test_dir": "split", "test_set": "forest_test", "top_k": 50, "min_score": 0.02}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(model, root): a detector trained on easy scenes and a checkout-like root holding its held-out test set."""
    torch.set_num_threads(1)
    images, _, anns = generate_set(
        "urban", n_sequences=40, n_frames=4, size=64, jitter=2, seed=0, prefix="tr", spec=EASY
    )
    boxes = [
        np.array([a["bbox"] for a in anns if a["image_id"] == i], float).reshape(-1, 4) for i in range(len(images))
    ]
    model, _ = CN.train(
        images,
        boxes,
        cfg=CN.TrainConfig(epochs=12, batch_size=16, lr=8e-3, augment=AugmentConfig(scale=0, shift=0, colour=0)),
        model_cfg=CN.CenterNetConfig(width=16),
        seed=0,
    )
    root = tmp_path_factory.mktemp("fp-root")
    save_set(
        root / "split",
        "forest_test",
        *generate_set("urban", n_sequences=10, n_frames=4, size=64, jitter=2, seed=1, prefix="te", spec=EASY),
    )
    return model.eval(), root


def test_the_evaluator_scores_a_working_detector_and_catches_noise_weights(trained):
    model, root = trained
    good = champion.evaluate(model, SETTINGS, root)
    assert set(good) == set(champion.RULES) and all(0.0 <= v <= 1.0 for v in good.values())
    assert good["ap50"] > 0.4, good  # it finds people (the known-answer test asks > 0.5 of the same recipe)
    broken = CN.TinyCenterNet(model.cfg)
    broken.load_state_dict(model.state_dict())
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():  # sabotage: every convolution's weights replaced by noise of the same scale
        for name, w in broken.state_dict().items():
            if name.endswith("weight") and w.ndim == 4:
                w.copy_(torch.randn(w.shape, generator=gen) * w.std())
    bad = champion.evaluate(broken.eval(), SETTINGS, root)
    assert all(np.isfinite(v) for v in bad.values())
    assert bad["ap50"] < 0.1 and bad["ap50"] < good["ap50"] - 0.3, (good, bad)


def test_the_loader_round_trips_the_saved_folder_bit_for_bit(trained, tmp_path):
    model, root = trained
    assert LOADER in ALLOWED_LOADERS
    folder = CN.save_model(model, tmp_path / "forest-s0")
    back = resolve_loader(LOADER)(folder)
    x = torch.rand(3, 3, 64, 64, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert all(torch.equal(a, b) for a, b in zip(model(x), back(x)))
    assert champion.evaluate(back, SETTINGS, root) == champion.evaluate(model, SETTINGS, root)


def test_a_missing_test_set_names_the_file_and_how_to_make_it(trained, tmp_path):
    with pytest.raises(DataError, match=r"forest_test\.npz.*paperline run forestpersons --stage split"):
        champion.evaluate(trained[0], SETTINGS, tmp_path)


def test_no_tracked_run_proposes_no_champion(tmp_path):
    assert champion.candidate(None, None, "forest-s0", tmp_path, "split", tmp_path) is None
