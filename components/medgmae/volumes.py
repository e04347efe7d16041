"""3-D volumes: random crops of the MNI152 T1 template (2 mm) with GM / WM / other labels, spatially disjoint train
and test slabs, MONAI augmentation, and procedural ellipsoid phantoms.

Labels from nilearn's probability templates: GM (1) where p_GM > 0.5 and p_GM >= p_WM, WM (2) where p_WM > 0.5
and p_WM > p_GM, other (0) elsewhere. The T1 is scaled to [0, 1] by its maximum.

Slabs along z (axis 2, inferior -> superior): test crops lie wholly in the top ``test_share`` of z, training crops
wholly below it, so no test voxel is ever in a training crop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from components.errors import DataError

LABELS = ("other", "gm", "wm")


@dataclass(frozen=True)
class Anatomy:
    t1: np.ndarray  # (X, Y, Z) float32 in [0, 1]
    label: np.ndarray  # (X, Y, Z) int64 in {0, 1, 2}
    mask: np.ndarray  # (X, Y, Z) bool brain mask


def load_anatomy(resolution: int = 2) -> Anatomy:
    """The MNI152 T1 template in [0, 1], its 3-class label map and brain mask (nilearn, offline)."""
    from components.data.mni152 import load_volumes

    v = load_volumes(resolution)
    return anatomy_from(v["t1"], v["gm"], v["wm"], v["mask"])


def anatomy_from(t1: np.ndarray, gm: np.ndarray, wm: np.ndarray, mask: np.ndarray) -> Anatomy:
    t1 = np.clip(t1, 0, None)
    top = float(t1.max())
    if not np.isfinite(top) or top <= 0:
        raise DataError("MNI152 T1 template: no positive intensity")
    label = np.zeros(t1.shape, np.int64)
    label[(gm > 0.5) & (gm >= wm)] = 1
    label[(wm > 0.5) & (wm > gm)] = 2
    return Anatomy((t1 / top).astype(np.float32), label, mask > 0.5)


def slab_ranges(depth: int, size: int, test_share: float) -> dict[str, tuple[int, int]]:
    """Allowed crop starts along z: train [0, cut - size], test [cut, depth - size], cut = round((1-share) depth)."""
    cut = int(round((1 - test_share) * depth))
    out = {"train": (0, cut - size), "test": (cut, depth - size)}
    for k, (lo, hi) in out.items():
        if hi < lo:
            raise DataError(
                f"test_share {test_share}: the {k} slab has {cut if k == 'train' else depth - cut} z slices, "
                f"fewer than a {size}-voxel crop"
            )
    return out


def crop_starts(
    anat: Anatomy, size: int, z_range: tuple[int, int], n: int, rng: np.random.Generator, min_brain: float
) -> np.ndarray:
    """``n`` crop corners (x, y, z) with z in ``z_range`` and at least ``min_brain`` of the crop inside the brain."""
    sx, sy, _ = anat.t1.shape
    out, tries = [], 0
    while len(out) < n:
        tries += 1
        if tries > 200 * n + 1000:
            raise DataError(f"no {size}^3 crop with brain share >= {min_brain} in z range {z_range}")
        c = (rng.integers(0, sx - size + 1), rng.integers(0, sy - size + 1), rng.integers(z_range[0], z_range[1] + 1))
        if anat.mask[c[0] : c[0] + size, c[1] : c[1] + size, c[2] : c[2] + size].mean() >= min_brain:
            out.append(c)
    return np.asarray(out, np.int64).reshape(-1, 3)


def cut(anat: Anatomy, starts: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Crops (N, 1, S, S, S) of the T1 and of the labels at ``starts``."""
    x = np.stack([anat.t1[a : a + size, b : b + size, c : c + size] for a, b, c in starts])[:, None]
    y = np.stack([anat.label[a : a + size, b : b + size, c : c + size] for a, b, c in starts])[:, None]
    return x.astype(np.float32), y.astype(np.int64)


