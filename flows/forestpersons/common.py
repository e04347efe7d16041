"""Sets on disk (``<name>.npz`` images + ``<name>.json`` COCO-style records) and their GX suite."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from components.data import validate as V
from components.errors import DataError
from components.inputs import load_npz
from components.io import read_json, write_json
from components.scenes.compose import VIS_BINS
from components.scenes.people import POSES
from components.training.threads import set_threads
from flows.runtime.tracking import Tensor, signature

CATEGORIES = [{"id": 1, "name": "person"}]
TIERS = ("easy", "medium", "hard")


def save_set(folder: Path, name: str, images: np.ndarray, recs: list[dict], anns: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(folder / f"{name}.npz", images=images)
    write_json(folder / f"{name}.json", {"images": recs, "annotations": anns, "categories": CATEGORIES})


def load_set(folder: Path, name: str) -> tuple[np.ndarray, dict]:
    path = Path(folder) / f"{name}.npz"
    try:
        with load_npz(path) as z:
            images = z["images"]
    except (OSError, KeyError, ValueError) as exc:
        raise DataError(f"{path}: not an image set ({type(exc).__name__}: {exc})") from None
    doc = read_json(Path(folder) / f"{name}.json")
    if not isinstance(doc, dict) or not {"images", "annotations"} <= set(doc):
        raise DataError(f"{Path(folder) / f'{name}.json'}: expected a COCO-style object with images and annotations")
    if len(doc["images"]) != len(images):
        raise DataError(f"{path}: {len(images)} images but {len(doc['images'])} image records")
    return images, doc


def per_image(doc: dict, key: str = "bbox") -> list[list[dict]]:
    """Annotations grouped by image position (image ids are positions 0..n-1)."""
    out: list[list[dict]] = [[] for _ in doc["images"]]
    for a in doc["annotations"]:
        out[a["image_id"]].append(a)
    return out


def boxes(doc: dict) -> list[np.ndarray]:
    return [np.array([a["bbox"] for a in anns], float).reshape(-1, 4) for anns in per_image(doc)]


def check_set(doc: dict, size: int, name: str, result_path: Path) -> None:
    """GX suite of a set: boxes inside the image with positive size, visible box inside the full box, pose and
    visibility in their label sets, visibility ratio in [0.1, 1], unique ids, one sequence per image."""
    import pandas as pd

    rows = []
    for a in doc["annotations"]:
        x, y, w, h = a["bbox"]
        vb = a.get("vis_bbox")
        inside = vb is None or (
            vb[0] >= x and vb[1] >= y and vb[0] + vb[2] <= x + w + 1e-6 and vb[1] + vb[3] <= y + h + 1e-6
        )
        rows.append(
            {
                "id": a["id"],
                "x": x,
                "y": y,
                "right": x + w,
                "bottom": y + h,
                "w": w,
                "h": h,
                "pose": a["pose"],
                "visibility": a["visibility"],
                "vis_ratio": a.get("vis_ratio", 1.0),
                "vis_inside": bool(inside),
                "image_id": a["image_id"],
            }
        )
    if not rows:
        raise DataError(f"{name}: no annotations")
    df = pd.DataFrame(rows)
    suite = [
        V.unique("id"),
        V.between("x", 0, size),
        V.between("y", 0, size),
        V.between("right", 0, size),
        V.between("bottom", 0, size),
        V.between("w", 1e-6, size),
        V.between("h", 1e-6, size),
        V.in_set("pose", list(POSES)),
        V.in_set("visibility", list(VIS_BINS)),
        V.between("vis_ratio", 0.1, 1.0),
        V.in_set("vis_inside", [True]),
        V.between("image_id", 0, len(doc["images"]) - 1),
    ]
    V.validate(df, suite, name=name, result_path=result_path)


def fit(images: np.ndarray, doc: dict, p, seed: int, dev: tuple[np.ndarray, dict] | None = None):
    """The one training recipe every domain gets (the same effort for every detector). With ``dev`` (the forest
    dev split), its AP is recorded after every epoch (a learning curve; nothing is selected on it here)."""

    from components.detection import centernet as CN
    from components.detection.augment import AugmentConfig

    set_threads(p.resources.threads)
    t = p.train
    aug = AugmentConfig(**t.augment.model_dump())
    on_epoch = None if dev is None else (lambda model, _: dev_ap(model, *dev, p))
    return CN.train(
        images,
        boxes(doc),
        cfg=CN.TrainConfig(epochs=t.epochs, batch_size=t.batch_size, lr=t.lr, augment=aug),
        model_cfg=CN.CenterNetConfig(width=t.width),
        seed=seed,
        on_epoch=on_epoch,
    )


def dev_ap(model, images: np.ndarray, doc: dict, p) -> float:
    """AP@[.5:.95] on a dev set, decoded as the evaluate stage decodes (``eval.top_k``, ``eval.min_score``)."""
    from components.detection import centernet as CN
    from components.detection import coco as C

    dets = CN.detect(model, images, top_k=p.eval.top_k, min_score=p.eval.min_score)
    return C.evaluate(dets, [(b, np.zeros(len(b), bool)) for b in boxes(doc)])["ap"]


def log_model(ctx, name: str, params: dict, history: dict, model_dir: Path) -> str | None:
    """An MLflow child run per trained detector: params, loss per epoch (one batch per epoch), the model with a
    signature (uint8 images in, [x, y, w, h, score] peaks out). Returns the child run's id (None untracked)."""
    if ctx.tracker is None:
        return None
    size = ctx.params.scenes.size
    sig = signature(Tensor("images", "uint8", (-1, size, size, 3)), Tensor("detections", "float32", (-1, 100, 5)))
    with ctx.tracker.child(name, params) as rid:
        for epoch, value in enumerate(history["loss"]):
            dev = history.get("dev_ap") or []
            ctx.tracker.log_metrics(
                {"train_loss": value, **({"dev_ap": dev[epoch]} if epoch < len(dev) else {})}, step=epoch, run_id=rid
            )
        extra = {"plateau": history["plateau"]} if history.get("plateau") is not None else {}
        ctx.tracker.log_metrics(
            {
                "images_per_s": history["images_seen"] / max(history["seconds"], 1e-9),
                "train_seconds": history["seconds"],
                **extra,
            },
            run_id=rid,
        )
        ctx.tracker.log_state_dict_model(rid, model_dir, loader=LOADER, signature=sig)
    return rid


LOADER = "components.detection.centernet:load_model"
