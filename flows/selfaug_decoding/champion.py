"""selfaug-decoding's champion: the tiny VLM of the first seed (``tiny-vlm-seed<s>``), with its decoding settings.

It is the train stage's VLM as logged (the allow-listed ``components.selfaug_decoding.model:load_model``:
config.json + model.safetensors, no pickle), re-evaluated on the held-out POPE questions of all three splits
(``data/selfaug-decoding/data/pope.jsonl`` over ``eval_images.npz``) exactly as the decode stage answers them
(``flows.selfaug_decoding.decode._run``: the same batches and augmentation generators, seeded by VLM seed and
batch): greedy decoding's accuracy and F1, and Self-Aug's F1 at the card's alpha and tau with the params' SAS
rule map (the tuned setting comes after training, in the decode stage; the champion is judged at a fixed
setting so that the accepted value does not move with tuning). Nothing is sampled from an unseeded generator:
an unchanged model in an unchanged torch gives the same numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "selfaug-decoding"
LOADER = "components.selfaug_decoding.model:load_model"
LIBRARIES = ("safetensors",)
# rates in [0, 1]; 0.02 either way is 2 points, twice the claims' no-effect band for F1 (claims.delta = 1 point)
RULES = {
    "greedy_accuracy": Rule(higher_is_better=True, tolerance=0.02, relative=False),
    "greedy_f1": Rule(higher_is_better=True, tolerance=0.02, relative=False),
    "selfaug_f1": Rule(higher_is_better=True, tolerance=0.02, relative=False),
}


def choose(p) -> int:
    """The champion's VLM seed: the first one."""
    return p.model.seeds[0]


def settings_for(p, seed: int) -> dict[str, Any]:
    from flows.selfaug_decoding.spec import DATA

    d = p.decoding
    return {"images": f"{DATA}/eval_images.npz", "pope": f"{DATA}/pope.jsonl", "seed": seed,
            "decoding": {"crop_ratio": d.crop_ratio, "mask_ratio": d.mask_ratio, "noise_step": d.noise_step,
                         "batch": d.batch, "sas_rules": dict(d.sas_rules)},
            "alpha": 1.0, "tau": 0.5, "threads": p.resources.threads}  # fmt: skip


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    """Greedy accuracy and F1, and Self-Aug's F1, on every held-out POPE question (rates in [0, 1])."""
    from components.errors import DataError
    from components.inputs import load_npz
    from components.io import read_jsonl
    from components.selfaug_decoding import decoding as D
    from components.selfaug_decoding.metrics import pope
    from components.selfaug_decoding.scenes import VOCAB
    from components.training.threads import threads
    from flows.selfaug_decoding.decode import _run

    s = settings
    for key in ("images", "pope"):
        if not (Path(root) / s[key]).is_file():
            raise DataError(f"{Path(root) / s[key]}: selfaug-decoding's evaluation data not found (run "
                            "`paperline run selfaug-decoding --stage data` or `dvc pull`)")  # fmt: skip
    with load_npz(Path(root) / s["images"], keys=("images", "offset")) as z:
        images, offset = z["images"], int(z["offset"])
    q = [{**r, "qtype": "existence"} for r in read_jsonl(Path(root) / s["pope"], ("q", "label", "image"))]
    labels = [r["label"] == "yes" for r in q]
    out = {}
    with threads(int(s["threads"])):
        for name in ("greedy", "selfaug"):
            meth = D.methods(alpha=float(s["alpha"]), tau=float(s["tau"]))[name]
            done = _run(model, images, offset, q, meth, s["decoding"], 1, int(s["seed"]), 0)
            ans = [bool(t) and VOCAB[t[0]] == "yes" for _, t, *_ in done]
            v = pope(ans, labels)
            out[f"{name}_f1"] = float(v["f1"])
            if name == "greedy":
                out["greedy_accuracy"] = float(v["accuracy"])
    return out


def candidate(p, run_id: str | None, name: str, folder: Path, root: Path, seed: int) -> dict | None:
    """The champion entry of the train stage's summary (metrics on the model loaded back from ``folder``)."""
    return evaluated_candidate(SLUG, run_id, name, folder, LOADER, evaluate, RULES, settings_for(p, seed), root)
