"""AssoMem's champion: the memory index of the first seed's largest memory unit, with its fitted CMI weights.

The folder (``data/assomem/runs/champion/``: ``index.npz`` + ``index.json``, see
``components.retrieval.assomem.index``) holds what the method builds and fits for that unit: the utterance and
clue embeddings, the clue of each utterance, the clue-utterance graph (CSR), the utterance times and the CMI
fusion weights per question type fitted on the calibration split. On a real source (one nominal size) it is
the unit with the most test questions. Re-evaluated as the evaluate stage scores the method ``assomem``: every
question of the unit is retrieved in one pass (as the retrieve stage does), and the held-out test questions'
Recall@10, Recall@6 and nDCG@10 (utterance level, ``ir_measures``) are averaged. The question embeddings are
the embed stage's (``data/assomem/embeddings/<base>.npz``). PageRank, the bins and the ranking are
deterministic (ties broken by relevance, then position), so an unchanged index gives the same numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "assomem"
METHOD = "assomem"
LOADER = "components.retrieval.assomem.index:load_index"
LIBRARIES = ("scipy", "ir-measures", "pytrec-eval-terrier")
RULES = {
    "recall_at_10": Rule(higher_is_better=True, tolerance=0.02, relative=False),  # claims 1-2's R@10: 2 points
    "recall_at_6": Rule(higher_is_better=True, tolerance=0.02, relative=False),  # claim 3's R@6: 2 points
    "ndcg_at_10": Rule(higher_is_better=True, tolerance=0.02, relative=False),  # a 0-1 score: 2 points
}
SPLIT = "test"


def choose(units: list[dict], n_test: dict[str, int]) -> dict | None:
    """The first seed's largest unit (most test questions on ties, then the first); None without units."""
    if not units:
        return None
    first = [u for u in units if u["seed"] == units[0]["seed"]]
    best = max(first, key=lambda u: (u["size"], n_test.get(u["unit"], 0)))
    return best if n_test.get(best["unit"], 0) > 0 else None


def settings_for(unit: dict) -> dict[str, Any]:
    from flows.assomem.spec import EMBEDDINGS, MEMORIES

    return {"memories": MEMORIES, "embeddings": EMBEDDINGS, "unit": unit["unit"], "split": SPLIT}


def unit_data(settings: dict, root: Path) -> tuple[Any, Any]:
    """(the unit's Memory, its questions' embeddings) from the generate and embed stages' outputs."""
    from components.errors import DataError
    from components.inputs import load_npz
    from flows.assomem.common import load_base, load_units, unit_view

    mem_dir, emb_dir = Path(root) / settings["memories"], Path(root) / settings["embeddings"]
    units_file = mem_dir / "units.json"
    if not units_file.is_file():
        raise DataError(
            f"{units_file}: AssoMem's memories not found (run `paperline run assomem --stage generate` or `dvc pull`)"
        )
    unit = next((u for u in load_units(mem_dir) if u["unit"] == settings["unit"]), None)
    if unit is None:
        raise DataError(
            f"{units_file}: no memory unit {settings['unit']!r} (the memories were regenerated with other data params)"
        )
    emb_file = emb_dir / f"{unit['base']}.npz"
    for path in (mem_dir / unit["base"] / "utterances.jsonl", mem_dir / unit["base"] / "questions.jsonl", emb_file):
        if not path.is_file():
            raise DataError(
                f"{path}: AssoMem's evaluation data not found (run `paperline run assomem --stage embed` or `dvc pull`)"
            )
    base = load_base(mem_dir, unit["base"])
    _, mem = unit_view(base, unit)
    qpos = {q["id"]: i for i, q in enumerate(base.questions)}
    with load_npz(emb_file) as z:
        q_embs = z["questions"][[qpos[q["id"]] for q in mem.questions]]
    return mem, q_embs


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    """Mean Recall@10, Recall@6 and nDCG@10 of the index's rankings over the unit's held-out questions."""
    import numpy as np

    from components.errors import DataError
    from components.retrieval import metrics as M

    mem, q_embs = unit_data(settings, root)
    if list(model.ids) != mem.ids:
        raise DataError(
            f"assomem champion: the index's {len(model.ids)} utterances are not unit "
            f"{settings['unit']!r}'s {len(mem.ids)} (the memories changed since it was built)"
        )
    qs = mem.questions
    ranked = model.search(q_embs, [q["query_time"] for q in qs], [q["text"] for q in qs], [q["type"] for q in qs])
    held = [(q, r) for q, r in zip(qs, ranked) if q["split"] == settings["split"]]
    if not held:
        raise DataError(f"assomem champion: unit {settings['unit']!r} has no {settings['split']} questions")
    ids = model.ids
    per_q = M.per_query({q["id"]: q["gold"] for q, _ in held}, {q["id"]: [ids[i] for i in r] for q, r in held})
    mean = {k: float(np.mean([v[k] for v in per_q.values()])) for k in ("R@10", "R@6", "nDCG@10")}
    return {"recall_at_10": mean["R@10"], "recall_at_6": mean["R@6"], "ndcg_at_10": mean["nDCG@10"]}


def save(folder: Path, arrays: tuple, mem, config, weights: dict, top_k: int, unit: dict) -> Path:
    """Write the unit's index (``arrays``: the retrieve stage's loader output, less the questions) to ``folder``."""
    from components.retrieval.assomem.index import save_index

    utt, adj, utt_clue, clue_embs = arrays
    return save_index(
        folder,
        utt_embs=utt,
        times=mem.timestamps,
        utt_clue=utt_clue,
        clue_embs=clue_embs,
        adj=adj,
        config=config,
        weights=weights,
        ids=mem.ids,
        sessions=mem.sessions,
        top_k=top_k,
        meta={"unit": unit["unit"], "seed": unit["seed"], "size": unit["size"], "method": METHOD},
    )


def candidate(run_id: str | None, name: str, folder: Path, unit: dict, root: Path) -> dict | None:
    """The champion record: its metrics computed on the index loaded back from ``folder`` by its logged loader."""
    return evaluated_candidate(SLUG, run_id, name, folder, LOADER, evaluate, RULES, settings_for(unit), root)
