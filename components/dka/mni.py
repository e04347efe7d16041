"""The medical task from real anatomy: axial MNI152 slices with an inserted low-contrast lesion, four labels.

Labels: 0 no lesion, 1 lesion in left-hemisphere grey matter, 2 right-hemisphere grey matter, 3 white matter
(grey/white located with nilearn's MNI152 GM/WM probability templates; the hemisphere from the template's affine,
world x < 0 is left). Each image: one axial slice of the T1 template, resampled to 72x72, a Gaussian hypo-intense
lesion (contrast ``lesion_contrast`` of the local intensity), then elastic, affine (rotation, scale, shift) and
intensity (gamma, gain, bias field, noise) augmentation and a central 64x64 crop. The shift moves the midline,
so the side needs global context and the lesion a local cue.

Train and test images come from disjoint sets of axial slices with a gap between them (``slice_split``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from components.data.mni152 import load_templates  # noqa: F401  (shared with MedGMAE; flows call mni.load_templates)
from components.errors import DataError

LABELS = ("none", "left-gm", "right-gm", "wm")
WORK, CROP, PAD = 72, 64, 240


@dataclass(frozen=True)
class TaskConfig:
    z_lo: int = 50
    z_hi: int = 130
    lesion_sigma: float = 1.4  # px at the 72-px scale
    lesion_contrast: float = 0.35
    max_rotation: float = 10.0  # degrees
    max_shift: float = 4.0  # px
    scale_range: float = 0.08
    elastic_alpha: float = 1.5  # px of displacement
    noise_sd: float = 0.04


def slice_split(z_lo: int, z_hi: int) -> dict[str, list[int]]:
    """Axial indices: within each 8 consecutive slices, 5 train, 1 test, with an unused slice on each side of it."""
    if z_hi - z_lo < 16:
        raise DataError(f"slice range [{z_lo}, {z_hi}) is too short (need at least 16 slices)")
    ks = range(z_lo, z_hi)
    return {"train": [k for k in ks if (k - z_lo) % 8 < 5], "test": [k for k in ks if (k - z_lo) % 8 == 6]}


def _to_work(sl: np.ndarray) -> np.ndarray:
    """(x, y) slice -> image rows = y (anterior up), cols = x (left at col 0), padded to 240 and zoomed to 72."""
    img = sl.T[::-1]
    out = np.zeros((PAD, PAD), np.float32)
    r0, c0 = (PAD - img.shape[0]) // 2, (PAD - img.shape[1]) // 2
    out[r0 : r0 + img.shape[0], c0 : c0 + img.shape[1]] = img
    return ndimage.zoom(out, WORK / PAD, order=1)


def prepare_slices(t1, gm, wm, affine, ks: list[int]) -> dict[int, dict[str, np.ndarray]]:
    """Per axial index: T1/GM/WM at the working scale and each pixel's world x (mm)."""
    nx = t1.shape[0]
    xw = affine[0, 0] * np.arange(nx) + affine[0, 3]  # world x of every column index
    xmap = _to_work(np.repeat(xw[:, None], t1.shape[1], 1).astype(np.float32) + 1000.0) - 1000.0
    return {
        k: {"t1": _to_work(t1[:, :, k]), "gm": _to_work(gm[:, :, k]), "wm": _to_work(wm[:, :, k]), "x": xmap}
        for k in ks
    }


def _candidates(s: dict[str, np.ndarray], label: int) -> np.ndarray:
    r, c = np.mgrid[:WORK, :WORK]
    inside = (np.abs(r - WORK / 2) < CROP / 2 - 8) & (np.abs(c - WORK / 2) < CROP / 2 - 8)
    gm = (s["gm"] > 0.55) & (s["wm"] < 0.3) & (s["t1"] > 0.2)
    sides = {1: gm & (s["x"] < -4), 2: gm & (s["x"] > 4), 3: (s["wm"] > 0.8) & (s["gm"] < 0.2)}
    return np.argwhere(sides[label] & inside)


