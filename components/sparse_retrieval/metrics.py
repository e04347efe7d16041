"""Per-query nDCG@10, R@100 and MRR@10 through ``ir_measures`` (pytrec_eval), and term grounding.

``components.retrieval.metrics.per_query`` (AssoMem's) fixes its measure set to R@k for every k plus nDCG@max(k)
and unbounded MRR; MILCO's card needs nDCG@10 with R@100 and MRR@10, so the same ir_measures call is made here
with that set (binary gains, rankings handed over with strictly decreasing scores so ties never reorder them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from components.errors import DataError
from components.sparse_retrieval.lexicon import english_words

NAMES = ("nDCG@10", "R@100", "MRR@10")


def per_query(qrels: Mapping[str, Sequence[str]], run: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    import ir_measures
    from ir_measures import RR, R, nDCG

    empty = [q for q, g in qrels.items() if not g]
    if empty:
        raise DataError(f"metrics: query(s) {empty[:3]} have no relevant documents")
    measures = {nDCG @ 10: "nDCG@10", R @ 100: "R@100", RR @ 10: "MRR@10"}
    q = {qid: {d: 1 for d in gold} for qid, gold in qrels.items()}
    r = {qid: {d: float(len(ids) - i) for i, d in enumerate(ids)} for qid, ids in run.items() if len(ids)}
    out = {qid: {n: 0.0 for n in NAMES} for qid in qrels}
    for m in ir_measures.iter_calc(list(measures), q, r):
        if m.query_id in out:
            out[m.query_id][measures[m.measure]] = float(m.value)
    return out


def grounding(pivots: np.ndarray, english_texts: Sequence[str], terms: Sequence[str], k: int = 10) -> np.ndarray:
    """Per document: the share of its top-k pivot terms (positive weight only) that occur in its aligned English
    translation; a document with no positive term scores 0."""
    out = np.zeros(len(english_texts))
    for i, text in enumerate(english_texts):
        row = pivots[i]
        top = [j for j in np.argsort(-row)[:k] if row[j] > 0]
        if top:
            words = set(english_words(text))
            out[i] = sum(terms[j] in words for j in top) / len(top)
    return out
