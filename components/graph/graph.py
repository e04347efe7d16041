"""An attributed graph with outlier labels, its checks, and the undirected-edge bookkeeping the spoiler needs.

Edges are stored in both directions (``edge_index`` is 2 x E, symmetric, no self-loops): the layout
GCN message passing wants. ``und`` maps each directed edge to its undirected edge, so one learned
weight serves both directions and the reweighted adjacency stays symmetric.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from components.errors import DataError
from components.inputs import check_array, load_npz

NORMAL, CONTEXTUAL, STRUCTURAL, TRAP = 0, 1, 2, 3
KINDS = {NORMAL: "normal", CONTEXTUAL: "contextual", STRUCTURAL: "structural", TRAP: "trap"}


@dataclass
class Graph:
    """Node features ``x`` (n x d), symmetric ``edge_index`` (2 x E), outlier ``kind`` per node (0 = normal)."""

    name: str
    x: np.ndarray
    edge_index: np.ndarray
    kind: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    @property
    def y(self) -> np.ndarray:
        """1 for an outlier of any kind, 0 for a normal node."""
        kind = np.zeros(self.n, dtype=np.int64) if self.kind is None else self.kind
        return (kind > 0).astype(np.int64)

    def degree(self) -> np.ndarray:
        return np.bincount(self.edge_index[0], minlength=self.n)

    def undirected(self) -> tuple[np.ndarray, np.ndarray]:
        """(pairs U x 2 with i < j, und: index into pairs for every directed edge)."""
        src, dst = self.edge_index
        key = np.minimum(src, dst).astype(np.int64) * self.n + np.maximum(src, dst)
        uniq, und = np.unique(key, return_inverse=True)
        return np.stack([uniq // self.n, uniq % self.n], axis=1), und

    def save(self, path) -> None:
        kind = np.zeros(self.n, dtype=np.int64) if self.kind is None else self.kind
        np.savez_compressed(path, x=self.x, edge_index=self.edge_index, kind=kind, name=np.array(self.name))

    @classmethod
    def load(cls, path) -> Graph:
        """A graph written by :meth:`save`; a corrupt file, or arrays of the wrong kind, shape or range (NaN
        features, edges outside the nodes, a ``kind`` per node missing), is a DataError naming the file."""
        try:
            with load_npz(path, keys=("name", "x", "edge_index", "kind")) as z:
                name, x, ei, kind = z["name"], z["x"], z["edge_index"], z["kind"]
        except (OSError, KeyError, ValueError) as exc:
            raise DataError(f"{path}: not a saved graph ({exc})") from None
        if name.ndim != 0 or name.dtype.kind != "U":
            raise DataError(f"{path}: array 'name' is {name.dtype} {name.shape}, expected one string")
        check_array(x, path, "x", ndim=2, finite=True)
        n = x.shape[0]
        check_array(ei, path, "edge_index", ndim=2, rows=2)
        if ei.dtype.kind not in "iu":
            raise DataError(f"{path}: array 'edge_index' is {ei.dtype}, expected integers")
        if ei.size and (ei.min() < 0 or ei.max() >= n):
            raise DataError(f"{path}: array 'edge_index' points outside the {n} nodes")
        check_array(kind, path, "kind", ndim=1, rows=n)
        if kind.dtype.kind not in "iu" or (kind.size and not set(np.unique(kind).tolist()) <= set(KINDS)):
            raise DataError(f"{path}: array 'kind' holds values outside {sorted(KINDS)}")
        return cls(str(name), x, ei, kind)


def from_pairs(name: str, x: np.ndarray, pairs: np.ndarray, kind: np.ndarray | None = None) -> Graph:
    """A graph from undirected pairs (any order, duplicates and self-loops dropped), both directions stored."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    lo, hi = np.minimum(pairs[:, 0], pairs[:, 1]), np.maximum(pairs[:, 0], pairs[:, 1])
    uniq = np.unique(np.stack([lo, hi], 1), axis=0)
    ei = np.concatenate([uniq.T, uniq.T[::-1]], axis=1)
    return Graph(name, np.asarray(x, dtype=np.float32), ei, kind)


def check_graph(g: Graph, *, allow_isolated: bool = False, allow_self_loops: bool = False) -> Graph:
    """Raise DataError (one line naming the field) on shapes, out-of-range edges, NaN features, isolated nodes."""
    where = f"graph {g.name!r}"
    if g.x.ndim != 2 or g.x.shape[0] == 0:
        raise DataError(f"{where}.x: expected a non-empty n x d feature matrix, got shape {g.x.shape}")
    bad = np.argwhere(~np.isfinite(g.x))
    if bad.size:
        raise DataError(
            f"{where}.x: feature of node {bad[0][0]} (column {bad[0][1]}) is not finite ({g.x[tuple(bad[0])]})"
        )
    ei = np.asarray(g.edge_index)
    if ei.ndim != 2 or ei.shape[0] != 2 or not np.issubdtype(ei.dtype, np.integer):
        raise DataError(f"{where}.edge_index: expected a 2 x E integer array, got {ei.dtype} {ei.shape}")
    if ei.size and (ei.min() < 0 or ei.max() >= g.n):
        col = int(np.flatnonzero((ei < 0) | (ei >= g.n)).min() % ei.shape[1])
        raise DataError(f"{where}.edge_index: edge {col} ({ei[0, col]} -> {ei[1, col]}) points outside 0..{g.n - 1}")
    if not allow_self_loops and np.any(ei[0] == ei[1]):
        raise DataError(f"{where}.edge_index: self-loop at node {int(ei[0][ei[0] == ei[1]][0])}")
    fwd = set(zip(ei[0].tolist(), ei[1].tolist()))
    if len(fwd) != ei.shape[1] or any((j, i) not in fwd for i, j in fwd):
        raise DataError(f"{where}.edge_index: adjacency is not symmetric or has duplicate edges")
    iso = np.flatnonzero(g.degree() == 0)
    if iso.size and not allow_isolated:
        raise DataError(f"{where}: {iso.size} isolated node(s), first {int(iso[0])}; drop them or set allow_isolated")
    if g.kind is not None and (g.kind.shape != (g.n,) or g.kind.min() < 0 or g.kind.max() > max(KINDS)):
        raise DataError(f"{where}.kind: expected {g.n} labels in {sorted(KINDS)}")
    return g


def node_frame(g: Graph):
    """One row per node (for Great Expectations): degree, label, kind, feature norm, any non-finite feature."""
    import pandas as pd

    return pd.DataFrame(
        {
            "node": np.arange(g.n),
            "degree": g.degree(),
            "y": g.y,
            "kind": np.zeros(g.n, dtype=np.int64) if g.kind is None else g.kind,
            "x_norm": np.linalg.norm(g.x.astype(np.float64), axis=1),
            "x_min": g.x.min(axis=1).astype(np.float64),
            "x_max": g.x.max(axis=1).astype(np.float64),
        }
    )


def edge_frame(g: Graph):
    """One row per directed edge: endpoints, self-loop flag, whether its reverse exists."""
    import pandas as pd

    src, dst = g.edge_index
    key = src.astype(np.int64) * g.n + dst
    rev = dst.astype(np.int64) * g.n + src
    return pd.DataFrame({"src": src, "dst": dst, "self_loop": src == dst, "has_reverse": np.isin(rev, key)})
