"""Bad graphs fail with one clear line naming the field; good graphs round-trip through save/load."""

from __future__ import annotations

import numpy as np
import pytest

from components.errors import DataError, ParamsError
from components.graph.graph import Graph, check_graph, edge_frame, from_pairs, node_frame
from components.graph.inject import inject, planned_counts


def _line(n=4):
    return from_pairs("line", np.zeros((n, 2), np.float32), np.array([(i, i + 1) for i in range(n - 1)]))


def test_good_graph_passes_and_is_symmetric(toy):
    check_graph(toy)
    frame = edge_frame(toy)
    assert frame["has_reverse"].all() and not frame["self_loop"].any()
    assert node_frame(toy)["y"].sum() == 10


def test_isolated_node_is_rejected():
    g = _line()
    g = Graph("iso", np.zeros((5, 2), np.float32), g.edge_index)
    with pytest.raises(DataError, match="isolated node.*first 4"):
        check_graph(g)
    check_graph(g, allow_isolated=True)


def test_edge_past_node_count_is_rejected():
    g = _line()
    g.edge_index = np.concatenate([g.edge_index, [[0, 7], [7, 0]]], axis=1)
    with pytest.raises(DataError, match="edge_index: edge .* points outside 0..3"):
        check_graph(g)


def test_nan_feature_is_rejected():
    g = _line()
    g.x[2, 1] = np.nan
    with pytest.raises(DataError, match=r"graph 'line'.x: feature of node 2 \(column 1\) is not finite"):
        check_graph(g)


def test_asymmetric_and_self_loops_are_rejected():
    g = _line()
    g.edge_index = g.edge_index[:, :-1]
    with pytest.raises(DataError, match="not symmetric"):
        check_graph(g)
    g = _line()
    g.edge_index = np.concatenate([g.edge_index, [[1], [1]]], axis=1)
    with pytest.raises(DataError, match="self-loop at node 1"):
        check_graph(g)


def test_injection_rate_above_half_is_rejected(toy):
    with pytest.raises(ParamsError, match="total rate 0.6 is above 0.5"):
        inject(toy, contextual_rate=0.3, structural_rate=0.2, trap_rate=0.1, clique_size=3, seed=1)
    with pytest.raises(ParamsError, match="injection.trap_rate"):
        planned_counts(100, 0.0, 0.0, 0.7, 5)


def test_save_load_round_trip(tmp_path, toy):
    toy.save(tmp_path / "g.npz")
    back = Graph.load(tmp_path / "g.npz")
    assert back.name == "toy" and np.array_equal(back.edge_index, toy.edge_index) and np.array_equal(back.y, toy.y)
    (tmp_path / "bad.npz").write_text("nope")
    with pytest.raises(DataError, match="bad.npz: not a saved graph"):
        Graph.load(tmp_path / "bad.npz")


def test_undirected_maps_both_directions_to_one_edge(toy):
    pairs, und = toy.undirected()
    assert pairs.shape[0] * 2 == toy.edge_index.shape[1]
    src, dst = toy.edge_index
    assert np.array_equal(pairs[und, 0], np.minimum(src, dst)) and np.array_equal(pairs[und, 1], np.maximum(src, dst))
