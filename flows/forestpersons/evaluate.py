"""Stage ``evaluate``: OpenCV's HOG (zero-shot) and every trained CenterNet on the forest test set.

Headline COCO metrics come from pycocotools' ``COCOeval`` (and our evaluator must agree with it, checked here);
subset AP by pose, visibility bin and tier uses our evaluator with out-of-subset ground truth ignored; recall at
1 FPPI at IoU 0.5. Detections are saved for the report's bootstraps and panel. HOG also runs on the urban test set
(claim 4's reference) and on frames of OpenCV's ``vtest.avi`` (qualitative).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np

from components.data import validate as V
from components.detection import centernet as CN
from components.detection import coco as C
from components.detection import hog as H
from components.errors import DataError
from components.io import read_jsonl, write_json, write_jsonl
from flows.forestpersons.common import CATEGORIES, TIERS, boxes, load_set, per_image
from flows.forestpersons.params import Params
from flows.forestpersons.spec import EVAL, MODELS, SCENES, SPLIT
from flows.runtime.stages import StageContext

SUBSETS = (
    [("all", None)]
    + [("pose", v) for v in ("standing", "sitting", "lying")]
    + [("visibility", v) for v in (100, 70, 40, 20)]
    + [("tier", v) for v in TIERS]
)
METRICS = ("ap", "ap50", "ap75", "ar", "recall_1fppi")


def subset_flags(doc: dict, kind: str, value) -> list[np.ndarray]:
    """Per image: True for ground truth outside the subset (ignored)."""
    tier = [r.get("tier") for r in doc["images"]]
    out = []
    for i, anns in enumerate(per_image(doc)):
        if kind == "all":
            out.append(np.zeros(len(anns), bool))
        elif kind == "tier":
            out.append(np.full(len(anns), tier[i] != value))
        else:
            out.append(np.array([a[kind] != value for a in anns], bool))
    return out


def cocoeval_stats(doc: dict, dets) -> dict[str, float]:
    """pycocotools' own AP, AP50, AP75, AR@100 (bbox, one category)."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    gt = COCO()
    gt.dataset = {
        "images": [{"id": r["id"], "width": r["width"], "height": r["height"]} for r in doc["images"]],
        "annotations": [
            {
                "id": a["id"],
                "image_id": a["image_id"],
                "category_id": 1,
                "bbox": a["bbox"],
                "area": a["bbox"][2] * a["bbox"][3],
                "iscrowd": 0,
            }
            for a in doc["annotations"]
        ],
        "categories": CATEGORIES,
    }
    res = [
        {"image_id": i, "category_id": 1, "bbox": [float(v) for v in b], "score": float(s)}
        for i, (bs, ss) in enumerate(dets)
        for b, s in zip(bs, ss)
    ]
    with contextlib.redirect_stdout(io.StringIO()):
        gt.createIndex()
        if not res:
            return {"ap": 0.0, "ap50": 0.0, "ap75": 0.0, "ar": 0.0}
        ev = COCOeval(gt, gt.loadRes(res), "bbox")
        ev.params.areaRng = [[0, 1e10]] * 4  # one area range: every box counts (the default "all")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return {"ap": float(ev.stats[0]), "ap50": float(ev.stats[1]), "ap75": float(ev.stats[2]), "ar": float(ev.stats[8])}


def score(name: str, dets, doc: dict, meta: dict) -> list[dict]:
    gts = boxes(doc)
    rows = []
    for kind, value in SUBSETS:
        flags = subset_flags(doc, kind, value)
        r = C.evaluate(dets, list(zip(gts, flags)))
        n_gt = int(sum((~f).sum() for f in flags))
        rows.append(
            {
                "id": f"{name}/{kind}/{value}",
                "detector": name,
                **meta,
                "kind": kind,
                "subset": str(value),
                "n_gt": n_gt,
                **{k: (float(r[k]) if np.isfinite(r[k]) else None) for k in METRICS},
            }
        )
    return rows


def _pack(dets) -> dict[str, np.ndarray]:
    return {
        "boxes": np.concatenate([d[0].reshape(-1, 4) for d in dets]) if dets else np.zeros((0, 4)),
        "scores": np.concatenate([d[1] for d in dets]) if dets else np.zeros(0),
        "image": np.concatenate([np.full(len(d[1]), i) for i, d in enumerate(dets)]) if dets else np.zeros(0, int),
    }


