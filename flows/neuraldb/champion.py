"""NeuralDB's champion: the tiny LM edited by NeuralDB on the first edit seed's largest edit set, with its store.

The folder (``data/neuraldb/edits/champion/``) holds the unedited LM (``config.json`` + ``model.safetensors``)
and NeuralDB's edit state (``neuraldb.safetensors``: the stored keys, residuals and key mean; ``neuraldb.json``:
the layer, the gate and its dev-tuned threshold γ, the ids); the allow-listed loader
``components.editing.neuraldb:load_edited`` attaches the store as the forward hook the edit stage used.
Re-evaluated as the edit stage measures that run (``runs.jsonl``: seed = first, m = largest, method = neuraldb)
on the same requests: efficacy (rewrite prompts), generalisation (held-out paraphrase templates), specificity
(locality: never-edited neighbour subjects) and the held-out Austen NLL per token. There is no sampling: every
value is a deterministic function of the weights, the store and the fixed request and window lists (evaluated
on the edit stage's thread count), so an unchanged model in unchanged torch/tokenizers gives the same numbers.
Only the trained tiny LM has a champion (a pretrained base, ``model.base`` = a Hugging Face id, has none).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from components.inputs import load_npy
from components.training.threads import threads
from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "neuraldb"
METHOD = "neuraldb"
LOADER = "components.editing.neuraldb:load_edited"
LIBRARIES = ("tokenizers", "safetensors")
RULES = {
    "efficacy": Rule(higher_is_better=True, tolerance=0.02, relative=False),  # a rate: 2 points (2 facts of 100)
    "generalisation": Rule(higher_is_better=True, tolerance=0.02, relative=False),  # paraphrase efficacy, as above
    "specificity": Rule(higher_is_better=True, tolerance=0.02, relative=False),  # locality rate, as above
    "ppl_nll": Rule(higher_is_better=False, tolerance=0.02),  # held-out NLL (nats/token): 2% of the accepted value
}


def settings_for(p, seed: int, m: int) -> dict[str, Any]:
    """What the evaluator reads besides the model (paths relative to the checkout)."""
    from flows.neuraldb.spec import DATA

    e = p.editing
    return {
        "edits": f"{DATA}/edits_seed{seed}.jsonl",
        "tokenizer": f"{DATA}/tokenizer.json",
        "ppl_tokens": f"{DATA}/ppl_tokens.npy",
        "seed": int(seed),
        "m": int(m),
        "seq_len": p.model.seq_len,
        "ppl_windows": e.ppl_windows,
        "batch_size": e.batch_size,
        "threads": p.resources.threads,
    }


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    """The edit stage's rewrite metrics and held-out NLL of ``model`` (the edited LM) on the champion's requests."""
    import numpy as np
    import torch

    from components.editing.facts import check_requests
    from components.editing.metrics import rewrite_quality, window_nll
    from components.errors import DataError
    from components.io import read_jsonl
    from components.training.tokenizer import load_bpe

    s = settings
    paths = {k: Path(root) / s[k] for k in ("edits", "tokenizer", "ppl_tokens")}
    for path in paths.values():
        if not path.is_file():
            raise DataError(
                f"{path}: NeuralDB's evaluation data not found (run `paperline run neuraldb --stage data` "
                "or `dvc pull`)"
            )
    tok = load_bpe(paths["tokenizer"])
    requests = check_requests(read_jsonl(paths["edits"]))[: int(s["m"])]
    if len(requests) < int(s["m"]):
        raise DataError(f"{paths['edits']}: {len(requests)} edit requests, the champion was edited with {s['m']}")
    ppl = torch.from_numpy(load_npy(paths["ppl_tokens"]).astype(np.int64))
    with threads(int(s.get("threads", 1))), torch.no_grad():
        q = rewrite_quality(
            model, lambda t: tok.encode(t, add_special_tokens=False).ids, requests, int(s["batch_size"])
        )
        nll = window_nll(model, ppl, seq_len=int(s["seq_len"]), n_windows=int(s["ppl_windows"]))
    return {
        "efficacy": float(np.nanmean(q["efficacy"])),
        "generalisation": float(np.nanmean(q["generalisation"])),
        "specificity": float(np.nanmean(q["specificity"])),
        "ppl_nll": float(np.mean(nll)),
    }


def build_store(stats, targets, m: int, method_kw: dict):
    """NeuralDB's store of the first ``m`` targets, built as ``components.editing.apply.apply_edit`` builds it."""
    from components.editing.neuraldb import NeuralKVDB

    db = NeuralKVDB(stats.mean, gamma=method_kw["gamma"], gate=method_kw["gate"], temperature=method_kw["temperature"])
    db.add(list(targets.ids[:m]), targets.keys[:m], targets.residuals[:m])
    return db


def save(model, db, layer: int, folder: Path) -> Path:
    from components.editing.neuraldb import save_edited

    return save_edited(model, db, layer, folder)


def candidate(p, run_id: str | None, name: str, folder: Path, seed: int, m: int, root: Path) -> dict | None:
    """The champion record: its metrics computed on the edited model loaded back from ``folder`` by its logged
    loader."""
    return evaluated_candidate(SLUG, run_id, name, folder, LOADER, evaluate, RULES, settings_for(p, seed, m), root)
