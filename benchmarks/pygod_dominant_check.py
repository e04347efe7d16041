"""Our DOMINANT (``components.graph.recon.fit_dominant``) against PyGOD 1.1.0's own detector, score for score.

PyGOD's ``DOMINANT.fit`` always iterates a PyG ``NeighborLoader``, which needs ``pyg-lib`` or
``torch-sparse``; neither has a wheel for torch 2.13 on CPU (the reason recon.py re-implements it).
With PyGOD's defaults (``batch_size=0`` = every node, ``num_neigh=-1`` = every neighbour) that loader
yields the whole graph as one batch with ``n_id = 0..n-1``, so this script swaps it for a one-batch
loader that yields exactly that and raises on any other setting. Everything else is PyGOD's: its
model (``DOMINANTBase`` on PyG's ``GCN``), its loss (``double_recon_loss``), its training loop, its
initialisation and its ``decision_score_`` (the per-node loss of the last epoch, before that epoch's step).

Graphs: the CER-GOD default profile's injected graphs (attributed SBM, Minnesota, the degree-matched SBM),
built by the same functions and seeds as the pipeline's ``build`` and ``inject`` stages.
Both detectors: PyGOD defaults (hid 64, 4 layers, lr 4e-3, 100 epochs, weight 0.5), one torch seed each.

Printed per graph: each detector's AUC (mean and sd over seeds); Spearman rank correlation of the two
detectors' scores on the same seed; and the same correlation between two seeds of one detector, the noise
floor (two runs of one implementation agree no better than that). The baseline named in the ratio is
PyGOD's own seed-to-seed agreement.

    .venv/bin/python benchmarks/pygod_dominant_check.py [--seeds 5] [--graphs sbm minnesota sbm-matched]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


class _OneBatchLoader:
    """PyG ``NeighborLoader`` in PyGOD's full-batch setting: one batch, the whole graph, nodes in order."""

    def __init__(self, data, num_neighbors, batch_size, **kwargs):
        n = data.x.shape[0]
        hops = num_neighbors if isinstance(num_neighbors, (list, tuple)) else [num_neighbors]
        if batch_size != n or any(h != -1 for h in hops) or kwargs.get("shuffle"):
            raise ValueError("this stand-in only covers PyGOD's full-batch default (batch_size=0, num_neigh=-1)")
        import torch

        self.batch = data.clone()
        self.batch.n_id = torch.arange(n)
        self.batch.batch_size = n

    def __iter__(self):
        yield self.batch


def graphs(names: list[str]):
    from flows.cer_god.build import clean_graph
    from flows.cer_god.inject import injected
    from flows.cer_god.params import PRESETS, Params

    p = Params(**PRESETS["default"])
    for i, spec in enumerate(p.graphs):
        if spec.name in names:
            yield injected(clean_graph(p, i, None), p, i)


def ours(g, seed: int) -> np.ndarray:
    from components.graph.recon import TrainConfig, fit_dominant, prepare

    return fit_dominant(prepare(g), TrainConfig(), seed)["scores"]


def pygod(g, seed: int) -> np.ndarray:
    import pygod.detector.base as base
    import torch
    from pygod.detector import DOMINANT
    from torch_geometric.data import Data

    base.NeighborLoader = _OneBatchLoader
    torch.manual_seed(seed)
    data = Data(x=torch.as_tensor(g.x, dtype=torch.float32), edge_index=torch.as_tensor(g.edge_index, dtype=torch.long))
    det = DOMINANT(hid_dim=64, num_layers=4, lr=4e-3, epoch=100, weight=0.5, verbose=0)
    det.fit(data)
    return det.decision_score_.numpy().astype(np.float64)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=5, help="torch seeds per detector (default 5)")
    ap.add_argument("--graphs", nargs="+", default=["sbm", "minnesota", "sbm-matched"])
    args = ap.parse_args()
    from scipy.stats import spearmanr
    from sklearn.metrics import roc_auc_score

    seeds = list(range(args.seeds))
    for g in graphs(args.graphs):
        t0, c0 = time.perf_counter(), time.process_time()
        runs = {"ours": [ours(g, s) for s in seeds], "pygod": [pygod(g, s) for s in seeds]}
        auc = {k: np.array([roc_auc_score(g.y, s) for s in v]) for k, v in runs.items()}
        cross = np.array([spearmanr(a, b)[0] for a, b in zip(runs["ours"], runs["pygod"])])
        floor = {k: np.array([spearmanr(v[i], v[i + 1])[0] for i in range(len(v) - 1)]) for k, v in runs.items()}
        print(
            f"\n{g.name}: {g.n} nodes, {int(g.y.sum())} outliers ({time.perf_counter() - t0:.0f} s wall, "
            f"{time.process_time() - c0:.0f} s CPU)"
        )
        for k in runs:
            print(
                f"  AUC {k:5s} {auc[k].mean():.4f} ± {auc[k].std(ddof=1):.4f}  per seed {np.round(auc[k], 4).tolist()}"
            )
        print(f"  AUC difference ours - pygod (same seed): {(auc['ours'] - auc['pygod']).mean():+.4f}")
        print(f"  Spearman ours vs pygod, same seed: {cross.mean():.4f} (min {cross.min():.4f})")
        for k in runs:
            print(f"  Spearman {k} seed s vs s+1 (noise floor): {floor[k].mean():.4f}")
        print(f"  ratio cross / pygod floor: {cross.mean() / floor['pygod'].mean():.3f}")


if __name__ == "__main__":
    main()