def _augment(img: np.ndarray, rng: np.random.Generator, cfg: TaskConfig) -> np.ndarray:
    centre = (WORK - 1) / 2
    th = np.deg2rad(rng.uniform(-cfg.max_rotation, cfg.max_rotation))
    sc = 1 + rng.uniform(-cfg.scale_range, cfg.scale_range)
    rot = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]]) / sc
    shift = rng.uniform(-cfg.max_shift, cfg.max_shift, 2)
    r, c = np.mgrid[:CROP, :CROP].astype(np.float32) + (WORK - CROP) / 2
    coords = np.einsum("ij,jhw->ihw", rot, np.stack([r - centre, c - centre])) + centre - shift[:, None, None]
    disp = ndimage.gaussian_filter(rng.normal(0, 1, (2, CROP, CROP)), (0, 4, 4))
    disp *= cfg.elastic_alpha / max(float(np.abs(disp).max()), 1e-6)
    out = ndimage.map_coordinates(img, coords + disp, order=1, mode="constant")
    out = np.clip(out, 0, None) ** rng.uniform(0.8, 1.25)
    bias = ndimage.zoom(rng.normal(0, 0.08, (3, 3)), CROP / 3, order=1)[:CROP, :CROP]
    out = out * rng.uniform(0.85, 1.15) * (1 + bias) + rng.normal(0, cfg.noise_sd, out.shape)
    return out.astype(np.float32)


def make_image(
    s: dict[str, np.ndarray], label: int, rng: np.random.Generator, cfg: TaskConfig
) -> tuple[np.ndarray, list]:
    """One 64x64 image in [-1, 1]-ish scale and the lesion centre (row, col at the 72-px scale; [] if none)."""
    img = s["t1"].copy()
    where: list = []
    if label:
        cand = _candidates(s, label)
        if not len(cand):
            raise DataError(f"no lesion site for label {LABELS[label]} in this slice")
        r0, c0 = cand[rng.integers(len(cand))]
        r, c = np.mgrid[:WORK, :WORK]
        blob = np.exp(-((r - r0) ** 2 + (c - c0) ** 2) / (2 * cfg.lesion_sigma**2))
        img = img * (1 - cfg.lesion_contrast * blob)
        where = [int(r0), int(c0)]
    return (_augment(img, rng, cfg) - 0.5) / 0.5, where


def usable(slices: dict[int, dict], ks: list[int]) -> list[int]:
    """Slices with a lesion site for every label."""
    return [k for k in ks if all(len(_candidates(slices[k], lab)) for lab in (1, 2, 3))]


def make_pool(slices: dict[int, dict], ks: list[int], n: int, seed: int, cfg: TaskConfig) -> dict[str, np.ndarray]:
    """``n`` class-balanced images (labels cycle 0..3, then shuffled) from the slices ``ks``."""
    ks = usable(slices, ks)
    if not ks:
        raise DataError("no axial slice in the range has lesion sites for all four labels")
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % len(LABELS))
    xs, zs = np.empty((n, 1, CROP, CROP), np.float32), np.empty(n, np.int64)
    for i, lab in enumerate(labels):
        k = ks[rng.integers(len(ks))]
        xs[i, 0], _ = make_image(slices[k], int(lab), rng, cfg)
        zs[i] = k
    return {"x": xs, "y": labels.astype(np.int64), "slice": zs}


def fraction_indices(y: np.ndarray, frac: float, seed: int) -> np.ndarray:
    """A class-stratified subset of ``round(frac * n)`` indices (at least one per class), drawn by ``seed``."""
    rng = np.random.default_rng(seed)
    classes = np.unique(y)
    n = max(len(classes), int(round(frac * len(y))))
    per = [n // len(classes) + (i < n % len(classes)) for i in range(len(classes))]
    out = [
        rng.choice(np.flatnonzero(y == c), size=min(k, int((y == c).sum())), replace=False)
        for c, k in zip(classes, per)
    ]
    return np.sort(np.concatenate(out))
