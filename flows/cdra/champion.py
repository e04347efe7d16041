"""CDRA's champion: the policy the CDRA arm trained on the first seed (``cdra-seed<seed>``,
``data/cdra/runs/models/<seed>/cdra``).

It is the train stage's policy as logged (a TinyLM: config.json + model.safetensors, loaded by the allow-listed
``components.models.tiny_lm:load_model``, no pickle), re-evaluated on the held-out pairs
(``data/cdra/data/heldout.jsonl``) exactly as the train stage's final evaluation measures it: one greedy
response per pair, judged by the exact rule judge. The metrics are Acc_PF (claim 1's quantity), the
implicit-constraint satisfaction and the Acc_DA stand-in. Greedy decoding of an unchanged policy in an unchanged
torch gives the same responses, so the same numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from components.training.threads import threads
from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "cdra"
ARM = "cdra"
LOADER = "components.models.tiny_lm:load_model"
LIBRARIES = ()  # plain torch decoding; torch and numpy are recorded for every paper
RULES = {
    # rates on 300 greedy responses: one flipped response moves a rate by 0.0033; a changed kernel may flip a few
    "pf": Rule(higher_is_better=True, tolerance=0.02, relative=False),
    "implicit": Rule(higher_is_better=True, tolerance=0.02, relative=False),
    "da": Rule(higher_is_better=True, tolerance=0.02, relative=False),
}


def choose(p) -> tuple[str, int]:
    """(arm, seed) of the champion: CDRA on the first seed."""
    return ARM, p.data.seeds[0]


def settings_for(p) -> dict[str, Any]:
    from flows.cdra.spec import DATA

    return {"heldout": f"{DATA}/heldout.jsonl", "threads": p.resources.threads}


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    from components.cdra import cdpa as C
    from components.cdra import task as T
    from components.errors import DataError
    from components.io import read_jsonl

    path = Path(root) / settings["heldout"]
    if not path.is_file():
        raise DataError(f"{path}: CDRA's held-out pairs not found (run `paperline run cdra --stage data`)")
    with threads(int(settings["threads"])):
        rows = C.evaluate(model, [T.pair_of(r) for r in read_jsonl(path)])
    s = C.summary(rows)
    return {"pf": s["pf"], "implicit": s["implicit"], "da": s["da"]}


def candidate(p, run_id: str | None, folder: Path, root: Path) -> dict | None:
    arm, seed = choose(p)
    return evaluated_candidate(
        SLUG, run_id, f"{arm}-seed{seed}", folder, LOADER, evaluate, RULES, settings_for(p), root
    )