def _video(p, out: Path, forest_model) -> dict:
    path = Path(p.eval.video)
    if p.eval.video_frames == 0 or not path.is_file():
        return {"skipped": f"{path} not found (install Debian opencv-doc)" if p.eval.video_frames else "disabled"}
    frames = H.video_frames(str(path), p.eval.video_frames, stride=60)
    if len(frames) == 0:
        raise DataError(f"{path}: no frames could be read (not a video OpenCV can decode)")
    hog = H.detect(
        frames, H.HogConfig(upscale=1.0, scale=p.eval.hog.scale, hit_threshold=0.0, calibrate=p.eval.hog.calibrate)
    )
    import cv2

    s = p.scenes.size
    small = np.stack([cv2.resize(f, (s, s), interpolation=cv2.INTER_AREA) for f in frames])
    fx, fy = frames.shape[2] / s, frames.shape[1] / s
    cn = [(b * np.array([fx, fy, fx, fy]), sc) for b, sc in CN.detect(forest_model, small, min_score=0.3)]
    thumbs = np.stack([cv2.resize(f, (frames.shape[2] // 2, frames.shape[1] // 2)) for f in frames])
    np.savez_compressed(
        out / "vtest.npz",
        frames=thumbs,
        **{f"hog_{k}": v for k, v in _pack(hog).items()},
        **{f"cn_{k}": v for k, v in _pack(cn).items()},
    )
    return {
        "frames": len(frames),
        "hog_per_frame": [int(len(d[1])) for d in hog],
        "centernet_per_frame": [int(len(d[1])) for d in cn],
        "scale_to_thumbs": 0.5,
    }


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    test, tdoc = load_set(ctx.input(SPLIT), "forest_test")
    urban, udoc = load_set(ctx.input(SCENES), "urban_test")
    runs = read_jsonl(ctx.input(f"{MODELS}/runs.jsonl"))
    out = ctx.output_dir(EVAL)
    hcfg = H.HogConfig(
        upscale=p.eval.hog.upscale,
        scale=p.eval.hog.scale,
        hit_threshold=p.eval.hog.hit_threshold,
        calibrate=p.eval.hog.calibrate,
    )
    detections = {"hog": H.detect(test, hcfg)}
    meta = {"hog": {"domain": "pretrained", "seed": None}}
    models = {}
    for r in runs:
        models[r["name"]] = CN.load_model(ctx.input(f"{MODELS}/{r['name']}"))
        detections[r["name"]] = CN.detect(models[r["name"]], test, top_k=p.eval.top_k, min_score=p.eval.min_score)
        meta[r["name"]] = {"domain": r["domain"], "seed": r["seed"]}
    rows, agree = [], {}
    for name, dets in detections.items():
        rows += score(name, dets, tdoc, {**meta[name], "test_set": "forest"})
        ref = cocoeval_stats(tdoc, dets)
        ours = rows[-len(SUBSETS)]
        agree[name] = max(abs(ref[k] - (ours[k] or 0.0)) for k in ("ap", "ap50", "ap75", "ar"))
        rows[-len(SUBSETS)].update({f"coco_{k}": v for k, v in ref.items()})
    if max(agree.values()) > 1e-9:
        raise DataError(f"our COCO evaluation disagrees with pycocotools by {max(agree.values()):.3g}: {agree}")
    hog_urban = H.detect(urban, hcfg)
    rows += [
        r
        for r in score("hog", hog_urban, udoc, {"domain": "pretrained", "seed": None, "test_set": "urban"})
        if r["kind"] in ("all", "pose")
    ]
    for r in rows[-4:]:
        r["id"] = "urban-test/" + r["id"]
    import pandas as pd

    df = pd.DataFrame([{k: r[k] for k in ("id", "detector", "n_gt", *METRICS)} for r in rows])
    V.validate(
        df,
        [V.unique("id"), *(V.between(m, 0.0, 1.0) for m in METRICS), V.between("n_gt", 0)],
        name="forestpersons/metrics",
        result_path=out / "_checks" / "metrics.json",
    )
    write_jsonl(out / "metrics.jsonl", rows)
    np.savez_compressed(
        out / "detections.npz",
        **{f"{n}/{k}": v for n, d in detections.items() for k, v in _pack(d).items()},
        **{f"hog-urban/{k}": v for k, v in _pack(hog_urban).items()},
    )
    forest0 = models.get(f"forest-s{p.train.seeds['forest'][0]}")
    video = _video(p, out, forest0)
    summary = {
        "ap": {r["detector"]: r["ap"] for r in rows if r["kind"] == "all" and r["test_set"] == "forest"},
        "max_abs_diff_vs_pycocotools": max(agree.values()),
        "video": video,
    }
    write_json(out / "summary.json", summary)
    if ctx.tracker is not None:
        ctx.tracker.log_metrics(
            {"eval": {r["id"].replace("/", "."): {m: r[m] for m in METRICS if r[m] is not None} for r in rows}}
        )
    return {"ap": summary["ap"], "video": {k: v for k, v in video.items() if k != "scale_to_thumbs"}}
