"""GoT-R1's champion: the decoder that GRPO with the full reward trained on the first seed
(``grpo-full-seed<seed>``, ``data/got-r1/runs/models/grpo-full-seed<seed>``).

It is the rl stage's model as logged (config + safetensors, loaded by the allow-listed
``components.got_r1.model:load_model``, no pickle), re-evaluated on the test prompts (``data/got-r1/data/
prompts.jsonl``, split ``test``) exactly as the rl stage scores it: a greedy reasoning chain and picture per
prompt, rendered, detected and checked by the GenEval-style rules. The metrics are the overall accuracy
(claim 1's quantity) and the accuracies of the position and colour-attribute prompts. Greedy decoding of an
unchanged decoder in an unchanged torch gives the same pictures, so the same numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from components.training.threads import threads
from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "got-r1"
KIND = "full"
LOADER = "components.got_r1.model:load_model"
LIBRARIES = ("scipy",)  # the detector labels connected components with scipy.ndimage
RULES = {
    # accuracies over the test prompts (a few hundred): one changed picture moves a rate by a few thousandths
    "overall": Rule(higher_is_better=True, tolerance=0.02, relative=False),
    "acc_position": Rule(higher_is_better=True, tolerance=0.03, relative=False),
    "acc_color_attr": Rule(higher_is_better=True, tolerance=0.03, relative=False),
}


def choose(p) -> tuple[str, int]:
    """(reward kind, seed) of the champion: the full GoT-R1 reward on the first seed."""
    return KIND, p.rl.seeds[0]


def name_of(kind: str, seed: int) -> str:
    return f"grpo-{kind}-seed{seed}"


def settings_for(p) -> dict[str, Any]:
    from flows.got_r1.spec import DATA

    return {"prompts": f"{DATA}/prompts.jsonl", "image_size": p.data.image_size, "threads": p.resources.threads}


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    from components.errors import DataError
    from components.got_r1 import train as T
    from components.got_r1.tokens import Vocab
    from flows.got_r1.common import load_prompts

    path = Path(root) / settings["prompts"]
    if not path.is_file():
        raise DataError(f"{path}: GoT-R1's prompts not found (run `paperline run got-r1 --stage data`)")
    test = load_prompts(path, "test")
    with threads(int(settings["threads"])):
        outputs = T.generate(model, Vocab(int(settings["image_size"])), test, with_chain=True)
    s = T.summary(T.score_outputs(test, outputs, with_chain=True))
    return {k: s[k] for k in RULES}


def candidate(p, run_id: str | None, folder: Path, root: Path) -> dict | None:
    kind, seed = choose(p)
    name = name_of(kind, seed)
    return evaluated_candidate(SLUG, run_id, name, folder, LOADER, evaluate, RULES, settings_for(p), root)
