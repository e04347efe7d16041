"""The paper's data: Hugging Face ``etri/ForestPersons`` (full profile), read into the same records as the
procedural sets.

The card marks the schema unverified; this loader reads the COCO layout the paper describes (boxes with pose and
visibility labels, splits by sequence): ``annotations/{train,val,test}.json`` with COCO ``images`` /
``annotations`` (``pose`` and ``visibility`` on each annotation, or under its ``attributes``) and image files
relative to the repo root or ``images/``. Images are resized to ``size`` x ``size`` with their boxes. The
sequence of an image is its ``sequence`` / ``video_id`` / ``video`` field, else its file's folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from components.errors import DataError

SPLITS = ("train", "val", "test")
POSE_NAMES = {
    "stand": "standing",
    "standing": "standing",
    "sit": "sitting",
    "sitting": "sitting",
    "lie": "lying",
    "lying": "lying",
}


def snapshot(hf_id: str) -> Path:
    """The dataset's local snapshot; offline (HF_HUB_OFFLINE=1) without a cached copy it fails at once."""
    try:
        from huggingface_hub import snapshot_download

        return Path(
            snapshot_download(hf_id, repo_type="dataset", local_files_only=os.environ.get("HF_HUB_OFFLINE") == "1")
        )
    except Exception as exc:
        raise DataError(
            f"Hugging Face dataset {hf_id!r} is not available ({type(exc).__name__}); it needs the "
            "network or a cached copy (or set source.local_dir to a local copy)"
        ) from None


def _attr(a: dict, key: str):
    return a.get(key, (a.get("attributes") or {}).get(key))


def _read_image(path: Path, size: int) -> tuple[np.ndarray, float, float]:
    import cv2

    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise DataError(f"{path}: not an image OpenCV can read")
    h, w = img.shape[:2]
    return cv2.resize(img, (size, size), interpolation=cv2.INTER_AREA)[..., ::-1], size / w, size / h


def load_forestpersons(hf_id: str, *, local_dir: str | None, size: int, max_images: int):
    """(images, image records, annotations) of every split, records tagged ``hf_split``."""
    root = Path(local_dir) if local_dir else snapshot(hf_id)
    images, recs, anns = [], [], []
    for split in SPLITS:
        path = root / "annotations" / f"{split}.json"
        if not path.is_file():
            raise DataError(f"{path}: missing (expected the COCO annotations of split {split!r})")
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            by_image: dict = {}
            for a in doc["annotations"]:
                by_image.setdefault(a["image_id"], []).append(a)
            items = doc["images"][:max_images]
        except (ValueError, KeyError, TypeError) as exc:
            raise DataError(f"{path}: not COCO annotations ({type(exc).__name__}: {exc})") from None
        for im in items:
            file = root / im["file_name"] if (root / im["file_name"]).is_file() else root / "images" / im["file_name"]
            pixels, sx, sy = _read_image(file, size)
            image_id = len(images)
            images.append(pixels)
            seq = im.get("sequence") or im.get("video_id") or im.get("video") or str(Path(im["file_name"]).parent)
            recs.append(
                {
                    "id": image_id,
                    "file_name": im["file_name"],
                    "sequence": f"{split}/{seq}",
                    "frame": 0,
                    "domain": "forest",
                    "width": size,
                    "height": size,
                    "hf_split": split,
                }
            )
            for a in by_image.get(im["id"], []):
                x, y, w, h = (float(v) for v in a["bbox"])
                pose = POSE_NAMES.get(str(_attr(a, "pose")).lower())
                vis = int(float(_attr(a, "visibility")))
                if pose is None:
                    raise DataError(f"{path}: annotation {a.get('id')}: unknown pose {_attr(a, 'pose')!r}")
                box = [x * sx, y * sy, w * sx, h * sy]
                anns.append(
                    {
                        "id": len(anns) + 1,
                        "image_id": image_id,
                        "category_id": 1,
                        "iscrowd": 0,
                        "bbox": box,
                        "vis_bbox": None,
                        "pose": pose,
                        "visibility": vis,
                        "vis_ratio": vis / 100,
                        "area": box[2] * box[3],
                        "track": a.get("id"),
                    }
                )
    if not images:
        raise DataError(f"{root}: no images in any split")
    return np.stack(images), recs, anns
