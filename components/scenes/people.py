"""Articulated people: head, torso and limb capsules in a body frame, posed, rotated and rasterised.

Body frame: units of the standing height (0 = top of head, 1 = soles), x to the right. A pose is a list of
capsules ``(x0, y0, x1, y1, radius, part)``; rasterising one is a distance-to-segment test on the pixel grid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

POSES = ("standing", "sitting", "lying")
PARTS = ("head", "top", "bottom")

_HEAD = [(0.0, 0.065, 0.0, 0.075, 0.065, "head")]
_TORSO = [(0.0, 0.16, 0.0, 0.50, 0.085, "top")]
_ARMS = [(-0.08, 0.18, -0.13, 0.48, 0.04, "top"), (0.08, 0.18, 0.13, 0.48, 0.04, "top")]
_LEGS = [(-0.04, 0.50, -0.06, 0.98, 0.052, "bottom"), (0.04, 0.50, 0.06, 0.98, 0.052, "bottom")]
_SIT_LEGS = [
    (-0.03, 0.50, 0.24, 0.53, 0.055, "bottom"),
    (0.03, 0.50, 0.27, 0.50, 0.055, "bottom"),
    (0.24, 0.53, 0.26, 0.76, 0.05, "bottom"),
    (0.27, 0.50, 0.30, 0.74, 0.05, "bottom"),
]
_SIT_ARMS = [(-0.06, 0.18, 0.10, 0.42, 0.04, "top"), (0.08, 0.18, 0.22, 0.44, 0.04, "top")]

# clothing palettes (RGB in [0, 1]): camouflage / outdoor colours, and bright SAR or city colours
CAMO = [(0.33, 0.37, 0.20), (0.42, 0.36, 0.22), (0.25, 0.28, 0.16), (0.50, 0.45, 0.32), (0.30, 0.24, 0.16)]
BRIGHT = [
    (0.85, 0.15, 0.12),
    (0.95, 0.55, 0.10),
    (0.15, 0.30, 0.80),
    (0.90, 0.85, 0.15),
    (0.20, 0.20, 0.22),
    (0.85, 0.85, 0.85),
]
SKIN = [(0.93, 0.76, 0.62), (0.76, 0.57, 0.42), (0.55, 0.38, 0.26), (0.36, 0.25, 0.18)]


def capsules(pose: str) -> list[tuple]:
    if pose == "standing" or pose == "lying":
        return _HEAD + _TORSO + _ARMS + _LEGS  # lying = the standing figure rotated onto the ground
    if pose == "sitting":
        return _HEAD + _TORSO + _SIT_ARMS + _SIT_LEGS
    raise ValueError(f"unknown pose {pose!r}; use one of {POSES}")


@dataclass
class Figure:
    """A rasterised person: masks per part in a local window whose top-left corner is ``(y0, x0)`` on the canvas."""

    y0: int
    x0: int
    parts: dict[str, np.ndarray]  # part -> bool mask (h, w)

    @property
    def mask(self) -> np.ndarray:
        m = np.zeros_like(next(iter(self.parts.values())))
        for v in self.parts.values():
            m |= v
        return m


def rasterise(
    pose: str, height: float, angle_deg: float, anchor: tuple[float, float], *, top_down: bool = False
) -> Figure:
    """The figure of standing height ``height`` px, rotated by ``angle_deg`` about its centre, centred on
    ``anchor`` = (y, x). ``top_down``: an aerial view (head and shoulders disc plus a short body ellipse)."""
    caps = _top_down(pose) if top_down else capsules(pose)
    a = np.deg2rad(angle_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    pts = np.array([[c[0], c[1], c[2], c[3]] for c in caps]).reshape(-1, 2)  # (x, y) pairs
    centre = 0.5 * (pts.min(0) + pts.max(0))
    pts = ((pts - centre) @ rot.T) * height
    radii = np.array([c[4] for c in caps]) * height
    half = np.abs(pts).max() + radii.max() + 2
    size = int(np.ceil(2 * half)) + 1
    cy, cx = anchor
    y0, x0 = int(np.floor(cy - half)), int(np.floor(cx - half))
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    yy += y0 - cy + 0.5
    xx += x0 - cx + 0.5
    parts = {p: np.zeros((size, size), bool) for p in PARTS}
    for i, c in enumerate(caps):
        (ax, ay), (bx, by) = pts[2 * i], pts[2 * i + 1]
        parts[c[5]] |= _segment_distance(xx, yy, ax, ay, bx, by) <= max(radii[i], 0.6)
    return Figure(y0=y0, x0=x0, parts=parts)


def _top_down(pose: str) -> list[tuple]:
    """Seen from above: standing = head/shoulder blob, sitting = blob plus legs, lying = the whole body."""
    if pose == "standing":
        return [(0.0, 0.0, 0.0, 0.05, 0.12, "head"), (-0.12, 0.05, 0.12, 0.05, 0.08, "top")]
    if pose == "sitting":
        return [(0.0, 0.0, 0.0, 0.05, 0.1, "head"), (0.0, 0.08, 0.0, 0.35, 0.1, "bottom")]
    return capsules("standing")


def _segment_distance(xx, yy, ax, ay, bx, by) -> np.ndarray:
    dx, dy = bx - ax, by - ay
    den = dx * dx + dy * dy
    t = np.clip(((xx - ax) * dx + (yy - ay) * dy) / den, 0, 1) if den > 0 else np.zeros_like(xx)
    return np.hypot(xx - (ax + t * dx), yy - (ay + t * dy))


def clothing(rng: np.random.Generator, camouflage_share: float) -> dict[str, np.ndarray]:
    """Part colours: camouflage with probability ``camouflage_share``, else bright."""
    pal = CAMO if rng.random() < camouflage_share else BRIGHT
    return {
        "head": np.asarray(SKIN[rng.integers(len(SKIN))]),
        "top": np.asarray(pal[rng.integers(len(pal))]) + rng.normal(0, 0.03, 3),
        "bottom": np.asarray(pal[rng.integers(len(pal))]) + rng.normal(0, 0.03, 3),
    }
