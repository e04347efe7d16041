"""AssoMem's memory index as a folder: the clue-utterance graph, embeddings, times and the fitted CMI weights.

``save_index`` writes ``index.npz`` (utterance and clue embeddings, utterance times, the clue of each
utterance, the graph's CSR arrays; plain numeric arrays, read back with ``allow_pickle=False``) and
``index.json`` (the retriever's config, the fusion weights per question type, the utterance ids and
sessions, top-k). ``load_index`` (an allow-listed MLflow loader) rebuilds an :class:`AssoMemIndex` that
ranks exactly as the ``retrieve`` stage did: the same arrays, the same config, the same weights.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from components.errors import DataError
from components.inputs import CorruptInput, load_npz
from components.retrieval.assomem import fusion
from components.retrieval.assomem.retriever import SIGNALS, AssoMem, AssoMemConfig, rank

ARRAYS, CONFIG = "index.npz", "index.json"
_ARRAY_KEYS = ("utt_embs", "times", "utt_clue", "clue_embs", "adj_data", "adj_indices", "adj_indptr", "adj_shape")


class AssoMemIndex:
    """One memory's AssoMem retriever with its fusion weights; ``search`` returns ranked utterance positions."""

    def __init__(
        self,
        retriever: AssoMem,
        weights: Mapping[str, Mapping[str, float]],
        ids: Sequence[str],
        sessions: Sequence[str],
        top_k: int,
    ) -> None:
        if len(ids) != len(retriever.utt) or len(sessions) != len(ids):
            raise DataError(f"assomem index: {len(ids)} ids, {len(sessions)} sessions, {len(retriever.utt)} utterances")
        self.retriever, self.weights, self.top_k = retriever, {t: dict(w) for t, w in weights.items()}, int(top_k)
        self.ids, self.sessions = list(ids), list(sessions)

    def weights_for(self, qtype: str) -> dict[str, float]:
        """The fitted weights of ``qtype`` (one set ``"*"`` for every type; equal weights for a type never fitted)."""
        if "*" in self.weights:
            return self.weights["*"]
        return self.weights.get(qtype, fusion.equal_weights(SIGNALS))

    def search(
        self, q_embs: np.ndarray, query_times: Sequence[float], queries: Sequence[str] | None, types: Sequence[str]
    ) -> list[np.ndarray]:
        """Top-k utterance positions per query (signals computed in one pass over all queries, as the stage does)."""
        sigs = self.retriever.signals(np.asarray(q_embs), list(query_times), queries)
        return [rank(s, self.weights_for(t), self.top_k) for s, t in zip(sigs, types)]

    def pyfunc_predict(self, model_input) -> np.ndarray:
        """MLflow pyfunc entry: rows ``[type index (QUESTION_TYPES), query time (days), *embedding]`` -> (n, k)
        positions."""
        from components.retrieval.memory import QUESTION_TYPES

        x = np.atleast_2d(np.asarray(model_input, dtype=np.float64))
        types = [QUESTION_TYPES[int(t)] for t in x[:, 0]]
        ranked = self.search(x[:, 2:].astype(self.retriever.utt.dtype), x[:, 1].tolist(), None, types)
        out = np.full((len(ranked), self.top_k), -1, dtype=np.int64)
        for i, r in enumerate(ranked):
            out[i, : len(r)] = r
        return out


def save_index(
    folder,
    *,
    utt_embs: np.ndarray,
    times: np.ndarray,
    utt_clue: np.ndarray,
    clue_embs: np.ndarray,
    adj: sp.spmatrix,
    config: AssoMemConfig,
    weights: Mapping[str, Mapping[str, float]],
    ids: Sequence[str],
    sessions: Sequence[str],
    top_k: int,
    meta: Mapping | None = None,
) -> Path:
    """Write ``index.npz`` and ``index.json`` into ``folder`` (created); returns the folder."""
    from components.io import atomic_path, write_json

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    csr = sp.csr_matrix(adj)
    arrays = {
        "utt_embs": np.asarray(utt_embs),
        "times": np.asarray(times, dtype=np.float64),
        "utt_clue": np.asarray(utt_clue),
        "clue_embs": np.asarray(clue_embs),
        "adj_data": csr.data,
        "adj_indices": csr.indices,
        "adj_indptr": csr.indptr,
        "adj_shape": np.asarray(csr.shape, dtype=np.int64),
    }
    if any(a.dtype == object for a in arrays.values()):
        raise DataError("save_index: object arrays are not allowed (only plain numeric arrays are stored)")
    with atomic_path(folder / ARRAYS) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays)
    cfg = {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(config).items()}
    write_json(
        folder / CONFIG,
        {
            "config": cfg,
            "weights": {t: {d: float(x) for d, x in w.items()} for t, w in weights.items()},
            "top_k": int(top_k),
            "ids": list(ids),
            "sessions": list(sessions),
            "meta": dict(meta or {}),
        },
    )
    return folder


def load_index(folder) -> AssoMemIndex:
    """The :class:`AssoMemIndex` of a folder written by :func:`save_index` (npz without pickle + JSON)."""
    folder = Path(folder)
    for p in (folder / ARRAYS, folder / CONFIG):
        if not p.is_file():
            raise DataError(f"{p}: missing (expected an AssoMem index folder written by save_index)")
    try:
        doc = json.loads((folder / CONFIG).read_text())
        with load_npz(folder / ARRAYS) as z:
            a = {k: z[k] for k in _ARRAY_KEYS}
        cfg = doc["config"]
        # an index written before the fusion setting existed was ranked with min-max scaled signals
        config = AssoMemConfig(**{"fusion": "minmax", **cfg, "taus": tuple(cfg["taus"])})
        adj = sp.csr_matrix(
            (a["adj_data"], a["adj_indices"], a["adj_indptr"]), shape=tuple(int(s) for s in a["adj_shape"])
        )
        retriever = AssoMem(a["utt_embs"], a["times"], a["utt_clue"], a["clue_embs"], adj, config)
        return AssoMemIndex(retriever, doc["weights"], doc["ids"], doc["sessions"], doc["top_k"])
    except CorruptInput as exc:
        raise DataError(f"{folder}: not a readable AssoMem index ({exc})") from None
    except DataError:
        raise
    except Exception as exc:
        raise DataError(f"{folder}: not a readable AssoMem index ({type(exc).__name__}: {exc})") from None
