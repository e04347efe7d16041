"""Stage ``report``: claims 1-4 from the saved detections, the figures, tables and the report."""

from __future__ import annotations

import numpy as np

from components.detection import coco as C
from components.inputs import load_npz
from components.io import read_json, read_jsonl
from components.reporting import Section
from flows.forestpersons import figures as FG
from flows.forestpersons.claims import CLAIMS, all_claims, needed
from flows.forestpersons.common import boxes, load_set, per_image
from flows.forestpersons.evaluate import SUBSETS, subset_flags
from flows.forestpersons.params import Params
from flows.forestpersons.spec import EVAL, MODELS, SCENES, SPLIT
from flows.runtime.report_stage import finish_report
from flows.runtime.stages import StageContext


def unpack(z, name: str, n_images: int) -> list[tuple[np.ndarray, np.ndarray]]:
    b, s, im = z[f"{name}/boxes"], z[f"{name}/scores"], z[f"{name}/image"]
    return [(b[im == i], s[im == i]) for i in range(n_images)]


def pooled_subsets(dets, doc, keys: set[str] | None = None) -> dict[str, C.Pooled]:
    """Pooled matches per subset (``keys``: only these, e.g. what the claims read; None: every subset)."""
    gts = boxes(doc)
    out = {}
    for kind, value in SUBSETS:
        key = "all" if kind == "all" else f"{kind}/{value}"
        if keys is not None and key not in keys:
            continue
        flags = subset_flags(doc, kind, value)
        out[key] = C.pool([C.match_image(d[0], d[1], g, f) for d, g, f in zip(dets, gts, flags)])
    return out


def _table(rows, kinds):
    out = []
    for r in rows:
        if r["kind"] in kinds and r["test_set"] == "forest":
            out.append(
                {
                    "detector": r["detector"],
                    "subset": f"{r['kind']}={r['subset']}",
                    "GT": r["n_gt"],
                    **{
                        k: ("-" if r[k] is None else round(r[k], 4))
                        for k in ("ap", "ap50", "ap75", "ar", "recall_1fppi")
                    },
                }
            )
    return out


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    rows = read_jsonl(ctx.input(f"{EVAL}/metrics.jsonl"))
    test, tdoc = load_set(ctx.input(SPLIT), "forest_test")
    _, udoc = load_set(ctx.input(SCENES), "urban_test")
    names = sorted({r["detector"] for r in rows})
    with load_npz(ctx.input(f"{EVAL}/detections.npz")) as z:
        dets = {n: unpack(z, n, len(test)) for n in names}
        hog_urban = unpack(z, "hog-urban", len(udoc["images"]))
    pooled = {n: pooled_subsets(d, tdoc, needed(n)) for n, d in dets.items()}
    urban_pooled = pooled_subsets(hog_urban, udoc, {"all", "pose/standing"})
    results = all_claims(p, pooled, urban_pooled)

    figs = [
        ("ap_by_domain", FG.ap_by_domain(rows), "AP on forest test images per training domain"),
        (
            "ap_by_visibility",
            FG.ap_by_subset(rows, "visibility", (100, 70, 40, 20), "visibility bin (%)", "AP against visibility", True),
            "subset AP per visibility bin",
        ),
        (
            "ap_by_pose",
            FG.ap_by_subset(rows, "pose", ("standing", "sitting", "lying"), "pose", "AP per pose", False),
            "subset AP per pose",
        ),
    ]
    k = p.eval.panel
    pick = np.linspace(0, len(test) - 1, k).astype(int)
    f0 = f"forest-s{p.train.seeds['forest'][0]}"
    u0 = f"urban-s{p.train.seeds['urban'][0]}"
    gts = per_image(tdoc)
    panel = FG.scene_panel(
        test[pick],
        [gts[i] for i in pick],
        {n: [dets[n][i] for i in pick] for n in (f0, u0, "hog")},
        0.3,
        "Forest test scenes",
    )
    sections = [
        Section(
            "Detectors on forest test images",
            "COCO metrics (pycocotools' COCOeval for the whole set; our "
            "evaluator, checked equal, for subsets with out-of-subset ground truth ignored). Boxes are full-body "
            "(amodal); the visible box is stored beside it. Recall at 1 FPPI uses IoU 0.5.",
            figures=figs,
            tables=[_table(rows, ("all",))],
        ),
        Section("Subset AP by pose, visibility and tier", "", tables=[_table(rows, ("pose", "visibility", "tier"))]),
        Section(
            "Test scenes",
            f"Detections drawn at score >= 0.3 ({f0}, {u0}, HOG).",
            figures=[("panel", panel, "forest test scenes with ground truth and detections")],
        ),
        _splits_section(ctx),
        _video_section(ctx),
        _training_section(ctx),
    ]
    sections = [s for s in sections if s is not None]
    by_domain = [
        {"detector": r["detector"], "domain": r["domain"], "ap": r["ap"]}
        for r in rows
        if r["kind"] == "all" and r["test_set"] == "forest"
    ]
    metrics = {
        "ap": {r["detector"]: r["ap"] for r in by_domain},
        "ap50": {r["detector"]: r["ap50"] for r in rows if r["kind"] == "all" and r["test_set"] == "forest"},
        **training_metrics(ctx),
    }
    return finish_report(
        ctx,
        CLAIMS,
        results,
        metrics=metrics,
        sections=sections,
        plots={"ap_by_domain.csv": (by_domain, ["detector", "domain", "ap"])},
    )


