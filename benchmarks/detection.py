"""Benchmark of the forestpersons pipeline's parts, timed in one run.

    python benchmarks/detection.py [--sequences N] [--train-images N] [--test-images N]

Prints: procedural scenes generated per second (components.scenes, forest domain, 128 px); tiny-CenterNet
training images per second (1 torch thread); and the time of all 11 subset evaluations (pose, visibility, tier,
all) with our ignore-flag evaluator against calling pycocotools' COCOeval once per subset (out-of-subset ground
truth marked iscrowd, COCOeval's own ignore), with the ratio pycocotools / ours.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import time

import numpy as np


def _scenes(n_seq: int):
    from components.scenes.sequences import generate_set

    start = time.perf_counter()
    images, recs, anns = generate_set(
        "forest", n_sequences=n_seq, n_frames=10, size=128, jitter=4, seed=0, prefix="bench"
    )
    secs = time.perf_counter() - start
    print(f"scenes: {len(images)} forest frames in {secs:.2f} s = {len(images) / secs:.1f} scenes/s")
    return images, recs, anns


def _train(images, anns, n: int):
    import torch

    from components.detection import centernet as CN

    torch.set_num_threads(1)
    boxes = [np.array([a["bbox"] for a in anns if a["image_id"] == i], float).reshape(-1, 4) for i in range(n)]
    _, hist = CN.train(
        images[:n], boxes, cfg=CN.TrainConfig(epochs=1, batch_size=16), model_cfg=CN.CenterNetConfig(), seed=0
    )
    print(
        f"training: {hist['images_seen']} images in {hist['seconds']:.2f} s = "
        f"{hist['images_seen'] / hist['seconds']:.1f} images/s (TinyCenterNet, 1 thread)"
    )


def _subset_eval(anns, n_img: int):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    from components.detection import coco as C

    rng = np.random.default_rng(0)
    per = [[a for a in anns if a["image_id"] == i] for i in range(n_img)]
    tiers = rng.choice(["easy", "medium", "hard"], n_img)
    dets = []
    for gs in per:
        b = [np.array(a["bbox"]) + rng.normal(0, 2, 4) for a in gs if rng.random() < 0.7]
        b += [np.r_[rng.uniform(0, 100, 2), rng.uniform(5, 40, 2)] for _ in range(3)]
        dets.append((np.abs(np.array(b, float).reshape(-1, 4)) + [0, 0, 1, 1], rng.random(len(b))))
    subsets = (
        [("all", None)]
        + [("pose", v) for v in ("standing", "sitting", "lying")]
        + [("visibility", v) for v in (100, 70, 40, 20)]
        + [("tier", v) for v in ("easy", "medium", "hard")]
    )

    def outside(i, a, kind, value):
        return False if kind == "all" else (tiers[i] != value if kind == "tier" else a[kind] != value)

    start = time.perf_counter()
    ours = {}
    for kind, value in subsets:
        ms = [
            C.match_image(
                d[0], d[1], np.array([a["bbox"] for a in gs]).reshape(-1, 4), [outside(i, a, kind, value) for a in gs]
            )
            for i, (d, gs) in enumerate(zip(dets, per))
        ]
        ours[(kind, value)] = float(C.average_precision(C.pool(ms))["ap"][0])
    t_ours = time.perf_counter() - start

    res = [
        {"image_id": i, "category_id": 1, "bbox": [float(v) for v in b], "score": float(s)}
        for i, (bs, ss) in enumerate(dets)
        for b, s in zip(bs, ss)
    ]
    start = time.perf_counter()
    theirs = {}
    for kind, value in subsets:
        gt = COCO()
        gt.dataset = {
            "images": [{"id": i} for i in range(n_img)],
            "categories": [{"id": 1, "name": "person"}],
            "annotations": [
                {
                    "id": k + 1,
                    "image_id": a["image_id"],
                    "category_id": 1,
                    "bbox": a["bbox"],
                    "area": a["bbox"][2] * a["bbox"][3],
                    "iscrowd": int(outside(a["image_id"], a, kind, value)),
                }
                for k, a in enumerate(x for gs in per for x in gs)
            ],
        }
        with contextlib.redirect_stdout(io.StringIO()):
            gt.createIndex()
            ev = COCOeval(gt, gt.loadRes(res), "bbox")
            ev.params.areaRng = [[0, 1e10]] * 4
            ev.evaluate()
            ev.accumulate()
            ev.summarize()
        theirs[(kind, value)] = float(ev.stats[0])
    t_coco = time.perf_counter() - start
    gap = max(abs(ours[k] - theirs[k]) for k in subsets if k[0] != "all")
    print(
        f"subset AP ({len(subsets)} subsets, {n_img} images): ours {t_ours:.2f} s, pycocotools once per subset "
        f"{t_coco:.2f} s, ratio pycocotools / ours = {t_coco / t_ours:.2f}"
    )
    print(
        f"  AP 'all' ours {ours[('all', None)]:.4f} = pycocotools {theirs[('all', None)]:.4f}; largest subset gap "
        f"{gap:.4f} (pycocotools' crowd ignore uses intersection over detection area, ours the plain IoU)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sequences", type=int, default=40)
    parser.add_argument("--train-images", type=int, default=160)
    parser.add_argument("--test-images", type=int, default=400)
    args = parser.parse_args()
    images, _, anns = _scenes(args.sequences)
    _train(images, anns, min(args.train_images, len(images)))
    _subset_eval(anns, min(args.test_images, len(images)))


if __name__ == "__main__":
    main()
