"""The ``full`` profile's volumes: a folder of NIfTI files in the Medical Segmentation Decathlon layout
(``imagesTr/*.nii.gz`` with the same names under ``labelsTr/``, as MONAI's ``DecathlonDataset`` downloads them),
read with nibabel. A task id that is not a local folder needs the network and fails at once, naming it."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from components.errors import DataError, OfflineError


def _read(nib, path: Path) -> np.ndarray:
    try:
        return np.asarray(nib.load(path).get_fdata())
    except Exception as exc:  # nibabel raises several types for a file that is not NIfTI
        raise DataError(f"{path}: not a NIfTI volume ({type(exc).__name__})") from None


def load_nifti_folder(root: str | os.PathLike, max_cases: int | None = None) -> list[dict[str, np.ndarray]]:
    """Per case: ``image`` float32 (X, Y, Z) scaled to [0, 1] (0.5-99.5 percentiles) and ``label`` int64."""
    import nibabel as nib

    root = Path(root)
    if not root.is_dir():
        raise OfflineError(
            f"nifti source {str(root)!r}: not a local folder, and this build does not download "
            "(fetch a Decathlon task with monai.apps.DecathlonDataset(download=True) on a connected machine)"
        )
    images = sorted((root / "imagesTr").glob("*.nii*"))
    if not images:
        raise DataError(f"{root}/imagesTr: no .nii/.nii.gz files")
    out = []
    for f in images[:max_cases]:
        lab = root / "labelsTr" / f.name
        if not lab.is_file():
            raise DataError(f"{lab}: missing label volume for {f.name}")
        try:
            img = np.asarray(nib.load(f).get_fdata(), np.float32)
            seg = np.asarray(nib.load(lab).get_fdata())
        except Exception as exc:  # nibabel raises several types for a file that is not NIfTI
            raise DataError(
                f"{f if 'img' not in locals() else lab}: not a NIfTI volume ({type(exc).__name__})"
            ) from None
        if img.ndim != 3 or img.shape != seg.shape:
            raise DataError(f"{f.name}: image {img.shape} and label {seg.shape} must be the same 3-D shape")
        lo, hi = np.percentile(img, [0.5, 99.5])
        out.append({"image": np.clip((img - lo) / max(hi - lo, 1e-6), 0, 1), "label": np.rint(seg).astype(np.int64)})
    return out