def _splits_section(ctx) -> Section:
    seqs = read_jsonl(ctx.input(f"{SPLIT}/sequences.jsonl"))
    table = [
        {"split": s, **{t: sum(r["split"] == s and r["tier"] == t for r in seqs) for t in ("easy", "medium", "hard")}}
        for s in ("train", "val", "test")
    ]
    return Section(
        "Split by sequence and difficulty tiers",
        "Difficulty = 1 - AP50 of the urban reference detector "
        "on each forest sequence; tiers easy < 0.45 <= medium < 0.75 <= hard, dealt proportionally to "
        "train/val/test. Sequences per split and tier:",
        tables=[table],
    )


def _video_section(ctx) -> Section:
    summary = read_json(ctx.input(f"{EVAL}/summary.json"))["video"]
    path = ctx.input(f"{EVAL}/vtest.npz")
    if "skipped" in summary or not path.is_file():
        return Section("Qualitative check: vtest.avi", f"Skipped: {summary.get('skipped', 'no frames')}.")
    with load_npz(path) as z:
        frames = z["frames"]
        n = len(frames)
        hog = [z["hog_boxes"][z["hog_image"] == i] * 0.5 for i in range(n)]
        cn = [z["cn_boxes"][z["cn_image"] == i] * 0.5 for i in range(n)]
    text = (
        f"{n} frames of OpenCV's vtest.avi (a real street video). HOG finds {summary['hog_per_frame']} people per "
        f"frame at its default threshold; the forest-trained CenterNet (128 px input, score >= 0.3) finds "
        f"{summary['centernet_per_frame']}. Not scored (no labels): a check that HOG works on real pedestrians."
    )
    return Section(
        "Qualitative check: vtest.avi",
        text,
        figures=[("vtest", FG.video_panel(frames, hog, cn), "vtest.avi frames with detections")],
    )


PLATEAU_TOL = 0.05  # relative change of the mean loss between the last two fifths of the steps (as milco, dka)


def _training_section(ctx) -> Section:
    runs = read_jsonl(ctx.input(f"{MODELS}/runs.jsonl"))
    histories = {r["name"]: read_json(ctx.input(f"{MODELS}/{r['name']}/history.json")) for r in runs}
    table = [
        {
            "model": r["name"],
            "images": r["images"],
            "epochs": r["epochs"],
            "params": r["n_params"],
            "loss per epoch": " ".join(f"{v:.3f}" for v in r["loss"]),
            "plateau": round(r["plateau"], 4),
            "plateaued": bool(r["plateau"] < PLATEAU_TOL),
            "forest-dev AP per epoch": " ".join(f"{v:.3f}" for v in r.get("dev_ap", [])),
            "images/s": round(r["images"] * r["epochs"] / max(r["seconds"], 1e-9), 1),
        }
        for r in runs
    ]
    return Section(
        "Training",
        "One recipe for every domain (AdamW, one-cycle LR, CenterNet's augmentation: flip, "
        "random scale and crop, colour jitter; the same epochs). Plateau: relative change of the mean "
        f"training loss between the last two fifths of the steps (plateaued when < {PLATEAU_TOL:g}). The "
        "forest-dev AP (split/forest_val, never the test split) is a learning curve; nothing is selected "
        "on it in the run.",
        figures=[
            (
                "learning_curves",
                FG.learning_curves(runs, histories),
                "training loss per step and forest-dev AP per epoch",
            )
        ],
        tables=[table],
    )


def training_metrics(ctx) -> dict:
    runs = read_jsonl(ctx.input(f"{MODELS}/runs.jsonl"))
    return {
        "plateau": {r["name"]: r["plateau"] for r in runs},
        "dev_ap": {r["name"]: (r.get("dev_ap") or [None])[-1] for r in runs},
    }
