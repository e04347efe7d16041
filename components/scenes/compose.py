"""Scene composition: layers painted back to front into an RGB canvas and an id buffer, so each person's
visibility is (its pixels still showing) / (its full-body pixels), measured, not assumed."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from components.scenes import people as P
from components.scenes.textures import canopy_shadow, flat, ground, smooth_noise

OCCLUDER = -1
VIS_BINS = (100, 70, 40, 20)
VIS_EDGES = (0.85, 0.55, 0.30)  # nearest-label binning: >= .85 -> 100, >= .55 -> 70, >= .30 -> 40, else 20
MIN_VISIBILITY = 0.10  # below this an instance is dropped (the card)


def visibility_bin(ratio: float) -> int:
    """The card's label for a visible/full pixel ratio (midpoints between 100, 70, 40 and 20 percent)."""
    for edge, label in zip(VIS_EDGES, VIS_BINS):
        if ratio >= edge:
            return label
    return VIS_BINS[-1]


@dataclass(frozen=True)
class DomainSpec:
    """What a domain's scenes contain; ``forest``, ``urban`` and ``aerial`` are in :data:`DOMAINS`."""

    backgrounds: tuple[str, ...]  # texture names or "flat"
    trunks: tuple[int, int]
    trunk_width: tuple[int, int]
    trunk_front: float  # share of trunks drawn in front of people
    trunk_colour: tuple[float, float, float]
    foliage: tuple[int, int]  # clusters of green ellipses drawn in front of people
    foliage_near: float  # share of clusters centred near a person
    people: tuple[int, int]
    poses: tuple[str, ...]
    height: tuple[float, float]  # standing height in px
    camouflage: float
    min_visibility: float  # urban: occluders are thinned until every person keeps this share
    shadow: float
    top_down: bool = False
    crowns: tuple[int, int] = (0, 0)  # aerial: tree crowns (discs) over people


DOMAINS = {
    "forest": DomainSpec(
        ("grass", "gravel"),
        (5, 20),
        (2, 9),
        0.35,
        (0.30, 0.22, 0.15),
        (1, 5),
        0.5,
        (1, 3),
        P.POSES,
        (16, 70),
        0.6,
        MIN_VISIBILITY,
        0.45,
    ),
    "urban": DomainSpec(
        ("flat", "brick"),
        (0, 3),
        (1, 3),
        0.5,
        (0.45, 0.45, 0.47),
        (0, 0),
        0.0,
        (1, 4),
        ("standing",),
        (16, 70),
        0.1,
        0.55,
        0.1,
    ),
    "aerial": DomainSpec(
        ("grass", "gravel"),
        (0, 0),
        (1, 1),
        0.0,
        (0.3, 0.22, 0.15),
        (0, 0),
        0.0,
        (1, 4),
        P.POSES,
        (4, 10),
        0.5,
        MIN_VISIBILITY,
        0.3,
        top_down=True,
        crowns=(3, 10),
    ),
}


class Canvas:
    def __init__(self, rgb: np.ndarray):
        self.rgb = rgb
        self.ids = np.zeros(rgb.shape[:2], np.int32)

    def paint(self, mask: np.ndarray, y0: int, x0: int, colour, ident: int) -> np.ndarray:
        """Paint ``mask`` (local window at (y0, x0)) with ``colour`` (RGB or an image the window's size);
        returns the part of the mask that landed on the canvas, as a full-canvas bool array."""
        H, W = self.ids.shape
        h, w = mask.shape
        ya, xa, yb, xb = max(y0, 0), max(x0, 0), min(y0 + h, H), min(x0 + w, W)
        full = np.zeros((H, W), bool)
        if ya >= yb or xa >= xb:
            return full
        m = mask[ya - y0 : yb - y0, xa - x0 : xb - x0]
        col = np.asarray(colour, np.float32)
        if col.ndim == 3:
            col = col[ya - y0 : yb - y0, xa - x0 : xb - x0][m]
        self.rgb[ya:yb, xa:xb][m] = col
        self.ids[ya:yb, xa:xb][m] = ident
        full[ya:yb, xa:xb] = m
        return full


def _trunk(rng, c: Canvas, spec: DomainSpec, size: int) -> None:
    w = int(rng.integers(spec.trunk_width[0], spec.trunk_width[1] + 1))
    xc, slope = rng.uniform(0, size), rng.normal(0, 0.05)
    base = int(rng.uniform(0.35, 1.0) * size)
    yy, xx = np.mgrid[0:base, 0:size]
    mask = np.abs(xx - (xc + slope * (yy - base))) <= w / 2
    streak = 1 + 0.25 * (rng.random(size) - 0.5)[None, :] + 0.1 * (rng.random((base, 1)) - 0.5)
    tex = np.clip(np.asarray(spec.trunk_colour)[None, None] * rng.uniform(0.7, 1.2) * streak[..., None], 0, 1)
    c.paint(mask, 0, 0, tex, OCCLUDER)


