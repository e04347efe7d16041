"""VIP's champion: the policy VIP trained on the first seed (``vip-seed<seed>``, ``data/vip/runs/models/``).

It is the rl stage's policy as logged (a TinyLM: config.json + model.safetensors, loaded by the allow-listed
``components.models.tiny_lm:load_model``, no pickle), re-evaluated on the held-out prompts
(``data/vip/data/heldout.jsonl``) exactly as the rl stage's final evaluation measures it: ``eval_k`` samples per
prompt at temperature 1 from the stage's fixed generator (seed 10,000 + run seed), scored by exact match; the
metrics are the mean success rate (``mean_at_k``, claim 1's quantity) and the unbiased pass@k at k = ``eval_k``
(``pass_at_k``). The policy has no dropout and the sampler draws from one seeded generator, so an unchanged policy in
an unchanged torch gives the same draws and the same numbers (the last row of ``curves.jsonl`` for this run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from components.training.threads import threads
from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "vip"
METHOD = "vip"
LOADER = "components.models.tiny_lm:load_model"
LIBRARIES = ()  # plain torch sampling; torch and numpy are recorded for every paper
RULES = {
    # rates: absolute tolerances; a changed sampler (new draws) moves mean@8 on 300 x 8 samples by ~0.01 (1 sd)
    "mean_at_k": Rule(higher_is_better=True, tolerance=0.02, relative=False),
    "pass_at_k": Rule(higher_is_better=True, tolerance=0.03, relative=False),  # noisier: one success flips a prompt
}


def choose(p) -> tuple[str, int]:
    """(method, seed) of the champion: VIP (a required method) on the first seed."""
    return METHOD, p.rl.seeds[0]


def settings_for(p, seed: int) -> dict[str, Any]:
    """What :func:`evaluate` needs besides the model: the held-out prompts and the rl stage's sampling settings."""
    from flows.vip.spec import DATA

    return {
        "heldout": f"{DATA}/heldout.jsonl",
        "k": p.rl.eval_k,
        "max_new": p.rl.max_new,
        "sample_seed": 10_000 + seed,  # rl_loop.run's held-out generator for this seed
        "threads": p.resources.threads,
    }


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:

    from components.errors import DataError
    from components.io import read_jsonl
    from components.vip import evaluation as E

    s = settings
    path = Path(root) / s["heldout"]
    if not path.is_file():
        raise DataError(
            f"{path}: VIP's held-out prompts not found (run `paperline run vip --stage data` or `dvc pull`)"
        )
    k = int(s["k"])
    with threads(int(s["threads"])):  # the stage's thread count: the same logits, the same draws
        counts = E.correct_counts(model, read_jsonl(path), k, max_new=int(s["max_new"]), seed=int(s["sample_seed"]))
    acc = E.accuracy(counts, k, pass_ks=(k,))
    return {"mean_at_k": acc["mean@k"], "pass_at_k": acc[f"pass@{k}"]}


def candidate(p, run_id: str | None, name: str, folder: Path, root: Path, seed: int) -> dict | None:
    """The champion entry of the rl stage's summary (metrics on the model loaded back from ``folder``)."""
    return evaluated_candidate(SLUG, run_id, name, folder, LOADER, evaluate, RULES, settings_for(p, seed), root)
