"""The rule planner: a spec to a chain of objects with boxes (the templated GoT data of the SFT stage).

Each group gives ``count`` objects, in the order of the spec; a group without a colour gets a random colour that
does not make a held-out colour-shape pair. Boxes are square-ish (aspect within [1/2, 2]), sides
``MIN_SIDE..max_side``, one empty cell between any two boxes, and the position relation holds. ``relation_noise``
is the share of position prompts planned with the relation reversed (a planner that is weak on position).
"""

from __future__ import annotations

import numpy as np

from components.got_r1.checker import relation_holds
from components.got_r1.render import MIN_SIDE
from components.got_r1.world import COLOURS

OPPOSITE = {"left of": "right of", "right of": "left of", "above": "below", "below": "above"}


def max_side(size: int) -> int:
    return max(MIN_SIDE, size // 2 - 1)


def _apart(a, b) -> bool:  # at least one empty cell between the boxes
    return a[2] + 1 < b[0] or b[2] + 1 < a[0] or a[3] + 1 < b[1] or b[3] + 1 < a[1]


def _random_box(rng, size):
    hi = max_side(size)
    w = int(rng.integers(MIN_SIDE, hi + 1))
    h = int(np.clip(rng.integers(MIN_SIDE, hi + 1), max(MIN_SIDE, (w + 1) // 2), min(hi, 2 * w)))
    x0, y0 = int(rng.integers(0, size - w + 1)), int(rng.integers(0, size - h + 1))
    return (x0, y0, x0 + w - 1, y0 + h - 1)


def _grid_boxes(n: int, size: int, rel: str | None) -> list[tuple]:
    """A fallback layout: cells of a 2 x 2 grid (the first two ordered to satisfy ``rel`` between them)."""
    side = min(max_side(size), size // 2 - 1)
    cells = [(0, 0), (1, 0), (0, 1), (1, 1)]
    if rel in ("left of", "right of", "above", "below"):
        # object 1 must be `rel` object 0
        first, second = {
            "left of": ((1, 0), (0, 0)),
            "right of": ((0, 0), (1, 0)),
            "above": ((0, 1), (0, 0)),
            "below": ((0, 0), (0, 1)),
        }[rel]
        cells = [first, second] + [c for c in cells if c not in (first, second)]
    half = size // 2
    return [(cx * half, cy * half, cx * half + side - 1, cy * half + side - 1) for cx, cy in cells[:n]]


def plan(
    spec: dict, size: int, rng: np.random.Generator, *, held: dict | None = None, relation_noise: float = 0.0
) -> list[dict]:
    """A chain for ``spec``: a list of ``{"colour", "shape", "box"}``."""
    avoid = {tuple(c) for c in (held or {}).get("colour_shape", [])}
    objects = []
    for g in spec["include"]:
        for _ in range(int(g["count"])):
            colour = g.get("color")
            if colour is None:
                allowed = [c for c in COLOURS if (c, g["class"]) not in avoid]
                colour = allowed[int(rng.integers(len(allowed)))]
            objects.append({"colour": colour, "shape": g["class"]})
    rel = None
    if spec["tag"] == "position":
        rel = spec["include"][1]["position"][0]
        if rng.random() < relation_noise:
            rel = OPPOSITE[rel]
    boxes: list[tuple] | None = None
    for _ in range(200):
        cand: list[tuple] = []
        for _ in objects:
            for _ in range(50):
                b = _random_box(rng, size)
                if all(_apart(b, c) for c in cand):
                    cand.append(b)
                    break
        if len(cand) == len(objects) and (rel is None or relation_holds(rel, cand[1], cand[0])):
            boxes = cand
            break
    if boxes is None:
        boxes = _grid_boxes(len(objects), size, rel)
    return [{**o, "box": tuple(int(v) for v in b)} for o, b in zip(objects, boxes)]
