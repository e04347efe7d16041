"""AnthroBench's champion: J3 (the bag-of-words logistic-regression judge) of the first seed, the only model the
pipeline trains (``j3-seed<first seed>``, logged by the judge stage with the allow-listed, pickle-free
``components.anthrobench.judges:load_j3``: ``config.json`` + ``j3.npz``).

It is re-evaluated on simulator-labelled sentences drawn fresh from a fixed generator seed: ``f1_eval_bank``
on the cue templates J3 never trains on (the eval bank, the phrasings of the scored simulator dialogues) and
``f1_train_bank`` on new fills of the templates it trains on, each the micro F1 over the 13 judged behaviours
(neutral sentences included, no behaviour). The sentences come from code (``simulate.labelled_sentences``), so an
unchanged model in an unchanged scikit-learn gives the same numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "anthrobench"
LOADER = "components.anthrobench.judges:load_j3"
LIBRARIES = ("scikit-learn",)
RULES = {  # micro F1, higher is better; 0.02 absolute either way (C4's no-effect band is 0.01 on a larger set)
    "f1_eval_bank": Rule(higher_is_better=True, tolerance=0.02, relative=False),
    "f1_train_bank": Rule(higher_is_better=True, tolerance=0.02, relative=False),
}
EVAL_SEED = 40_000  # the generator seed of the re-evaluation sentences (the data stage uses 10_000+ and 20_000+)


def choose(p) -> int:
    """The champion's seed: the first of data.seeds."""
    return p.data.seeds[0]


def settings_for(p) -> dict[str, Any]:
    return {"n_per_behaviour": max(20, p.data.dev_sentences), "seed": EVAL_SEED}


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    """Micro F1 of ``model`` (a J3 with ``predict(texts)``) on both banks' fresh sentences."""
    import numpy as np

    from components.anthrobench.behaviours import JUDGED
    from components.anthrobench.judges import f1
    from components.anthrobench.simulate import labelled_sentences

    out = {}
    for split in ("eval", "train"):
        rows = labelled_sentences(int(settings["n_per_behaviour"]), seed=int(settings["seed"]), split=split)
        truth = np.array([[int(r["behaviour"] == b) for b in JUDGED] for r in rows])
        out[f"f1_{split}_bank"] = float(f1(truth, model.predict([r["text"] for r in rows])))
    return out


def candidate(p, run_id: str | None, folder: Path, root: Path) -> dict | None:
    """The champion entry of the judge stage's summary (metrics on J3 loaded back from ``folder``)."""
    return evaluated_candidate(SLUG, run_id, f"j3-seed{choose(p)}", folder, LOADER, evaluate, RULES,
                               settings_for(p), root)  # fmt: skip
