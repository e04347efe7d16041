"""forestpersons's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(
    4, "forestpersons", "ForestPersons: an under-canopy missing-person detection benchmark", "04-forestpersons.md"
)

L = Layout("forestpersons", code=("common",))
SCENES, SPLIT, MODELS, EVAL = (L.out(n) for n in ("scenes", "split", "models", "eval"))
_SCENES = ("components/scenes", "components/data/validate.py")
_DET = ("components/detection",)

STAGES = (
    L.stage(
        "generate",
        code=_SCENES,
        params=("scenes", "source"),
        writes=(SCENES,),
        summary="procedural urban/aerial training sets, urban test set and the forest sequence pool (or the HF "
        "set); GX: boxes in bounds, pose and visibility bins",
    ),
    L.stage(
        "split",
        code=(*_SCENES, *_DET),
        reads=(SCENES,),
        params=("scenes", "tiers", "train", "resources"),
        writes=(SPLIT,),
        after=("generate",),
        summary="difficulty = 1 - AP50 of an urban reference detector per forest sequence; tiers; split by "
        "sequence, tiers spread over train/val/test; GX: no sequence in two splits",
    ),
    L.stage(
        "train",
        code=(*_SCENES, *_DET),
        reads=(SCENES, SPLIT),
        params=("scenes", "train", "resources"),
        writes=(MODELS,),
        after=("split",),
        summary="a tiny CenterNet per training domain (forest, urban, aerial) and seed, fanned out",
    ),
    L.stage(
        "evaluate",
        code=(*_SCENES, *_DET),
        reads=(SCENES, SPLIT, MODELS),
        params=("train", "eval"),
        writes=(EVAL,),
        after=("train",),
        summary="HOG zero-shot and every CenterNet on the forest test set: COCO metrics (pycocotools), subset AP "
        "by pose/visibility/tier, recall at 1 FPPI; vtest.avi frames",
    ),
    L.report_stage(
        reads=(EVAL, SPLIT, SCENES, MODELS),
        code=_DET,
        params=("train", "eval"),
        plots={"ap_by_domain.csv": {"x": "ap", "y": "detector", "template": "bar_horizontal", "color": "domain"}},
        after=("evaluate",),
        summary="claims 1-4; AP per training domain, against visibility and per pose; a scene panel",
    ),
)
