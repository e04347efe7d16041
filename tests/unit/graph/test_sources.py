"""Graph sources: the SBM, Minnesota (pygsp), and the PyGOD/BOND file loader on a local fixture."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from components.errors import DataError, OfflineError, ParamsError
from components.graph.graph import CONTEXTUAL, NORMAL, STRUCTURAL, check_graph
from components.graph.sources import attributed_sbm, load_pyg_file, minnesota, pygod_benchmark

FIXTURE = Path(__file__).parents[2] / "fixtures" / "cer_god" / "tiny_inj.pt"


def test_sbm_is_valid_homophilous_and_repeatable():
    g = attributed_sbm(500, 5, 0.08, 0.004, 8, seed=1)
    check_graph(g)
    comm = g.meta["community"]
    same = comm[g.edge_index[0]] == comm[g.edge_index[1]]
    assert same.mean() > 0.7
    assert np.array_equal(attributed_sbm(500, 5, 0.08, 0.004, 8, seed=1).edge_index, g.edge_index)
    with pytest.raises(ParamsError, match="attributed_sbm"):
        attributed_sbm(5, 5, 0.1, 0.0, 4, seed=0)


def test_minnesota_has_smooth_standardised_features():
    pytest.importorskip("pygsp")
    g = minnesota(4, seed=0)
    check_graph(g)
    assert g.n == 2642 and g.edge_index.shape[1] == 6608
    assert np.allclose(g.x.std(0), 1, atol=1e-3)
    src, dst = g.edge_index  # low-pass: neighbours are far more alike than random pairs
    rng = np.random.default_rng(0)
    rand = rng.integers(0, g.n, (2, src.size))
    assert np.abs(g.x[src] - g.x[dst]).mean() < 0.5 * np.abs(g.x[rand[0]] - g.x[rand[1]]).mean()


def test_pyg_file_loader_reads_pygod_labels():
    g = load_pyg_file(FIXTURE)
    check_graph(g)
    assert g.n == 12 and g.name == "tiny_inj"
    assert g.kind[2] == CONTEXTUAL and g.kind[5] == STRUCTURAL and g.kind[7] == CONTEXTUAL and g.kind[0] == NORMAL


def test_pyg_loader_errors(tmp_path):
    with pytest.raises(DataError, match="graph file not found"):
        load_pyg_file(tmp_path / "missing.pt")
    (tmp_path / "junk.pt").write_bytes(b"junk")
    with pytest.raises(DataError, match="junk.pt: not a readable torch file"):
        load_pyg_file(tmp_path / "junk.pt")


def test_benchmark_needs_network_or_cache(tmp_path):
    with pytest.raises(OfflineError, match="inj_cora.*PAPERLINE_ONLINE"):
        pygod_benchmark("inj_cora", tmp_path, online=False)
    with pytest.raises(ParamsError, match="pygod dataset 'cora'"):
        pygod_benchmark("cora", tmp_path, online=False)
    (tmp_path / "weibo.pt").write_bytes(FIXTURE.read_bytes())
    assert pygod_benchmark("weibo", tmp_path, online=False).n == 12
