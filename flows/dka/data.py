"""Stage ``data``: the MNI152 lesion task (train, dev and test pools from disjoint axial slices), or a local
MedMNIST/ImageFolder dataset in the ``full`` profile; Great Expectations checks every pool before it is written.

Writes ``data/dka/data/pool.npz`` (x/y/slice per split) and ``summary.json``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from components.data import validate as V
from components.dka import mni, sources
from components.io import write_json
from flows.dka.params import Params
from flows.dka.spec import DATA
from flows.runtime.stages import StageContext


def task_config(d, **changes) -> mni.TaskConfig:
    """The lesion task's knobs from ``dka.data`` (``changes`` override some: the learnability check)."""
    keys = ("z_lo", "z_hi", "lesion_contrast", "lesion_sigma", "max_rotation", "max_shift", "scale_range")
    return mni.TaskConfig(**({k: getattr(d, k) for k in keys} | changes))


def _mni(p) -> dict[str, np.ndarray]:
    d = p.data
    cfg = task_config(d)
    t1, gm, wm, aff = mni.load_templates()
    split = mni.slice_split(min(d.z_lo, t1.shape[2] - 16), min(d.z_hi, t1.shape[2]))
    slices = mni.prepare_slices(t1, gm, wm, aff, split["train"] + split["test"])
    out = {}
    for name, ks, n, off in (
        ("train", split["train"], d.n_train, 0),
        ("dev", split["train"], d.n_dev, 1),
        ("test", split["test"], d.n_test, 2),
    ):
        pool = mni.make_pool(slices, ks, n, seed=d.seed * 3 + off, cfg=cfg)
        out.update({f"{name}_{k}": v for k, v in pool.items()})
    return out


def _external(p) -> dict[str, np.ndarray]:
    d = p.data
    raw = sources.load_medmnist(d.path) if d.source == "medmnist" else sources.load_image_folder(d.path)
    rng = np.random.default_rng(d.seed)
    if "val_x" not in raw:  # a dev split from the training images
        order = rng.permutation(len(raw["train_y"]))
        dev, train = order[: d.n_dev], order[d.n_dev :]
        raw["val_x"], raw["val_y"] = raw["train_x"][dev], raw["train_y"][dev]
        raw["train_x"], raw["train_y"] = raw["train_x"][train], raw["train_y"][train]
    out = {}
    for name, key in (("train", "train"), ("dev", "val"), ("test", "test")):
        n = len(raw[f"{key}_y"])
        out[f"{name}_x"], out[f"{name}_y"] = raw[f"{key}_x"].astype(np.float32), raw[f"{key}_y"]
        out[f"{name}_slice"] = np.arange(n) + {"train": 0, "dev": 0, "test": 10_000_000}[name]  # distinct images
    return out


def check(pool: dict[str, np.ndarray], n_classes: int, result_dir) -> None:
    """GX: per-split label set, balance, finite pixels; no dev/test image from a training slice."""
    train_slices = set(pool["train_slice"].tolist())
    for split in ("train", "dev", "test"):
        x, y = pool[f"{split}_x"], pool[f"{split}_y"]
        df = pd.DataFrame(
            {
                "label": y,
                "pixel_min": x.reshape(len(x), -1).min(1),
                "pixel_max": x.reshape(len(x), -1).max(1),
                "from_train_slice": [s in train_slices for s in pool[f"{split}_slice"].tolist()],
            }
        )
        suite = [
            V.row_count_between(n_classes),
            V.in_set("label", list(range(n_classes))),
            V.finite("pixel_min"),
            V.finite("pixel_max"),
            V.between("pixel_max", -10, 10),
            V.between("pixel_min", -10, 10),
        ]
        if split == "test":
            suite.append(V.in_set("from_train_slice", [False]))
        counts = np.bincount(y, minlength=n_classes)
        bal = pd.DataFrame({"label": np.arange(n_classes), "share": counts / max(1, counts.sum())})
        V.validate(df, suite, name=f"dka/{split}", result_path=result_dir / f"{split}.json", id_column=None)
        V.validate(
            bal,
            [V.between("share", 0.5 / n_classes, 2.0 / n_classes)],
            name=f"dka/{split}-balance",
            result_path=result_dir / f"{split}-balance.json",
            id_column=None,
        )


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    pool = _mni(p) if p.data.source == "mni152" else _external(p)
    n_classes = int(max(pool[f"{s}_y"].max() for s in ("train", "dev", "test")) + 1)
    out = ctx.output_dir(DATA)
    check(pool, n_classes, out / "_checks")
    np.savez_compressed(out / "pool.npz", **pool)
    summary = {
        "source": p.data.source,
        "n_classes": n_classes,
        **{f"n_{s}": int(len(pool[f"{s}_y"])) for s in ("train", "dev", "test")},
        "train_slices": sorted(set(pool["train_slice"].tolist()))[:200],
        "test_slices": sorted(set(pool["test_slice"].tolist()))[:200],
    }
    write_json(out / "summary.json", summary)
    return {k: v for k, v in summary.items() if not k.endswith("_slices")}
