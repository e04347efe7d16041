"""Injection: exact, disjoint counts per type; cliques and trap edges exist; PyGOD's draws for the same seed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.graph.graph import CONTEXTUAL, STRUCTURAL, TRAP
from components.graph.inject import contextual, inject, structural
from components.graph.sources import attributed_sbm


@pytest.fixture
def sbm():
    return attributed_sbm(300, 3, 0.08, 0.005, 8, seed=0)


def test_counts_rates_and_disjoint_types(sbm):
    g = inject(sbm, contextual_rate=0.05, structural_rate=0.05, trap_rate=0.02, clique_size=5, trap_degree=12, seed=3)
    assert (g.kind == CONTEXTUAL).sum() == 15 and (g.kind == STRUCTURAL).sum() == 15 and (g.kind == TRAP).sum() == 6
    assert g.y.mean() == pytest.approx(36 / 300)
    assert np.isfinite(g.x).all() and g.n == sbm.n


def test_cliques_are_complete_and_traps_gain_edges(sbm):
    g = inject(sbm, contextual_rate=0.0, structural_rate=0.05, trap_rate=0.02, clique_size=5, trap_degree=12, seed=3)
    adj = set(zip(*g.edge_index.tolist()))
    st = np.flatnonzero(g.kind == STRUCTURAL)
    mates = [sum((a, b) in adj for b in st) for a in st]
    assert min(mates) >= 4  # every clique member is linked to its 4 clique mates
    deg_gain = g.degree() - sbm.degree()
    assert (deg_gain[st] >= 4).all()
    for t in np.flatnonzero(g.kind == TRAP):  # wired to >= 12 normal nodes (a new edge may repeat an old one)
        nbrs = g.edge_index[1][g.edge_index[0] == t]
        assert (g.y[nbrs] == 0).sum() >= 12


def test_same_seed_same_graph_and_different_seed_differs(sbm):
    a = inject(sbm, contextual_rate=0.05, structural_rate=0.05, trap_rate=0.02, clique_size=5, seed=4)
    b = inject(sbm, contextual_rate=0.05, structural_rate=0.05, trap_rate=0.02, clique_size=5, seed=4)
    c = inject(sbm, contextual_rate=0.05, structural_rate=0.05, trap_rate=0.02, clique_size=5, seed=5)
    assert np.array_equal(a.kind, b.kind) and np.array_equal(a.x, b.x)
    assert not np.array_equal(a.kind, c.kind)


def test_matches_pygod_generators(sbm):
    gen_mod = pytest.importorskip("pygod.generator")
    from torch_geometric.data import Data

    data = Data(x=torch.as_tensor(sbm.x.copy()), edge_index=torch.as_tensor(sbm.edge_index))
    ref, y_ref = gen_mod.gen_contextual_outlier(data, n=10, k=20, seed=7)
    x_ours, idx = contextual(sbm.x, 10, 20, torch.Generator().manual_seed(7))
    assert set(idx.tolist()) == set(torch.nonzero(y_ref).ravel().tolist())
    assert np.allclose(x_ours, ref.x.numpy())
    data = Data(x=torch.as_tensor(sbm.x.copy()), edge_index=torch.as_tensor(sbm.edge_index))
    _, y_st = gen_mod.gen_structural_outlier(data, m=5, n=2, seed=7)
    _, st_idx = structural(sbm.n, 5, 2, torch.Generator().manual_seed(7))
    assert set(st_idx.tolist()) == set(torch.nonzero(y_st).ravel().tolist())