def augmenter(seed: int, elastic: float = 0.25):
    """MONAI dictionary transforms on {'image', 'label'} (label optional): flips on each axis, then one resampling,
    either a small affine (rotation 0.15 rad, scale 0.1, shift 2 voxels) or, with probability ``elastic``, the same
    affine composed with an elastic deformation (sigma 5-7 voxels, magnitude 1-2), then gamma on the image."""
    from monai.transforms import Compose, OneOf, Rand3DElasticd, RandAdjustContrastd, RandAffined, RandFlipd

    def build(keys: tuple[str, ...]):
        modes = tuple("bilinear" if k == "image" else "nearest" for k in keys)
        aff = {"rotate_range": (0.15,) * 3, "scale_range": (0.1,) * 3, "translate_range": (2,) * 3}
        ts = [RandFlipd(keys, prob=0.5, spatial_axis=a) for a in (0, 1, 2)]
        el = Rand3DElasticd(keys, sigma_range=(5, 7), magnitude_range=(1, 2), prob=1.0, mode=modes,
                            padding_mode="border", **aff)  # fmt: skip
        af = RandAffined(keys, prob=1.0, mode=modes, padding_mode="border", **aff)
        ts.append(OneOf([el, af], weights=[elastic, 1 - elastic]) if 0 < elastic < 1 else (el if elastic else af))
        ts.append(RandAdjustContrastd(("image",), prob=0.8, gamma=(0.7, 1.5)))
        c = Compose(ts)
        c.set_random_state(seed=seed)
        return c

    return build


def augment(x: np.ndarray, y: np.ndarray | None, seed: int, elastic: float = 0.25):
    """Augmented copies of crops ``x`` (N, 1, S, S, S) (and labels ``y``): one MONAI pipeline seeded by ``seed``."""
    keys = ("image",) if y is None else ("image", "label")
    tf = augmenter(seed, elastic)(keys)
    xs, ys = np.empty_like(x), None if y is None else np.empty_like(y)
    for i in range(len(x)):
        d = {"image": x[i]} | ({} if y is None else {"label": y[i].astype(np.float32)})
        out = tf(d)
        xs[i] = np.clip(np.asarray(out["image"], np.float32), 0, 1)
        if ys is not None:
            ys[i] = np.rint(np.asarray(out["label"])).astype(np.int64)
    return xs, ys


def phantoms(n: int, size: int, rng: np.random.Generator, noise: float = 0.02) -> np.ndarray:
    """``n`` procedural volumes (N, 1, S, S, S) in [0, 1]: a body ellipsoid holding 3-6 rotated ellipsoid
    "organs" of random intensity, slightly smoothed, plus Gaussian noise."""
    from scipy import ndimage

    g = (np.arange(size) + 0.5) / size
    pts = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1)
    out = np.empty((n, 1, size, size, size), np.float32)
    for i in range(n):
        v = np.zeros((size,) * 3, np.float32)
        body = (((pts - 0.5) / rng.uniform(0.35, 0.5, 3)) ** 2).sum(-1) <= 1
        v[body] = rng.uniform(0.15, 0.35)
        for _ in range(rng.integers(3, 7)):
            q = rng.normal(size=4)
            q /= np.linalg.norm(q)
            w, a, b, c = q
            rot = np.array(
                [
                    [1 - 2 * (b * b + c * c), 2 * (a * b - w * c), 2 * (a * c + w * b)],
                    [2 * (a * b + w * c), 1 - 2 * (a * a + c * c), 2 * (b * c - w * a)],
                    [2 * (a * c - w * b), 2 * (b * c + w * a), 1 - 2 * (a * a + b * b)],
                ]
            )
            d = (pts - rng.uniform(0.3, 0.7, 3)) @ rot
            inside = ((d / rng.uniform(0.06, 0.2, 3)) ** 2).sum(-1) <= 1
            v[inside & body] = rng.uniform(0.4, 1.0)
        v = ndimage.gaussian_filter(v, 0.7) + rng.normal(0, noise, v.shape)
        out[i, 0] = np.clip(v, 0, 1)
    return out


def fraction_count(n_pool: int, fraction: float) -> int:
    """Labelled crops at ``fraction`` of a pool of ``n_pool`` (at least 2)."""
    if not 0 < fraction <= 1:
        raise DataError(f"label fraction {fraction}: must be in (0, 1]")
    return max(2, int(round(fraction * n_pool)))
