"""Context retrieval for ICQL: the k nearest dataset states (squared Euclidean), or k random ones.

Nearest neighbours come from scikit-learn's ``NearestNeighbors`` (a KD-tree for these
low-dimensional states). Indices are precomputed once for every dataset state, as the
card asks, so training gathers contexts by index.
"""

from __future__ import annotations

import logging

import numpy as np

from components.errors import DataError, ParamsError

log = logging.getLogger(__name__)
MODES = ("nearest", "random")


def _check(n: int, k: int, exclude_self: bool) -> None:
    if k < 1:
        raise ParamsError(f"retrieval.k: must be >= 1, got {k}")
    need = k + int(exclude_self)
    if n < need:
        raise DataError(
            f"retrieval.k={k} is larger than the dataset ({n} transitions"
            f"{', excluding the query itself' if exclude_self else ''})"
        )


class StateIndex:
    """Nearest-state lookup over a fixed set of dataset states."""

    def __init__(self, states: np.ndarray, algorithm: str = "auto"):
        from sklearn.neighbors import NearestNeighbors

        states = np.asarray(states, dtype=np.float32)
        if states.ndim != 2 or states.shape[0] == 0:
            raise DataError(f"retrieval: expected a non-empty (n, dim) array of states, got shape {states.shape}")
        self.n, self.dim = states.shape
        self.nn = NearestNeighbors(algorithm=algorithm).fit(states)

    def query(self, queries: np.ndarray, k: int) -> np.ndarray:
        """Indices (m, k) of the k nearest states to each query, nearest first."""
        queries = np.asarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.dim:
            raise DataError(f"retrieval: queries have shape {queries.shape}, expected (m, {self.dim})")
        _check(self.n, k, False)
        return self.nn.kneighbors(queries, n_neighbors=k, return_distance=False)


def brute_force(states: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Reference k-NN by full squared-distance sort (for tests and the benchmark)."""
    d2 = ((queries[:, None, :] - states[None, :, :]) ** 2).sum(-1)
    return np.argsort(d2, axis=1, kind="stable")[:, :k]


def context_indices(
    states: np.ndarray, k: int, mode: str = "nearest", *, exclude_self: bool = True, seed: int = 0, batch: int = 8192
) -> np.ndarray:
    """(n, k) context indices for every dataset state: its k nearest other states, or k random ones."""
    if mode not in MODES:
        raise ParamsError(f"retrieval.mode: expected one of {MODES}, got {mode!r}")
    n = int(np.asarray(states).shape[0])
    _check(n, k, exclude_self)
    if mode == "random":
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, n - int(exclude_self), size=(n, k))
        if exclude_self:  # skip the row itself by shifting indices at or above it
            idx += idx >= np.arange(n)[:, None]
        return idx
    index = StateIndex(states)
    out = np.empty((n, k), dtype=np.int64)
    extra = int(exclude_self)
    for start in range(0, n, batch):
        q = np.asarray(states[start : start + batch], dtype=np.float32)
        nb = index.query(q, k + extra)
        if exclude_self:
            rows = np.arange(start, start + len(q))[:, None]
            keep = nb != rows
            no_self = keep.all(1)
            keep[no_self, -1] = False  # self not among the k+1 (exact duplicates): drop the farthest instead
            nb = nb[keep].reshape(len(q), k)
        out[start : start + len(q)] = nb
    return out
