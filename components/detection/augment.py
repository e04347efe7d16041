"""CenterNet's training augmentation (Zhou et al. 2019, sec. 5 "Training"): random flip, random scaling
(0.6-1.4 in CenterNet's code, ``scale=0.4``), random cropping (a random shift of the scaled image) and colour
jittering (brightness, contrast, saturation), applied per image with the boxes moved by the same affine map.

Boxes leaving the frame are clipped to it (the ground truth of every set lies inside its image); a box with less
than ``min_side`` px left on either side is dropped (CenterNet drops boxes with non-positive clipped size).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class AugmentConfig:
    flip: bool = True
    scale: float = 0.4  # zoom drawn from [1 - scale, 1 + scale]
    shift: float = 0.2  # translation drawn from +-shift x image side, each axis
    colour: float = 0.4  # brightness / contrast / saturation factors from [1 - colour, 1 + colour]
    min_side: float = 2.0


def affine(rng: np.random.Generator, size: int, cfg: AugmentConfig) -> tuple[np.ndarray, bool]:
    """A 2x3 map (zoom about the centre, then shift) and whether to flip horizontally."""
    z = rng.uniform(1 - cfg.scale, 1 + cfg.scale) if cfg.scale > 0 else 1.0
    tx, ty = rng.uniform(-cfg.shift, cfg.shift, 2) * size if cfg.shift > 0 else (0.0, 0.0)
    c = size / 2.0
    m = np.array([[z, 0.0, c - z * c + tx], [0.0, z, c - z * c + ty]])
    flip = bool(cfg.flip and rng.random() < 0.5)
    if flip:  # x -> size - x after the zoom and shift
        m[0] = -m[0]
        m[0, 2] += size
    return m, flip


def pixel_map(m: np.ndarray) -> np.ndarray:
    """The same map in OpenCV's pixel-index coordinates (pixel i has its centre at i, but covers [i, i + 1] in the
    boxes' coordinates): i' = m (i + 0.5) - 0.5. Without it a flip moves the image 1 px against its boxes."""
    out = m.copy()
    out[:, 2] += 0.5 * m[:, :2].sum(1) - 0.5
    return out


def move_boxes(boxes: np.ndarray, m: np.ndarray, size: int, min_side: float) -> np.ndarray:
    """[x, y, w, h] boxes through the map ``m`` (zoom, shift, optional flip), clipped to the frame."""
    b = np.asarray(boxes, float).reshape(-1, 4)
    x = np.stack([b[:, 0], b[:, 0] + b[:, 2]], 1) * m[0, 0] + m[0, 2]
    y = np.stack([b[:, 1], b[:, 1] + b[:, 3]], 1) * m[1, 1] + m[1, 2]
    x0, x1 = np.clip(x.min(1), 0, size), np.clip(x.max(1), 0, size)
    y0, y1 = np.clip(y.min(1), 0, size), np.clip(y.max(1), 0, size)
    out = np.stack([x0, y0, x1 - x0, y1 - y0], 1)
    return out[(out[:, 2] >= min_side) & (out[:, 3] >= min_side)]


def jitter_colour(rng: np.random.Generator, img: np.ndarray, amount: float) -> np.ndarray:
    """Brightness, contrast and saturation factors in random order (CenterNet's ``color_aug`` without PCA
    lighting); float image in [0, 255] in, uint8 out."""
    x = img.astype(np.float32)
    for k in rng.permutation(3):
        a = rng.uniform(1 - amount, 1 + amount)
        if k == 0:
            x = x * a
        elif k == 1:
            x = (x - x.mean()) * a + x.mean()
        else:
            grey = x.mean(axis=2, keepdims=True)
            x = (x - grey) * a + grey
    return np.clip(x, 0, 255).astype(np.uint8)


def augment(
    rng: np.random.Generator, images: np.ndarray, boxes: list[np.ndarray], cfg: AugmentConfig
) -> tuple[np.ndarray, list[np.ndarray]]:
    """A batch of uint8 images (B, S, S, 3) and their boxes, each image with its own draw; the border is filled
    with mid-grey (the network's zero after centring)."""
    size = images.shape[1]
    out, out_boxes = np.empty_like(images), []
    for i, (img, b) in enumerate(zip(images, boxes)):
        m, _ = affine(rng, size, cfg)
        out[i] = cv2.warpAffine(
            img,
            pixel_map(m),
            (size, size),
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=(128, 128, 128),
        )
        if cfg.colour > 0:
            out[i] = jitter_colour(rng, out[i], cfg.colour)
        out_boxes.append(move_boxes(b, m, size, cfg.min_side))
    return out, out_boxes
