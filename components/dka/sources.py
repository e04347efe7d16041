"""Data and model sources: Debian's Fashion-MNIST idx files (pretraining), and the ``full`` profile's loaders.

``full`` names paper-scale sources behind config: a timm ViT-B/16 (``timm/vit_base_patch16_224...``), MedMNIST
``.npz`` files (BreastMNIST, DermaMNIST: keys ``train_images``/``train_labels``/``test_images``/``test_labels``)
and ImageFolder trees (BUSI, ISIC-2019: ``<root>/<split>/<class>/*.png``). Each is read in its real format from
a local path; an id that is not a local path needs the network and fails at once, naming the id, when offline.
"""

from __future__ import annotations

import gzip
import os
import struct
from pathlib import Path

import numpy as np

from components.errors import DataError, OfflineError
from components.inputs import load_npz

FASHION_DIR = "/usr/share/datasets/fashion-mnist"
FASHION_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}


def _read_idx(path: Path) -> np.ndarray:
    if not path.is_file():
        raise DataError(f"{path}: file not found (Debian package dataset-fashion-mnist; `make setup` installs it)")
    try:
        with gzip.open(path, "rb") as fh:
            raw = fh.read()
        zero, dtype, ndim = struct.unpack(">HBB", raw[:4])
        dims = struct.unpack(">" + "I" * ndim, raw[4 : 4 + 4 * ndim])
    except (OSError, EOFError, struct.error) as exc:
        raise DataError(f"{path}: not a gzipped idx file ({type(exc).__name__})") from None
    if zero != 0 or dtype != 0x08:
        raise DataError(f"{path}: not an unsigned-byte idx file (magic {zero:#x}/{dtype:#x})")
    data = np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise DataError(f"{path}: {data.size} bytes of data but the header says {dims}")
    return data.reshape(dims)


def load_fashion(split: str = "train", root: str | os.PathLike = FASHION_DIR) -> tuple[np.ndarray, np.ndarray]:
    """(images uint8 (N, 28, 28), labels int64 (N,)) of one split."""
    img_f, lab_f = FASHION_FILES[split]
    x, y = _read_idx(Path(root) / img_f), _read_idx(Path(root) / lab_f)
    if x.ndim != 3 or y.ndim != 1 or len(x) != len(y):
        raise DataError(f"{root}: images {x.shape} and labels {y.shape} do not match")
    return x.copy(), y.astype(np.int64)


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false")


def load_medmnist(path_or_id: str) -> dict[str, np.ndarray]:
    """A MedMNIST ``.npz`` (local path) as float32 (N, 1, H, W) in [-1, 1] and int64 labels per split."""
    path = Path(path_or_id)
    if not path.is_file():
        raise OfflineError(
            f"medmnist {path_or_id!r}: not a local .npz file, and this build does not download "
            "(fetch it with the `medmnist` package, then pass its path)"
        )
    try:
        with load_npz(path) as z:
            out = {}
            for split in ("train", "val", "test"):
                if f"{split}_images" in z:
                    x = z[f"{split}_images"].astype(np.float32) / 255.0
                    x = x.mean(-1) if x.ndim == 4 else x  # RGB (DermaMNIST) -> grey
                    out[split] = ((x[:, None] - 0.5) / 0.5, z[f"{split}_labels"].reshape(-1).astype(np.int64))
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: not a MedMNIST .npz ({type(exc).__name__})") from None
    if "train" not in out or "test" not in out:
        raise DataError(f"{path}: no train_images/test_images arrays (a MedMNIST .npz has them)")
    return {f"{s}_{k}": v for s, (x, y) in out.items() for k, v in (("x", x), ("y", y))}


def load_image_folder(root: str | os.PathLike, size: int = 64) -> dict[str, np.ndarray]:
    """An ImageFolder tree (BUSI, ISIC-2019 after conversion): ``root/{train,test}/<class>/*.png|jpg``."""
    from PIL import Image, UnidentifiedImageError

    root = Path(root)
    if not root.is_dir():
        raise OfflineError(
            f"image folder {str(root)!r}: not a local folder and downloading is off; "
            "convert the dataset to <root>/{{train,test}}/<class>/ first"
        )
    classes = sorted(p.name for p in (root / "train").iterdir() if p.is_dir()) if (root / "train").is_dir() else []
    if not classes:
        raise DataError(f"{root}/train: no class folders")
    out = {}
    for split in ("train", "test"):
        xs, ys = [], []
        for ci, c in enumerate(classes):
            for f in sorted((root / split / c).glob("*")):
                try:
                    im = Image.open(f).convert("L").resize((size, size))
                except (UnidentifiedImageError, OSError):
                    raise DataError(f"{f}: not an image") from None
                xs.append((np.asarray(im, np.float32) / 255.0 - 0.5) / 0.5)
                ys.append(ci)
        if not xs:
            raise DataError(f"{root}/{split}: no images")
        out[f"{split}_x"], out[f"{split}_y"] = np.stack(xs)[:, None], np.asarray(ys, np.int64)
    return out


def load_timm_vit(model_id: str):
    """A timm ViT by id (``full``): needs ``timm`` and, for an id that is not cached, the network."""
    if _offline():
        raise OfflineError(
            f"backbone {model_id!r}: a timm/Hugging Face id needs the network, and HF_HUB_OFFLINE=1 is set"
        )
    try:
        import timm
    except ImportError:
        raise OfflineError(f"backbone {model_id!r}: needs the `timm` package (not installed here)") from None
    return timm.create_model(model_id, pretrained=True)
