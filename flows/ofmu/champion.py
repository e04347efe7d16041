"""OFMU's champion: the language model OFMU unlearned on the first seed, re-evaluated on the TOFU-style splits.

Metrics are the evaluate stage's own (``components.unlearning.lm_eval.evaluate_model``): the mean answer
probability and ROUGE-L recall per split. Forgetting may not weaken (forget-set values may not rise) and
utility may not fall (retain and general values may not drop), each by 0.02 at most. Generation is greedy and
every value is a deterministic function of the weights, so an unchanged model gives the same numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from flows.runtime.champions import Rule
from flows.runtime.champions import candidate as make_candidate

SLUG = "ofmu"
METHOD = "ofmu"
LIBRARIES = ("tokenizers",)


def rules_for(splits) -> dict[str, Rule]:
    return {
        f"{split}_{m}": Rule(higher_is_better=split != "forget", tolerance=0.02, relative=False)
        for split in splits
        for m in ("prob", "rouge")
    }


def summarise(metrics: dict[str, dict[str, np.ndarray]]) -> dict[str, float]:
    """``{<split>_prob, <split>_rouge}``: means over each split's questions."""
    return {f"{split}_{m}": float(np.mean(vals[m])) for split, vals in metrics.items() for m in ("prob", "rouge")}


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    from components.errors import DataError
    from components.io import read_jsonl
    from components.training.tokenizer import eos_id, load_bpe
    from components.unlearning.lm_eval import evaluate_model
    from flows.ofmu.common import eval_splits

    qa, tok_file = Path(root) / settings["qa"], Path(root) / settings["tokenizer"]
    for path in (qa, tok_file):
        if not path.is_file():
            raise DataError(
                f"{path}: OFMU's evaluation data not found (run `paperline run ofmu --stage data` or `dvc pull`)"
            )
    tok = load_bpe(tok_file)
    splits = eval_splits(read_jsonl(qa), int(settings["n_eval_retain"]))
    return summarise(evaluate_model(model, tok, splits, eos=eos_id(tok), max_new=int(settings["max_new"])))


def candidate(run_id: str | None, name: str, metrics: dict[str, dict[str, np.ndarray]], settings: dict) -> dict | None:
    values = summarise(metrics)
    return make_candidate(SLUG, run_id, name, values, rules_for(metrics), settings)
