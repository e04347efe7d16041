"""implicit-planning's champion: the positive control model of the first seed (``positive-s<seed>``,
``data/implicit-planning/controls/positive-s<seed>``).

It is the controls stage's model as logged (a TinyLM: config.json + model.safetensors, loaded by the allow-listed
``components.models.tiny_lm:load_model``, no pickle), re-evaluated on the control first lines
(``data/implicit-planning/data/control_lines.jsonl``) with the pipeline's own steering experiment for the first
control pair, decoded greedily (temperature 0, one line 2 per test prompt) so that an unchanged model in an unchanged
torch gives the same numbers. Metrics: the unsteered RF1 rhyme rate (the model rhymes), the steered RF2-article
rate (steering flips the article before the rhyme word: claim 1's mechanism) and the steered share of pre-rhyme
positions with KL > 1 (claim 3's quantity).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from components.training.threads import threads
from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "implicit-planning"
LANGUAGE = "positive"
LOADER = "components.models.tiny_lm:load_model"
LIBRARIES = ("pronouncing",)  # the rhyme judge of the real lines is not used here, but the task module imports it
RULES = {
    # rates over 10-20 greedy lines: one changed line moves a rate by 0.05-0.1; a changed kernel may flip one
    "rf1_unsteered": Rule(higher_is_better=True, tolerance=0.1, relative=False),
    "article_steered": Rule(higher_is_better=True, tolerance=0.1, relative=False),
    "kl_share_steered": Rule(higher_is_better=True, tolerance=0.1, relative=False),
}


def choose(p) -> tuple[str, int]:
    """(language, seed) of the champion: the positive control of the first seed."""
    return LANGUAGE, p.data.seeds[0]


def settings_for(p) -> dict[str, Any]:
    from flows.implicit_planning.spec import DATA

    rf1, rf2 = p.control.pairs[0]
    return {
        "lines": f"{DATA}/control_lines.jsonl",
        "words_per_family": p.control.words_per_family,
        "n_families": p.control.n_families,
        "rf1": rf1,
        "rf2": rf2,
        "position": p.steer.control_position,
        "multiplier": p.steer.multiplier,
        "lines_select": p.data.lines_select,
        "max_new_tokens": p.steer.max_new_tokens,
        "threads": p.resources.threads,
    }


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    import numpy as np

    from components.errors import DataError
    from components.implicit_planning.couplets import CoupletLanguage
    from components.implicit_planning.steering import run_pair
    from components.implicit_planning.tasks import control_task
    from components.interp.lm import SteerableLM
    from components.io import read_jsonl
    from flows.implicit_planning.steer import lines_of

    path = Path(root) / settings["lines"]
    if not path.is_file():
        raise DataError(
            f"{path}: the control first lines not found (run `paperline run implicit-planning --stage data`)"
        )
    lang = CoupletLanguage(words_per_family=int(settings["words_per_family"]), n_families=int(settings["n_families"]))
    lines = read_jsonl(path, required=("family", "split", "line"))
    rf1, rf2 = settings["rf1"], settings["rf2"]
    train1 = lines_of(lines, rf1, "train")
    with threads(int(settings["threads"])):
        lm = SteerableLM(model.eval(), pad_id=0)
        res = run_pair(
            lm,
            control_task(lang, position=settings["position"]),
            rf1=rf1,
            rf2=rf2,
            train_from=train1,
            train_to=lines_of(lines, rf2, "train"),
            select_lines=train1[: int(settings["lines_select"])],
            test_lines=lines_of(lines, rf1, "test"),
            layers=range(lm.n_layers),
            multiplier=float(settings["multiplier"]),
            samples=1,
            max_new_tokens=int(settings["max_new_tokens"]),
            temperature=0.0,
            seed=0,
            batch_size=64,
        )
    art = lang.article_of_family(rf2)

    def mean(cond: str, key) -> float:
        vals = [key(r) for r in res.rows if r["condition"] == cond]
        vals = [v for v in vals if v is not None and v == v]
        return float(np.mean(vals)) if vals else 0.0

    return {
        "rf1_unsteered": mean("unsteered", lambda r: r["rf1_hit"]),
        "article_steered": mean("steered", lambda r: int(r["article"] == art)),
        "kl_share_steered": mean("steered", lambda r: r["kl_share"]),
    }


def candidate(p, run_id: str | None, folder: Path, root: Path) -> dict | None:
    language, seed = choose(p)
    return evaluated_candidate(
        SLUG, run_id, f"{language}-s{seed}", folder, LOADER, evaluate, RULES, settings_for(p), root
    )
