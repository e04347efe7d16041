"""ForestPersons' champion: the forest-trained TinyCenterNet of the first forest seed (``models/forest-s<seed>/``).

The paper is a benchmark; its method is training the detector on under-canopy forest images (claim 1: the
forest-trained detector beats the urban-trained one on forest test images), so the champion is that detector,
first seed, saved by the train stage (config.json + model.safetensors) and logged as the MLflow model of its
child run ``forest-s<seed>`` (loader ``components.detection.centernet:load_model``). It is re-evaluated as the
evaluate stage scores every detector: heatmap peaks on the held-out forest test split
(``data/forestpersons/split/forest_test``; ``eval.top_k`` and ``eval.min_score`` of the run) scored by
pycocotools' COCOeval (AP@[.5:.95], AP50, AR@100, one area range). Decoding is a deterministic function of the
weights (eval mode, no sampling) and the test set is fixed, so an unchanged model in an unchanged
torch/pycocotools gives the same numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flows.forestpersons.common import LOADER  # the allow-listed loader its child run is logged with
from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "forestpersons"
DOMAIN = "forest"
LIBRARIES = ("pycocotools", "safetensors")
RULES = {
    # COCO rates in [0, 1], in their own units: half a point of AP (half the claims' 1-point band,
    # claims.delta), a point of AP50 and of AR (larger and noisier at these small AP values)
    "ap": Rule(higher_is_better=True, tolerance=0.005, relative=False),
    "ap50": Rule(higher_is_better=True, tolerance=0.01, relative=False),
    "ar": Rule(higher_is_better=True, tolerance=0.01, relative=False),
}


def choose(p) -> tuple[int, str]:
    """(seed, model name) of the champion: the first forest seed (the params require forest seeds)."""
    seed = p.train.seeds[DOMAIN][0]
    return seed, f"{DOMAIN}-s{seed}"


def settings_for(p, split_rel: str) -> dict[str, Any]:
    return {"test_dir": split_rel, "test_set": "forest_test", "top_k": p.eval.top_k, "min_score": p.eval.min_score}


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    from components.detection import centernet as CN
    from components.errors import DataError
    from flows.forestpersons.common import load_set
    from flows.forestpersons.evaluate import cocoeval_stats

    folder, name = Path(root) / settings["test_dir"], str(settings["test_set"])
    for path in (folder / f"{name}.npz", folder / f"{name}.json"):
        if not path.is_file():
            raise DataError(
                f"{path}: forestpersons' test set not found (run `paperline run forestpersons --stage "
                "split` or `dvc pull`)"
            )
    images, doc = load_set(folder, name)
    dets = CN.detect(model, images, top_k=int(settings["top_k"]), min_score=float(settings["min_score"]))
    stats = cocoeval_stats(doc, dets)
    return {k: stats[k] for k in RULES}


def candidate(p, run_id: str | None, name: str, folder: Path, split_rel: str, root: Path) -> dict | None:
    """The champion record: its metrics computed on the detector loaded back from ``folder`` by its logged loader."""
    if run_id is None:  # untracked: no params needed, nothing to register
        return None
    return evaluated_candidate(SLUG, run_id, name, folder, LOADER, evaluate, RULES, settings_for(p, split_rel), root)
