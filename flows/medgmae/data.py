"""Stage ``data``: 3-D crops of the MNI152 T1 template (2 mm) with GM / WM / other labels, from spatially disjoint
z slabs (test crops wholly in the top ``test_share`` of z), the training crops augmented with MONAI (flips, small
affine, elastic, gamma), ellipsoid phantoms for the pretraining pool; or, in ``full``, crops of a local NIfTI
folder (Decathlon layout) split by case. Great Expectations checks every split before it is written.

Writes ``data/medgmae/data/pool.npz`` (train/dev/test x, y, z_lo; phantoms) and ``summary.json``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from components.data import validate as V
from components.errors import DataError
from components.io import write_json
from components.medgmae import sources
from components.medgmae import volumes as VOL
from flows.medgmae.params import Params
from flows.medgmae.spec import DATA
from flows.runtime.stages import StageContext


def _mni(d) -> dict[str, np.ndarray]:
    anat = VOL.load_anatomy(2)
    slabs = VOL.slab_ranges(anat.t1.shape[2], d.size, d.test_share)
    rng = np.random.default_rng(d.seed)
    out = {}
    for split, slab, n in (("train", "train", d.n_train), ("dev", "train", d.n_dev), ("test", "test", d.n_test)):
        starts = VOL.crop_starts(anat, d.size, slabs[slab], n, rng, d.min_brain)
        x, y = VOL.cut(anat, starts, d.size)
        if split == "train":
            x, y = VOL.augment(x, y, seed=d.seed, elastic=d.elastic)
        out |= {f"{split}_x": x, f"{split}_y": y, f"{split}_z": starts[:, 2]}
    out["test_cut"] = np.asarray(int(round((1 - d.test_share) * anat.t1.shape[2])))
    return out


def _nifti(d) -> dict[str, np.ndarray]:
    cases = sources.load_nifti_folder(d.path)
    if len(cases) < 2:
        raise DataError(f"{d.path}: need at least 2 cases (train and test are split by case)")
    n_test_cases = max(1, int(round(d.test_share * len(cases))))
    rng = np.random.default_rng(d.seed)
    out = {}
    for split, group, n in (
        ("train", cases[:-n_test_cases], d.n_train),
        ("dev", cases[:-n_test_cases], d.n_dev),
        ("test", cases[-n_test_cases:], d.n_test),
    ):
        xs, ys = [], []
        for _ in range(n):
            c = group[rng.integers(len(group))]
            if min(c["image"].shape) < d.size:
                raise DataError(f"{d.path}: a volume of shape {c['image'].shape} is smaller than a {d.size} crop")
            a = [rng.integers(0, s - d.size + 1) for s in c["image"].shape]
            sl = tuple(slice(k, k + d.size) for k in a)
            xs.append(c["image"][sl][None])
            ys.append(c["label"][sl][None])
        x, y = np.stack(xs).astype(np.float32), np.stack(ys)
        if split == "train":
            x, y = VOL.augment(x, y, seed=d.seed, elastic=d.elastic)
        out |= {f"{split}_x": x, f"{split}_y": y, f"{split}_z": np.full(n, 0 if split != "test" else 10**6)}
    out["test_cut"] = np.asarray(10**6)
    return out


def check(pool: dict[str, np.ndarray], n_classes: int, size: int, result_dir) -> None:
    """GX per split: intensities finite in [0, 1], labels in range, every class present at a plausible share; the
    test split: no test crop's z range reaches into the training slab (so no test voxel is in a training crop)."""
    train_top = int(max(pool["train_z"].max(), pool["dev_z"].max())) + size  # one past the highest training slice
    for split in ("train", "dev", "test"):
        x, y = pool[f"{split}_x"], pool[f"{split}_y"]
        flat = x.reshape(len(x), -1)
        df = pd.DataFrame(
            {
                "crop": np.arange(len(x)),
                "vmin": flat.min(1),
                "vmax": flat.max(1),
                "label_max": y.reshape(len(y), -1).max(1),
                "z_lo": pool[f"{split}_z"],
            }
        )
        suite = [
            V.row_count_between(2),
            V.unique("crop"),
            V.finite("vmin"),
            V.finite("vmax"),
            V.between("vmin", 0, 1),
            V.between("vmax", 0, 1),
            V.between("label_max", 0, n_classes - 1),
        ]
        if split == "test":
            suite.append(V.between("z_lo", train_top, None))
        V.validate(df, suite, name=f"medgmae/{split}", result_path=result_dir / f"{split}.json", id_column="crop")
        share = np.bincount(y.ravel(), minlength=n_classes) / y.size
        bal = pd.DataFrame({"label": np.arange(n_classes), "share": share})
        V.validate(
            bal,
            [V.between("share", 0.01, 0.95)],
            name=f"medgmae/{split}-labels",
            result_path=result_dir / f"{split}-labels.json",
            id_column="label",
        )
    ph = pool["phantoms"]
    if len(ph):
        pf = pd.DataFrame({"phantom": np.arange(len(ph)), "vmax": ph.reshape(len(ph), -1).max(1)})
        V.validate(pf, [V.finite("vmax"), V.between("vmax", 0, 1)], name="medgmae/phantoms",
                   result_path=result_dir / "phantoms.json", id_column="phantom")  # fmt: skip


def run(ctx: StageContext[Params]) -> dict:
    d = ctx.params.data
    pool = _mni(d) if d.source == "mni152" else _nifti(d)
    n_ph = int(round(len(pool["train_x"]) * d.phantom_share / (1 - d.phantom_share)))
    pool["phantoms"] = VOL.phantoms(n_ph, d.size, np.random.default_rng(d.seed + 101))
    n_classes = int(max(pool[f"{s}_y"].max() for s in ("train", "dev", "test")) + 1)
    if n_classes < 2:
        raise DataError("medgmae data: the labels hold a single class")
    out = ctx.output_dir(DATA)
    check(pool, n_classes, d.size, out / "_checks")
    for s in ("train", "dev", "test"):
        pool[f"{s}_y"] = pool[f"{s}_y"].astype(np.uint8)
    np.savez_compressed(out / "pool.npz", **pool)
    summary = {
        "source": d.source,
        "n_classes": n_classes,
        "size": d.size,
        "test_cut_z": int(pool["test_cut"]),
        "phantoms": n_ph,
        **{f"n_{s}": int(len(pool[f"{s}_x"])) for s in ("train", "dev", "test")},
        **{
            f"{s}_label_share": (
                np.bincount(pool[f"{s}_y"].ravel(), minlength=n_classes) / pool[f"{s}_y"].size
            ).tolist()
            for s in ("train", "test")
        },
    }
    write_json(out / "summary.json", summary)
    return {k: v for k, v in summary.items() if not k.endswith("_share")}


def load(ctx: StageContext[Params]) -> dict[str, np.ndarray]:
    """The pool written by this stage (labels back to int64)."""
    from components.inputs import load_npz

    with load_npz(ctx.input(f"{DATA}/pool.npz")) as z:
        pool = {k: z[k] for k in z.files}
    for s in ("train", "dev", "test"):
        pool[f"{s}_y"] = pool[f"{s}_y"].astype(np.int64)
    return pool
