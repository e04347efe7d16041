"""CenterNet's augmentation moves boxes with the pixels: a box drawn as a bright rectangle must still frame the
bright pixels after the random scale, crop and flip (brute force against the warped image)."""

from __future__ import annotations

import numpy as np

from components.detection import centernet as CN
from components.detection.augment import AugmentConfig, augment, move_boxes


def _scene(box, size=64):
    img = np.zeros((size, size, 3), np.uint8)
    x, y, w, h = box
    img[y : y + h, x : x + w] = 255
    return img


def test_boxes_follow_the_pixels():
    rng = np.random.default_rng(0)
    cfg = AugmentConfig(colour=0.0)
    for k in range(60):
        box = (int(rng.integers(4, 30)), int(rng.integers(4, 30)), int(rng.integers(8, 30)), int(rng.integers(8, 30)))
        img, b = augment(rng, _scene(box)[None], [np.array([box], float)], cfg)
        ys, xs = np.nonzero(img[0, :, :, 0] > 191)  # the rectangle's pixels (border fill is 128)
        if len(b[0]) == 0:
            assert len(xs) < 8 * 8, k  # dropped only when (almost) nothing of it is left in the frame
            continue
        x, y, w, h = b[0][0]
        assert abs(xs.min() - x) <= 1.5 and abs(xs.max() + 1 - (x + w)) <= 1.5, (k, box, b[0])
        assert abs(ys.min() - y) <= 1.5 and abs(ys.max() + 1 - (y + h)) <= 1.5, (k, box, b[0])


def test_flip_is_exact():
    """A flip alone (no zoom, no shift) is np.flip of the pixels and x -> size - x - w of the boxes, to the pixel."""
    img = _scene((10, 12, 20, 30))[None]
    box = np.array([[10.0, 12.0, 20.0, 30.0]])
    for seed in range(6):
        out, b = augment(np.random.default_rng(seed), img, [box], AugmentConfig(scale=0, shift=0, colour=0))
        flipped = not np.array_equal(out, img)
        assert np.array_equal(out[0], img[0, :, ::-1] if flipped else img[0])
        assert np.allclose(b[0], [[34.0, 12.0, 20.0, 30.0]] if flipped else box)


def test_identity_and_clipping():
    rng = np.random.default_rng(1)
    box = np.array([[10.0, 12.0, 20.0, 30.0]])
    img = _scene((10, 12, 20, 30))[None]
    same, b = augment(rng, img, [box], AugmentConfig(flip=False, scale=0, shift=0, colour=0))
    assert np.array_equal(same, img) and np.allclose(b[0], box)
    m = np.array([[1.0, 0, 50.0], [0, 1.0, 0]])  # shifted right by 50 px in a 64 px frame: 14 px remain
    assert np.allclose(move_boxes(box, m, 64, 2.0), [[60.0, 12.0, 4.0, 30.0]])
    assert len(move_boxes(box, np.array([[1.0, 0, 60.0], [0, 1.0, 0]]), 64, 2.0)) == 0


def test_training_sees_augmented_views():
    """The training loop applies the augmentation: with it, the model is trained on views that differ from the
    stored images (the old loop only flipped, so 10-frame sequences were memorised: train AP50 0.97, dev 0.08)."""
    rng = np.random.default_rng(2)
    images = rng.integers(0, 255, (4, 32, 32, 3), dtype=np.uint8)
    seen = []
    orig = CN.augment

    def spy(r, x, b, cfg):
        out = orig(r, x, b, cfg)
        seen.append((x.copy(), out[0]))
        return out

    CN.augment = spy
    try:
        CN.train(
            images,
            [np.array([[4.0, 4.0, 10.0, 20.0]])] * 4,
            cfg=CN.TrainConfig(epochs=1, batch_size=4),
            model_cfg=CN.CenterNetConfig(width=8),
            seed=0,
        )
    finally:
        CN.augment = orig
    assert seen and not np.array_equal(seen[0][0], seen[0][1])
