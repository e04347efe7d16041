"""The leak-free injection: outliers keep their node's degree and feature norm, so the leakage probe is near chance
(PyGOD's injection on the same graph: above 0.85), while the outliers are still there to find."""

from __future__ import annotations

import numpy as np
import pytest

from components.errors import ParamsError
from components.graph.baselines import feature_norm_probe, leakage_probe
from components.graph.graph import CONTEXTUAL, STRUCTURAL, TRAP
from components.graph.inject import inject
from components.graph.inject_matched import inject_matched
from components.graph.metrics import roc_auc
from components.graph.sources import attributed_sbm

RATES = dict(contextual_rate=0.03, structural_rate=0.03, trap_rate=0.02, clique_size=10, k=50, trap_degree=12)


@pytest.fixture(scope="module")
def dense():
    return attributed_sbm(600, 4, 0.12, 0.003, 16, seed=0)  # mean degree about 19


def test_matched_outliers_keep_their_degree_and_norm(dense):
    g = inject_matched(dense, **RATES, seed=3)
    counts = {k: int((g.kind == v).sum()) for k, v in (("c", CONTEXTUAL), ("s", STRUCTURAL), ("t", TRAP))}
    assert counts == {"c": 18, "s": 20, "t": 12}
    for kind in (STRUCTURAL, TRAP):  # every clique member and trap node: its degree exactly
        idx = np.flatnonzero(g.kind == kind)
        assert np.array_equal(g.degree()[idx], dense.degree()[idx]), kind
    ctx = np.flatnonzero(g.kind == CONTEXTUAL)
    assert np.allclose(feature_norm_probe(g.x)[ctx], feature_norm_probe(dense.x)[ctx], rtol=0.05)
    assert not np.allclose(g.x[ctx], dense.x[ctx])  # the features did change


def test_cliques_are_complete_and_traps_rewired(dense):
    g = inject_matched(dense, **RATES, seed=3)
    adj = set(zip(*g.edge_index.tolist()))
    st = np.flatnonzero(g.kind == STRUCTURAL)
    mates = [sum((a, b) in adj for b in st) for a in st]
    assert min(mates) >= RATES["clique_size"] - 1
    old = set(zip(*dense.edge_index.tolist()))
    for t in np.flatnonzero(g.kind == TRAP):
        now = {b for a, b in adj if a == t}
        assert len(now - {b for a, b in old if a == t}) >= min(RATES["trap_degree"], len(now)) - 2


def test_the_leakage_probe_is_near_chance_on_matched_but_not_on_standard(dense):
    std, matched = inject(dense, **RATES, seed=3), inject_matched(dense, **RATES, seed=3)
    assert roc_auc(std.y, leakage_probe(std.degree(), std.x)) > 0.85
    assert abs(roc_auc(matched.y, leakage_probe(matched.degree(), matched.x)) - 0.5) < 0.1


def test_a_graph_too_sparse_for_matched_cliques_is_a_params_error():
    sparse = attributed_sbm(300, 3, 0.02, 0.001, 8, seed=0)
    with pytest.raises(ParamsError, match="injection.clique_size"):
        inject_matched(sparse, **{**RATES, "clique_size": 15}, seed=3)


def test_leakage_probe_takes_the_higher_of_the_two_ranks():
    deg = np.array([1, 2, 3, 10])
    x = np.array([[9.0], [0.0], [0.1], [0.2]], np.float32)  # node 0 leaks through its norm, node 3 through degree
    s = leakage_probe(deg, x)
    assert s[0] == s[3] == 1.0 and s[1] < 1.0 and s[2] < 1.0
