"""MILCO's champion: the MILCO retriever of the first seed (SAP + LexEcho, the dev-chosen stage-2 rate) with the
index the evaluate stage searched: its encoder (config.json + model.safetensors, copied byte for byte from
``data/milco/models/seed_<first>/milco/``) and the ES->EN benchmark documents' unpruned sparse rows
(index.npz + index.json), in ``data/milco/eval/champion/``, loaded by ``components.sparse_retrieval.retriever``.

Re-evaluated as the evaluate stage scores the system ``milco`` on the task ``es-en`` (Spanish benchmark queries
against the English paragraphs): the queries are encoded by the loaded encoder, searched in the stored index and
scored per query with ``ir_measures`` (pytrec_eval) exactly as ``components.sparse_retrieval.metrics.per_query``
does for the stage: nDCG@10, R@100 and MRR@10, averaged over the benchmark queries. Inference is a deterministic
function of the weights (no dropout, a fixed batch size), the index is stored, and ranking ties are broken by
document position, so an unchanged champion on unchanged torch/scipy/ir_measures gives the same numbers. Encoding
the benchmark queries and searching takes seconds (no training).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "milco"
LOADER = "components.sparse_retrieval.retriever:load_retriever"  # the allow-listed loader its child run is logged with
VARIANT = "milco"
TASK = "es-en"  # the paper's cross-lingual setting: Spanish queries, English documents (claims C1-C4)
LIBRARIES = ("ir-measures", "pytrec-eval-terrier", "scipy", "tokenizers")
RULES = {  # rates in [0, 1]: tolerances in their own units, 0.02 = 2 nDCG points (twice the claims' delta)
    "ndcg10": Rule(higher_is_better=True, tolerance=0.02, relative=False),
    "recall100": Rule(higher_is_better=True, tolerance=0.02, relative=False),
    "mrr10": Rule(higher_is_better=True, tolerance=0.02, relative=False),
}
NAMES = {"ndcg10": "nDCG@10", "recall100": "R@100", "mrr10": "MRR@10"}  # metric -> the stage's per_query column


def settings_for(p) -> dict[str, Any]:
    from flows.milco.common import QUERIES, TASKS, TOKENIZER
    from flows.milco.spec import DATA

    return {
        "queries": f"{DATA}/{QUERIES}",
        "tokenizer": f"{DATA}/{TOKENIZER}",
        "split": TASKS[TASK][0],
        "query_len": p.model.query_len,
        "k": p.eval.k,
    }


def save(models: Path, seed: int, docs, doc_ids, folder: Path) -> Path:
    """The champion's folder: the seed's MILCO encoder files and the index the stage built from them."""
    from components.sparse_retrieval.retriever import save_retriever

    return save_retriever(Path(models) / f"seed_{seed}" / VARIANT, docs, doc_ids, folder)


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    from components.errors import DataError
    from components.io import read_jsonl
    from components.sparse_retrieval.lexicon import load_bpe
    from components.sparse_retrieval.metrics import per_query

    queries, tok_file = Path(root) / settings["queries"], Path(root) / settings["tokenizer"]
    for path in (queries, tok_file):
        if not path.is_file():
            raise DataError(
                f"{path}: MILCO's benchmark data not found (run `paperline stage milco data` or `dvc pull`)"
            )
    qs = [q for q in read_jsonl(queries) if q["split"] == settings["split"]]
    known = set(model.doc_ids)
    missing = [q["qid"] for q in qs if q["pair_id"] not in known]
    if not qs or missing:
        raise DataError(
            f"{queries}: {len(missing)} of {len(qs)} {settings['split']!r} queries have their document "
            f"outside the champion's index (the data changed since it was built; rerun milco)"
        )
    ranked = model.search(load_bpe(tok_file), [q["text"] for q in qs], int(settings["query_len"]), int(settings["k"]))
    pq = per_query({q["qid"]: [q["pair_id"]] for q in qs}, {q["qid"]: r for q, r in zip(qs, ranked)})
    return {metric: float(np.mean([pq[q["qid"]][col] for q in qs])) for metric, col in NAMES.items()}


def candidate(p, run_id: str | None, name: str, folder: Path, root: Path) -> dict | None:
    """The champion record: its metrics computed on the retriever loaded back from ``folder`` by its logged loader."""
    return evaluated_candidate(SLUG, run_id, name, folder, LOADER, evaluate, RULES, settings_for(p), root)
