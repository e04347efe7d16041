"""nilearn's bundled MNI152 templates (offline): the T1 template, the GM/WM probability templates and the brain
mask, as float32 volumes (x, y, z) with their affine. Shared by DKA (2-D slices) and MedGMAE (3-D crops)."""

from __future__ import annotations

import numpy as np

from components.errors import DataError

RESOLUTIONS = (1, 2)


def load_volumes(resolution: int = 1) -> dict[str, np.ndarray]:
    """``t1``, ``gm``, ``wm``, ``mask`` (x, y, z) and ``affine`` at ``resolution`` mm (1: 197x233x189, 2: 99x117x95)."""
    if resolution not in RESOLUTIONS:
        raise DataError(f"MNI152 resolution {resolution!r}: nilearn ships {list(RESOLUTIONS)} mm")
    from nilearn import datasets

    imgs = {
        "t1": datasets.load_mni152_template(resolution=resolution),
        "gm": datasets.load_mni152_gm_template(resolution=resolution),
        "wm": datasets.load_mni152_wm_template(resolution=resolution),
        "mask": datasets.load_mni152_brain_mask(resolution=resolution),
    }
    vols = {k: np.asarray(i.get_fdata(), np.float32) for k, i in imgs.items()}
    if len({v.shape for v in vols.values()}) != 1 or vols["t1"].ndim != 3:
        raise DataError(f"nilearn MNI152 templates: shapes {[v.shape for v in vols.values()]} differ or are not 3-D")
    return {**vols, "affine": np.asarray(imgs["t1"].affine)}


def load_templates(resolution: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """T1, GM and WM volumes (x, y, z) and the affine (DKA's view of :func:`load_volumes`)."""
    v = load_volumes(resolution)
    return v["t1"], v["gm"], v["wm"], v["affine"]