def _foliage(rng, c: Canvas, centre, size: int) -> None:
    cy, cx = centre
    for _ in range(int(rng.integers(2, 6))):
        ry, rx = rng.uniform(3, 8, 2)
        a = rng.uniform(0, np.pi)
        ey, ex = cy + rng.normal(0, 6), cx + rng.normal(0, 6)
        r = int(max(ry, rx)) + 1
        yy, xx = np.mgrid[-r : r + 1, -r : r + 1].astype(np.float32)
        u, v = xx * np.cos(a) + yy * np.sin(a), -xx * np.sin(a) + yy * np.cos(a)
        mask = (u / rx) ** 2 + (v / ry) ** 2 <= 1
        green = np.array([rng.uniform(0.12, 0.3), rng.uniform(0.28, 0.5), rng.uniform(0.06, 0.18)])
        shade = 1 + 0.3 * (rng.random(mask.shape) - 0.5)
        c.paint(mask, int(ey) - r, int(ex) - r, np.clip(green * shade[..., None], 0, 1), OCCLUDER)


def _crown(rng, c: Canvas, centre, size: int) -> None:
    r = rng.uniform(5, 16)
    ri = int(r) + 1
    yy, xx = np.mgrid[-ri : ri + 1, -ri : ri + 1]
    mask = yy**2 + xx**2 <= r * r
    green = np.array([rng.uniform(0.1, 0.22), rng.uniform(0.22, 0.4), rng.uniform(0.05, 0.14)])
    shade = 0.75 + 0.5 * np.clip(1 - np.hypot(yy, xx) / r, 0, 1)
    c.paint(mask, int(centre[0]) - ri, int(centre[1]) - ri, np.clip(green * shade[..., None], 0, 1), OCCLUDER)


def _person(rng, spec: DomainSpec, size: int, margin: int):
    pose = spec.poses[int(rng.integers(len(spec.poses)))]
    h = rng.uniform(*spec.height)
    angle = (
        rng.uniform(-180, 180)
        if spec.top_down
        else (rng.choice([-1, 1]) * 90 + rng.uniform(-30, 30) if pose == "lying" else rng.uniform(-8, 8))
    )
    for _ in range(50):
        anchor = (rng.uniform(margin, size - margin), rng.uniform(margin, size - margin))
        if not spec.top_down:  # under-canopy / street view: people stand on the lower part of the frame
            anchor = (rng.uniform(0.35, 1.0) * (size - 2 * margin) + margin, anchor[1])
        fig = P.rasterise(pose, h, angle, anchor, top_down=spec.top_down)
        ys, xs = np.nonzero(fig.mask)
        if (
            ys.min() + fig.y0 >= margin
            and ys.max() + fig.y0 < size - margin
            and xs.min() + fig.x0 >= margin
            and xs.max() + fig.x0 < size - margin
        ):
            return pose, fig
        h = max(spec.height[0], h * 0.9)
    return None


def compose(rng: np.random.Generator, spec: DomainSpec, size: int, margin: int, n_occluder_cap: int | None = None):
    """One layout on a ``size`` canvas; people lie at least ``margin`` px inside it (so a jittered crop keeps
    them whole). Returns (rgb float image, id buffer, persons: list of (pose, full mask))."""
    bg = spec.backgrounds[int(rng.integers(len(spec.backgrounds)))]
    rgb = flat(rng, size) if bg == "flat" else ground(rng, bg, size)
    c = Canvas(rgb)
    n_trunks = int(rng.integers(spec.trunks[0], spec.trunks[1] + 1))
    front = rng.random(n_trunks) < spec.trunk_front
    if n_occluder_cap is not None:
        front &= np.cumsum(front) <= n_occluder_cap
    for _ in range(int((~front).sum())):
        _trunk(rng, c, spec, size)
    persons = []
    for pid in range(1, int(rng.integers(spec.people[0], spec.people[1] + 1)) + 1):
        placed = _person(rng, spec, size, margin)
        if placed is None:
            continue
        pose, fig = placed
        colours = P.clothing(rng, spec.camouflage)
        full = np.zeros(c.ids.shape, bool)
        for part, m in fig.parts.items():
            blot = 1 + 0.35 * (smooth_noise(rng, m.shape, 4) - 0.5) if part != "head" else np.ones(m.shape)
            full |= c.paint(m, fig.y0, fig.x0, np.clip(colours[part] * blot[..., None], 0, 1), pid)
        persons.append((pose, full))
    for _ in range(int(front.sum())):
        _trunk(rng, c, spec, size)
    n_fol = int(rng.integers(spec.foliage[0], spec.foliage[1] + 1))
    n_crowns = int(rng.integers(spec.crowns[0], spec.crowns[1] + 1))
    if n_occluder_cap is not None:
        n_fol, n_crowns = min(n_fol, n_occluder_cap), min(n_crowns, n_occluder_cap)
    for _ in range(n_fol):
        _foliage(rng, c, _near(rng, persons, spec.foliage_near, size), size)
    for _ in range(n_crowns):
        _crown(rng, c, _near(rng, persons, 0.5, size), size)
    rgb = c.rgb * canopy_shadow(rng, size, spec.shadow)[..., None]
    return rgb, c.ids, persons


def _near(rng, persons, share: float, size: int):
    if persons and rng.random() < share:
        ys, xs = np.nonzero(persons[int(rng.integers(len(persons)))][1])
        if ys.size:
            return ys.mean() + rng.normal(0, 4), xs.mean() + rng.normal(0, 4)
    return rng.uniform(0, size), rng.uniform(0, size)
