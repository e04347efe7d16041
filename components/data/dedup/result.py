"""The outcome of a dedup run: clusters from verified pairs, scoring and writing."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from components.errors import DataError
from components.io import atomic_paths, dump_jsonl, json_text


@dataclass
class DedupResult:
    """Documents kept (input order), duplicate clusters (ids, size >= 2) and removed ids.

    In every cluster the first document in input order is kept and the others removed.
    """

    kept: list[dict]
    clusters: list[list[str]]
    removed_ids: list[str]
    method: str = ""
    params: dict = field(default_factory=dict)

    def stats(self) -> dict[str, int]:
        """Counts for logs and metrics: n_in, n_kept, n_removed, n_clusters."""
        return {
            "n_in": len(self.kept) + len(self.removed_ids),
            "n_kept": len(self.kept),
            "n_removed": len(self.removed_ids),
            "n_clusters": len(self.clusters),
        }


def result_from_pairs(docs: Sequence[dict], pairs: np.ndarray, *, method: str, params: dict) -> DedupResult:
    """Cluster documents joined by ``pairs`` (index pairs) and keep the first of each cluster.

    Clusters are connected components of the pair graph (what union-find computes);
    scipy's ``connected_components`` does it in C.
    """
    n = len(docs)
    if n == 0:
        return DedupResult([], [], [], method, params)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    graph = coo_matrix((np.ones(len(pairs), dtype=np.int8), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    first: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    for i, lab in enumerate(labels.tolist()):
        first.setdefault(lab, i)
        members.setdefault(lab, []).append(i)
    kept = [docs[i] for i in range(n) if first[labels[i]] == i]
    removed = [docs[i]["id"] for i in range(n) if first[labels[i]] != i]
    clusters = [[docs[i]["id"] for i in m] for m in sorted(members.values(), key=lambda m: m[0]) if len(m) > 1]
    return DedupResult(kept, clusters, removed, method, params)


def score_dedup(result: DedupResult, docs: Sequence[dict], *, strict: bool = False) -> dict[str, float]:
    """Precision, recall and F1 of the removals against injected ground truth (``dup_of``).

    Positives are the documents whose ``dup_of`` is not null (one per injected copy); a
    document is predicted positive when the result removed it. Which member of a
    duplicate group survives does not matter: an injected group (an original and its
    copies, following ``dup_of`` to the root) of m present documents earns up to m - 1
    true positives, one per removed member. So a copy that precedes its original in a
    shuffled corpus -- and is kept, "first wins" -- costs nothing when the original is
    removed instead. ``strict=True`` scores the literal rule instead: only removed
    documents with ``dup_of`` set are true positives. Removed natural duplicates
    (``dup_of`` null, not an original) are false positives either way. With no
    predictions precision is 1.0; with no positives recall is 1.0.
    """
    removed = set(result.removed_ids)
    parent: dict[str, str | None] = {}
    for doc in docs:
        if "dup_of" not in doc:
            raise DataError(f"document {doc.get('id')!r}: missing field 'dup_of' needed to score dedup")
        parent[doc["id"]] = doc["dup_of"]
    n_pos = sum(p is not None for p in parent.values())
    n_pred = sum(i in removed for i in parent)
    if strict:
        tp = sum(i in removed and p is not None for i, p in parent.items())
        return _prf(tp, n_pred - tp, n_pos - tp)
    groups: dict[str, list[str]] = {}
    for doc_id in parent:
        groups.setdefault(_root(doc_id, parent), []).append(doc_id)
    tp = sum(min(sum(m in removed for m in members), len(members) - 1) for members in groups.values())
    return _prf(tp, n_pred - tp, n_pos - tp)


def _root(doc_id: str, parent: dict[str, str | None]) -> str:
    """Follow ``dup_of`` links to the original (stopping at a missing id or a cycle)."""
    seen = {doc_id}
    while parent.get(doc_id) is not None and parent[doc_id] not in seen:
        doc_id = parent[doc_id]
        seen.add(doc_id)
    return doc_id


def _prf(tp: int, fp: int, fn: int) -> dict[str, float]:
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "tp": tp, "fp": fp, "fn": fn}


def write_dedup(
    result: DedupResult, out_path: str | os.PathLike, clusters_path: str | os.PathLike | None = None
) -> dict[str, int]:
    """Write the kept documents as JSONL and, optionally, clusters + removed ids as JSON.

    Both files are written to staging paths first and renamed into place only once
    both are complete, so a failure (a directory at ``clusters_path``, a full disk)
    leaves both previous files unchanged; returns ``result.stats()``.
    """
    with atomic_paths(out_path, clusters_path) as (out_tmp, clusters_tmp):
        dump_jsonl(out_tmp, result.kept)
        if clusters_tmp is not None:
            clusters_tmp.write_text(
                json_text(
                    {
                        "method": result.method,
                        "params": result.params,
                        "stats": result.stats(),
                        "clusters": result.clusters,
                        "removed_ids": result.removed_ids,
                    }
                ),
                encoding="utf-8",
            )
    return result.stats()
