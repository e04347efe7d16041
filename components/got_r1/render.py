"""Palette images: objects drawn as shapes filling their boxes, and the component detector that reads them back.

An image is a (S, S) array of palette indices (0 background, 1..6 the colours of :data:`world.COLOURS`). A box is
``(x0, y0, x1, y1)`` in cells, inclusive, x the column. Every shape touches all four sides of its box, so the
detector's bounding box of a cleanly drawn object is the planned box exactly. The detector labels each colour's
connected components (``scipy.ndimage.label``) and names the shape whose template, drawn in the component's box,
agrees with the most cells (the card's "fill ratio and aspect", made exact on these templates).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from components.errors import ParamsError
from components.got_r1.world import COLOURS, SHAPES, colour_index

MIN_SIDE = 3  # every shape's template differs from the others' at 3 cells and up
MIN_AREA = 3  # smaller components are noise: not an object


def template(shape: str, h: int, w: int) -> np.ndarray:
    """Boolean (h, w) mask of ``shape`` filling an h x w box."""
    r = (np.arange(h) + 0.5)[:, None]
    c = (np.arange(w) + 0.5)[None, :]
    if shape == "square":
        return np.ones((h, w), bool)
    if shape == "circle":  # the inscribed ellipse, corner cells always cut (a 3x3 circle is a plus)
        m = (r / h - 0.5) ** 2 + (c / w - 0.5) ** 2 <= 0.25
        m[[0, 0, -1, -1], [0, -1, 0, -1]] = False
        return m
    if shape == "triangle":  # lower-left right triangle
        return np.broadcast_to(c <= (r + 0.5) * w / h, (h, w)).copy()
    if shape == "ring":  # the box's border only
        m = np.zeros((h, w), bool)
        m[[0, -1], :] = True
        m[:, [0, -1]] = True
        return m
    raise ParamsError(f"shape {shape!r} is not one of {SHAPES}")


def render(objects: list[dict], size: int) -> np.ndarray:
    """Draw ``objects`` (dicts with ``colour``, ``shape``, ``box``) in order onto a blank (size, size) canvas;
    boxes are clipped to the canvas."""
    img = np.zeros((size, size), np.int64)
    for o in objects:
        x0, y0, x1, y1 = (int(v) for v in o["box"])
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, size - 1), min(y1, size - 1)
        if x1 < x0 or y1 < y0:
            continue
        m = template(o["shape"], y1 - y0 + 1, x1 - x0 + 1)
        img[y0 : y1 + 1, x0 : x1 + 1][m] = colour_index(o["colour"])
    return img


@dataclass(frozen=True)
class Detection:
    colour: str
    shape: str
    box: tuple[int, int, int, int]  # (x0, y0, x1, y1) inclusive
    area: int
    agreement: float  # share of the box's cells where the component matches the named shape's template


def classify(mask: np.ndarray) -> tuple[str, float]:
    """The shape whose template agrees with ``mask`` on the most cells (first of :data:`SHAPES` on ties)."""
    scores = [float((template(s, *mask.shape) == mask).mean()) for s in SHAPES]
    k = int(np.argmax(scores))
    return SHAPES[k], scores[k]


def detect(img: np.ndarray) -> list[Detection]:
    """Objects in ``img``: each colour's 4-connected components of at least :data:`MIN_AREA` cells."""
    img = np.asarray(img)
    if img.ndim != 2:
        raise ParamsError(f"image must be 2-D palette indices, got shape {img.shape}")
    out = []
    for ci, name in enumerate(COLOURS, start=1):
        lab, n = ndimage.label(img == ci)
        for k, sl in enumerate(ndimage.find_objects(lab), start=1):
            mask = lab[sl] == k
            area = int(mask.sum())
            if area < MIN_AREA:
                continue
            shape, agree = classify(mask)
            box = (sl[1].start, sl[0].start, sl[1].stop - 1, sl[0].stop - 1)
            out.append(Detection(name, shape, box, area, agree))
    return out


def iou(a, b) -> float:
    """IoU of two inclusive cell boxes (x0, y0, x1, y1)."""
    ix = min(a[2], b[2]) - max(a[0], b[0]) + 1
    iy = min(a[3], b[3]) - max(a[1], b[1]) + 1
    inter = max(ix, 0) * max(iy, 0)
    area = lambda r: max(r[2] - r[0] + 1, 0) * max(r[3] - r[1] + 1, 0)  # noqa: E731
    union = area(a) + area(b) - inter
    return inter / union if union > 0 else 0.0
