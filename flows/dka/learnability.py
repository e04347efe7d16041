"""The learnability check behind the choice of the lesion knobs (``data.lesion_contrast``, ``data.lesion_sigma``).

With every label (100%), full fine-tuning and the linear probe must score clearly above chance on the **dev**
split (train slices, own draw; never the test set, never a claim's number): otherwise the low-data claims
cannot say anything about the paper. For each (contrast, sigma) given, this builds the train and dev pools the
``data`` stage would build, adapts the cached backbone (``data/dka/pretrain/backbone``) with the pipeline's own
``build``/``fit`` code at the 100% regime's steps and batch, and prints dev accuracy against chance.

    python -m flows.dka.learnability --knobs 0.35:1.4 0.9:3.0 [--steps 100] [--n-train 2000] [--out file.json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from components.dka import mni
from components.dka.methods import build
from components.dka.train import fit, predict_proba, scores
from components.dka.vit import load_model
from components.training.curves import plateau
from components.training.threads import set_threads
from flows.dka.data import task_config
from flows.dka.params import PRESETS, Params
from flows.runtime.params import resolve

METHODS = {"full": (1e-5, 1e-2), "linear": (0.0, 1e-1)}  # (backbone lr, head lr): values of the sweep grid, fixed


def check(
    knobs: list[tuple[float, float]],
    *,
    steps: int,
    batch: int,
    n_train: int,
    n_dev: int,
    backbone: str,
    methods=METHODS,
    seed: int = 0,
    overrides=(),
    aug=None,
) -> list[dict]:
    p = resolve(Params, PRESETS, slug="dka", profile="default", overrides=overrides)
    d = p.data
    aug = aug or {}
    t1, gm, wm, aff = mni.load_templates()
    split = mni.slice_split(d.z_lo, d.z_hi)
    slices = mni.prepare_slices(t1, gm, wm, aff, split["train"])
    bb = load_model(backbone)
    rows = []
    for contrast, sigma in knobs:
        cfg = task_config(d, lesion_contrast=contrast, lesion_sigma=sigma, **aug)
        tr = mni.make_pool(slices, split["train"], n_train, seed=d.seed * 3, cfg=cfg)
        dev = mni.make_pool(slices, split["train"], n_dev, seed=d.seed * 3 + 1, cfg=cfg)
        for m, (la, lh) in methods.items():
            t0 = time.process_time()
            b = build(m, bb, n_classes=4, seed=seed)
            losses = fit(
                b,
                tr["x"],
                tr["y"],
                steps=steps,
                batch=batch,
                lr_adapter=la,
                lr_head=lh,
                seed=seed,
                linear_probe=m == "linear",
            )
            acc = scores(dev["y"], predict_proba(b.model, dev["x"]))["acc"]
            rows.append(
                {
                    "lesion_contrast": contrast,
                    "lesion_sigma": sigma,
                    **aug,
                    "z": [d.z_lo, d.z_hi],
                    "method": m,
                    "steps": steps,
                    "lr": [la, lh],
                    "dev_acc": round(acc, 4),
                    "chance": 0.25,
                    "loss_first": round(float(np.mean(losses[:5])), 4),
                    "loss_last": round(float(np.mean(losses[-5:])), 4),
                    "plateau": round(plateau(losses), 4),
                    "cpu_s": round(time.process_time() - t0, 1),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--knobs", nargs="+", default=["0.35:1.4"], help="contrast:sigma pairs")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--n-train", type=int, default=2000)
    ap.add_argument("--n-dev", type=int, default=200)
    ap.add_argument("--methods", nargs="+", default=list(METHODS))
    ap.add_argument("--backbone", default="data/dka/pretrain/backbone")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--set", nargs="*", default=[], help="dka params overrides (e.g. data.z_lo=82)")
    ap.add_argument("--aug", default="{}", help='JSON, e.g. {"max_rotation": 5}')
    ap.add_argument("--head-lr", type=float, default=None, help="the linear probe's head rate")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    set_threads(a.threads)
    knobs = [tuple(float(v) for v in k.split(":")) for k in a.knobs]
    methods = {m: METHODS[m] for m in a.methods}
    if a.head_lr is not None and "linear" in methods:
        methods["linear"] = (0.0, a.head_lr)
    rows = check(
        knobs,
        steps=a.steps,
        batch=a.batch,
        n_train=a.n_train,
        n_dev=a.n_dev,
        backbone=a.backbone,
        methods=methods,
        overrides=a.set,
        aug=json.loads(a.aug),
    )
    if a.out:
        from components.io import write_json

        write_json(a.out, {"rows": rows})


if __name__ == "__main__":
    main()
