"""Stage ``split``: sequence difficulty, tiers and the split by sequence (the paper's protocol).

An urban-trained CenterNet (the stand-in for the paper's COCO Faster R-CNN; its own seed) scores every forest
sequence: difficulty = 1 - AP50 on the sequence's frames (no person left after the visibility cut: 1). Tiers:
easy < ``easy_below`` <= medium < ``hard_from`` <= hard. Within each tier sequences are shuffled and dealt to
train/val/test in the requested proportions (largest remainder), so tiers are spread proportionally.
"""

from __future__ import annotations

import numpy as np

from components.data import validate as V
from components.detection import centernet as CN
from components.detection import coco as C
from components.io import write_json, write_jsonl
from flows.forestpersons.common import TIERS, boxes, check_set, fit, load_set, log_model, save_set
from flows.forestpersons.params import Params
from flows.forestpersons.spec import SCENES, SPLIT
from flows.runtime.stages import StageContext

SPLITS = ("train", "val", "test")


def tier_of(difficulty: float, easy_below: float, hard_from: float) -> str:
    return "easy" if difficulty < easy_below else "hard" if difficulty >= hard_from else "medium"


def sequence_difficulty(dets, doc: dict) -> dict[str, float]:
    """1 - AP50 per sequence from per-image detections."""
    gts = boxes(doc)
    by_seq: dict[str, list[int]] = {}
    for i, r in enumerate(doc["images"]):
        by_seq.setdefault(r["sequence"], []).append(i)
    out = {}
    for seq, idx in by_seq.items():
        ms = [C.match_image(dets[i][0], dets[i][1], gts[i], np.zeros(len(gts[i]), bool)) for i in idx]
        ap50 = C.average_precision(C.pool(ms))["ap50"][0]
        out[seq] = 1.0 if np.isnan(ap50) else float(1.0 - ap50)
    return out


def allocate(seqs_by_tier: dict[str, list[str]], sizes: dict[str, int], seed: int) -> dict[str, str]:
    """sequence -> split: within each tier, proportional to ``sizes`` by largest remainder."""
    total = sum(sizes.values())
    frac = np.array([sizes[s] / total for s in SPLITS])
    rng = np.random.default_rng(seed)
    out = {}
    for tier in TIERS:
        seqs = sorted(seqs_by_tier.get(tier, []))
        rng.shuffle(seqs)
        want = frac * len(seqs)
        n = np.floor(want).astype(int)
        for j in np.argsort(-(want - n), kind="stable")[: len(seqs) - n.sum()]:
            n[j] += 1
        start = 0
        for s, k in zip(SPLITS, n):
            out.update({q: s for q in seqs[start : start + k]})
            start += k
    return out


def _subset(images, doc, keep: list[int], tiers: dict[str, str]):
    pos = {old: new for new, old in enumerate(keep)}
    recs = [{**doc["images"][i], "id": pos[i], "tier": tiers[doc["images"][i]["sequence"]]} for i in keep]
    anns = [{**a, "image_id": pos[a["image_id"]]} for a in doc["annotations"] if a["image_id"] in pos]
    for k, a in enumerate(anns, start=1):
        a["id"] = k
    return images[keep], recs, anns


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    scenes = ctx.input(SCENES)
    urban, udoc = load_set(scenes, "urban_train")
    forest, fdoc = load_set(scenes, "forest_pool")
    model, hist = fit(urban, udoc, p, p.tiers.reference_seed)
    out = ctx.output_dir(SPLIT)
    ref_dir = CN.save_model(model, out / "reference")
    log_model(
        ctx,
        "reference-urban",
        {"domain": "urban", "seed": p.tiers.reference_seed, "role": "tier reference"},
        hist,
        ref_dir,
    )
    diff = sequence_difficulty(CN.detect(model, forest), fdoc)
    tiers = {s: tier_of(d, p.tiers.easy_below, p.tiers.hard_from) for s, d in diff.items()}
    preset = {r["sequence"]: r["hf_split"] for r in fdoc["images"] if r.get("hf_split") in SPLITS}
    if preset:  # the HF set comes split by the authors: keep theirs
        assign = {s: preset.get(s, "train") for s in diff}
    else:
        sizes = {"train": p.scenes.train_images, "val": p.scenes.val_images, "test": p.scenes.test_images}
        assign = allocate({t: [s for s in diff if tiers[s] == t] for t in TIERS}, sizes, p.scenes.seed)
    rows = [
        {"id": s, "sequence": s, "difficulty": round(diff[s], 6), "tier": tiers[s], "split": assign[s]}
        for s in sorted(diff)
    ]
    image_rows = [
        {"id": r["file_name"], "sequence": r["sequence"], "split": assign[r["sequence"]]} for r in fdoc["images"]
    ]
    import pandas as pd

    V.validate(
        rows,
        [
            V.unique("sequence"),
            V.in_set("tier", list(TIERS)),
            V.in_set("split", list(SPLITS)),
            V.between("difficulty", 0, 1),
        ],
        name="forestpersons/sequences",
        result_path=out / "_checks" / "sequences.json",
    )
    pairs = pd.DataFrame(image_rows)[["sequence", "split"]].drop_duplicates().rename(columns={"sequence": "id"})
    V.validate(
        pairs,
        [V.unique("id")],
        name="forestpersons/no-sequence-in-two-splits",
        result_path=out / "_checks" / "sequence_splits.json",
    )
    summary = {"reference": {"train_loss": hist["loss"][-1]}, "tiers": {}}
    for split in SPLITS:
        keep = [i for i, r in enumerate(fdoc["images"]) if assign[r["sequence"]] == split]
        imgs, recs, anns = _subset(forest, fdoc, keep, tiers)
        check_set(
            {"images": recs, "annotations": anns},
            p.scenes.size,
            f"forestpersons/forest_{split}",
            out / "_checks" / f"forest_{split}.json",
        )
        save_set(out, f"forest_{split}", imgs, recs, anns)
        summary["tiers"][split] = {t: sum(r["tier"] == t and r["split"] == split for r in rows) for t in TIERS}
    write_jsonl(out / "sequences.jsonl", rows)
    write_json(out / "summary.json", summary)
    return summary
