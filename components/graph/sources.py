"""Graph sources: an attributed stochastic block model, the Minnesota road graph (pygsp), PyGOD/BOND files.

The PyGOD benchmark graphs (``inj_cora``, ``weibo``, ...) are downloaded by PyGOD from GitHub; they are
used only online (the ``full`` profile) and cached as plain ``.npz`` arrays. :func:`load_pyg_file` reads
``.npz``, ``.safetensors`` or a ``.pt`` tensor dict (``weights_only=True``: nothing is unpickled), so the
loader is tested offline on a small fixture.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import numpy as np

from components.errors import DataError, OfflineError, ParamsError
from components.graph.graph import CONTEXTUAL, STRUCTURAL, Graph, from_pairs
from components.inputs import load_npz

log = logging.getLogger(__name__)
PYGOD_NAMES = ("inj_cora", "inj_amazon", "inj_flickr", "weibo", "reddit", "disney", "books", "enron")


def _block_pairs(rng: np.random.Generator, a: np.ndarray, b: np.ndarray, p: float, same: bool) -> np.ndarray:
    # Vectorised Bernoulli sampling (networkx's SBM loops in Python per candidate pair): draw the edge count
    # from its binomial, then endpoints uniformly; repeated pairs are dropped (rare at sparse p).
    total = a.size * (a.size - 1) // 2 if same else a.size * b.size
    m = rng.binomial(total, p)
    return np.stack([rng.choice(a, m), rng.choice(b, m)], axis=1)


def attributed_sbm(
    n: int,
    communities: int,
    p_in: float,
    p_out: float,
    dim: int,
    *,
    mean_scale: float = 1.0,
    seed: int,
    name: str = "sbm",
) -> Graph:
    """SBM with ``communities`` equal blocks; features N(mu_c, I) around a Gaussian community mean.

    An isolated node (rare at the default densities) is wired to one random member of its community,
    so no node is isolated (GCN normalisation and the checks need that).
    """
    if n < 2 * communities or not (0 <= p_out <= 1 and 0 < p_in <= 1) or dim < 1:
        raise ParamsError(
            f"attributed_sbm: need n >= 2*communities, 0 < p_in <= 1, 0 <= p_out <= 1, dim >= 1 "
            f"(got n={n}, communities={communities}, p_in={p_in}, p_out={p_out}, dim={dim})"
        )
    rng = np.random.default_rng(seed)
    block = np.arange(n) * communities // n
    members = [np.flatnonzero(block == c) for c in range(communities)]
    pairs = [
        _block_pairs(rng, members[a], members[b], p_in if a == b else p_out, a == b)
        for a in range(communities)
        for b in range(a, communities)
    ]
    pairs = np.concatenate(pairs) if pairs else np.zeros((0, 2), np.int64)
    deg = np.bincount(pairs[pairs[:, 0] != pairs[:, 1]].ravel(), minlength=n)
    extra = [(i, rng.choice(members[block[i]][members[block[i]] != i])) for i in np.flatnonzero(deg == 0)]
    if extra:
        pairs = np.concatenate([pairs, np.array(extra, dtype=np.int64)])
    means = rng.normal(0.0, mean_scale, size=(communities, dim))
    x = means[block] + rng.normal(size=(n, dim))
    g = from_pairs(name, x.astype(np.float32), pairs)
    g.meta["community"] = block
    return g


def minnesota(dim: int, *, tau: float = 10.0, seed: int, name: str = "minnesota") -> Graph:
    """pygsp's Minnesota road graph (2,642 nodes) with ``dim`` smooth features: heat-filtered white noise.

    The features are low-pass graph signals (pygsp's Heat filter), standardised per column.
    """
    try:
        from pygsp import filters, graphs
    except ImportError:
        raise DataError(
            "minnesota: the pygsp package is missing; install pygsp==0.6.1 (pip install -e '.[graph]')"
        ) from None
    with warnings.catch_warnings():  # pygsp 0.6.1 trips a scipy FutureWarning inside diags()
        warnings.simplefilter("ignore", FutureWarning)
        G = graphs.Minnesota()
        G.estimate_lmax()
    noise = np.random.default_rng(seed).normal(size=(G.N, dim))
    x = np.asarray(filters.Heat(G, scale=tau).filter(noise, method="chebyshev"))
    x = x.reshape(G.N, dim)
    x = (x - x.mean(0)) / (x.std(0) + 1e-12)
    W = G.W.tocoo()
    g = from_pairs(name, x.astype(np.float32), np.stack([W.row, W.col], 1))
    g.meta["coords"] = np.asarray(G.coords)
    return g


def graph_from_tensors(name: str, x, edge_index, y) -> Graph:
    """A Graph from PyG-style tensors; PyGOD's ``y`` bit 0 marks contextual and bit 1 structural outliers."""
    x = np.asarray(x, dtype=np.float32)
    ei = np.asarray(edge_index, dtype=np.int64)
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise DataError(f"{name}.edge_index: expected shape 2 x E, got {ei.shape}")
    if ei.size and (ei.min() < 0 or ei.max() >= x.shape[0]):
        raise DataError(f"{name}.edge_index: an edge points outside 0..{x.shape[0] - 1}")
    y = np.asarray(y, dtype=np.int64).ravel()
    kind = np.where(y & 1, CONTEXTUAL, np.where(y & 2, STRUCTURAL, 0)).astype(np.int64)
    kind[(y > 0) & (kind == 0)] = CONTEXTUAL  # organic outliers (weibo, reddit, ...) carry y = 1
    return from_pairs(name, x, ei.T, kind)


def _read_tensors(path: Path) -> dict:
    """The arrays of a graph file, never unpickling: ``.npz`` (no pickle), ``.safetensors``, or a ``.pt``
    tensor dict read with ``torch.load(weights_only=True)`` (a pickled PyG ``Data`` object is refused)."""
    if path.suffix == ".npz":
        try:
            with load_npz(path) as z:
                return {k: z[k] for k in z.files}
        except (OSError, ValueError) as exc:
            raise DataError(f"{path}: not a readable npz file ({exc.__class__.__name__})") from None
    if path.suffix == ".safetensors":
        from safetensors.numpy import load_file

        try:
            return load_file(str(path))
        except Exception as exc:  # safetensors raises its own SafetensorError
            raise DataError(f"{path}: not a readable safetensors file ({exc.__class__.__name__})") from None
    import torch

    try:
        obj = torch.load(path, weights_only=True)
    except Exception as exc:  # torch raises many types for a corrupt file or a refused pickled class
        hint = (
            "; a pickled PyG Data object is refused: save x, edge_index, y with save_graph_npz"
            if "weights_only" in str(exc) or "Unsupported global" in str(exc)
            else ""
        )
        raise DataError(f"{path}: not a readable torch file ({exc.__class__.__name__}){hint}") from None
    if not isinstance(obj, dict):
        raise DataError(f"{path}: expected a dict of tensors (x, edge_index, y), got {type(obj).__name__}")
    return obj


def load_pyg_file(path: str | Path, name: str | None = None) -> Graph:
    """Read a PyGOD/BOND graph file (``.npz``, ``.safetensors`` or a ``.pt`` tensor dict with x, edge_index, y)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: graph file not found")
    arrays = _read_tensors(path)
    try:
        return graph_from_tensors(name or path.stem, arrays["x"], arrays["edge_index"], arrays["y"])
    except KeyError as exc:
        raise DataError(f"{path}: missing field {exc}") from None


def save_graph_npz(path: str | Path, x, edge_index, y) -> Path:
    """Write a graph's x, edge_index and y as an ``.npz`` (plain arrays: loading it runs no code)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(
        tmp,
        x=np.asarray(x, dtype=np.float32),
        edge_index=np.asarray(edge_index, dtype=np.int64),
        y=np.asarray(y, dtype=np.int64),
    )
    tmp.replace(path)
    return path


def pygod_benchmark(name: str, cache_dir: str | Path, *, online: bool) -> Graph:
    """A PyGOD/BOND benchmark graph by name (downloaded by ``pygod.utils.load_data``; online only)."""
    if name not in PYGOD_NAMES:
        raise ParamsError(f"pygod dataset {name!r}: use one of {list(PYGOD_NAMES)}")
    cached = Path(cache_dir) / f"{name}.npz"
    for candidate in (cached, cached.with_suffix(".pt")):
        if candidate.is_file():
            return load_pyg_file(candidate, name)
    if not online:
        raise OfflineError(f"pygod dataset {name!r} needs the network: set PAPERLINE_ONLINE=1 or place {cached}")
    from pygod.utils import load_data

    # PyGOD downloads and unpickles its own file (third-party code, online only); we keep plain arrays.
    data = load_data(name, cache_dir=str(cache_dir))
    save_graph_npz(cached, data.x, data.edge_index, data.y)
    return load_pyg_file(cached, name)
