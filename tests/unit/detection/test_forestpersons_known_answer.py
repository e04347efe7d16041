"""Known answer for forestpersons's detector, and the sabotage a reviewer would try.

On small, easy street scenes (64 px, standing people 14-30 px, no occluders) the tiny CenterNet trained for a
few dozen steps must find people: AP50 above 0.5 on held-out scenes, while a trivial baseline (the training
set's mean box at every image's centre, which knows where people are on average) stays below 0.15. With the
heatmap targets replaced by noise (each image gets another image's centres), the same training must fail the
bar: the key signal of CenterNet is where the centres are.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from components.detection import centernet as CN
from components.detection import coco as C
from components.detection.augment import AugmentConfig
from components.scenes.compose import DOMAINS
from components.scenes.sequences import generate_set

# flips only: the fixture pins the mechanism (centre heatmap + sizes) in a few dozen steps; the pipeline's full
# augmentation (scale, crop, colour) needs more steps than this fixture affords (AP50 0.24 at 12 epochs)
AUG = AugmentConfig(scale=0.0, shift=0.0, colour=0.0)
EASY = replace(DOMAINS["urban"], height=(14, 30), trunks=(0, 0), people=(1, 2))


def _set(seed, n_seq):
    images, recs, anns = generate_set(
        "urban", n_sequences=n_seq, n_frames=4, size=64, jitter=2, seed=seed, prefix="ka", spec=EASY
    )
    boxes = [
        np.array([a["bbox"] for a in anns if a["image_id"] == i], float).reshape(-1, 4) for i in range(len(images))
    ]
    return images, boxes


@pytest.fixture(scope="module")
def data():
    torch.set_num_threads(1)
    return _set(0, 40), _set(1, 10)


def _ap50(model, test):
    images, boxes = test
    return C.evaluate(CN.detect(model, images), [(b, np.zeros(len(b), bool)) for b in boxes])["ap50"]


def _train(train, sabotage=False):
    images, boxes = train
    if sabotage:  # each image's targets come from another image: the centres carry no signal
        boxes = boxes[1:] + boxes[:1]
    model, hist = CN.train(
        images,
        boxes,
        cfg=CN.TrainConfig(epochs=12, batch_size=16, lr=8e-3, augment=AUG),
        model_cfg=CN.CenterNetConfig(width=16),
        seed=0,
    )
    return model, hist


def test_centernet_finds_people_where_a_trivial_baseline_cannot(data):
    train, test = data
    model, hist = _train(train)
    assert hist["loss"][-1] < hist["loss"][0]
    ap = _ap50(model, test)
    mean_wh = np.concatenate(train[1])[:, 2:].mean(0)
    trivial = [(np.array([[32 - mean_wh[0] / 2, 32 - mean_wh[1] / 2, *mean_wh]]), np.ones(1)) for _ in test[0]]
    base = C.evaluate(trivial, [(b, np.zeros(len(b), bool)) for b in test[1]])["ap50"]
    assert ap > 0.5 and base < 0.15, (ap, base)


def test_sabotage_noise_targets_is_caught(data):
    train, test = data
    model, _ = _train(train, sabotage=True)
    assert _ap50(model, test) < 0.5  # the known-answer bar is failed
