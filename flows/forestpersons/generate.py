"""Stage ``generate``: the procedural sets (components.scenes), or the HF ForestPersons set for the forest
domain (``source.kind: hf``); every set passes the GX suite before it is written.

Writes ``data/forestpersons/scenes/``: ``urban_train``, ``aerial_train``, ``urban_test`` and ``forest_pool``
(every forest sequence; the ``split`` stage assigns them). ``bbox`` is the full-body (amodal) box and is what
training and the metrics use; ``vis_bbox`` is the visible extent, stored beside it.
"""

from __future__ import annotations

import time

from components.scenes.sequences import generate_set
from flows.forestpersons.common import check_set, save_set
from flows.forestpersons.params import Params
from flows.forestpersons.spec import SCENES
from flows.runtime.stages import StageContext

SETS = {
    "urban_train": ("urban", "train_images"),
    "aerial_train": ("aerial", "train_images"),
    "urban_test": ("urban", "urban_test_images"),
}


def run(ctx: StageContext[Params]) -> dict:
    p, s = ctx.params, ctx.params.scenes
    out = ctx.output(SCENES)
    summary, start, n_images = {}, time.perf_counter(), 0
    plan = dict(SETS)
    if p.source.kind == "synthetic":
        plan["forest_pool"] = ("forest", None)
    for k, (name, (domain, key)) in enumerate(plan.items()):
        n = (s.train_images + s.val_images + s.test_images) if key is None else getattr(s, key)
        images, recs, anns = generate_set(
            domain,
            n_sequences=n // s.frames,
            n_frames=s.frames,
            size=s.size,
            jitter=s.jitter,
            seed=s.seed * 1000 + k,
            prefix=name,
        )
        summary[name] = _write(out, name, images, recs, anns, s.size)
        n_images += len(images)
    if p.source.kind == "hf":
        from components.scenes.forestpersons_hf import load_forestpersons

        images, recs, anns = load_forestpersons(
            p.source.hf_id, local_dir=p.source.local_dir, size=s.size, max_images=p.source.max_images
        )
        summary["forest_pool"] = _write(out, "forest_pool", images, recs, anns, s.size)
        n_images += len(images)
    summary["scenes_per_s"] = round(n_images / (time.perf_counter() - start), 1)
    return summary


def _write(out, name, images, recs, anns, size) -> dict:
    doc = {"images": recs, "annotations": anns}
    check_set(doc, size, f"forestpersons/{name}", out / "_checks" / f"{name}.json")
    save_set(out, name, images, recs, anns)
    poses = {q: sum(a["pose"] == q for a in anns) for q in ("standing", "sitting", "lying")}
    vis = {str(v): sum(a["visibility"] == v for a in anns) for v in (100, 70, 40, 20)}
    return {
        "images": len(images),
        "annotations": len(anns),
        "sequences": len({r["sequence"] for r in recs}),
        "poses": poses,
        "visibility": vis,
        "people_per_image": round(len(anns) / max(len(recs), 1), 3),
    }
