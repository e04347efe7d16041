"""Personalised PageRank: distributions, hubs, and agreement with networkx."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from components.errors import DataError, ParamsError
from components.retrieval.assomem.graph import build_graph, to_networkx
from components.retrieval.assomem.importance import personalized_pagerank, teleport_vectors


def star(n_leaves=6):
    g = nx.star_graph(n_leaves)  # node 0 is the hub
    g.add_edge(1, 2)
    return g, nx.to_scipy_sparse_array(g, nodelist=sorted(g), format="csr")


def test_scores_sum_to_one_and_favour_the_hub():
    g, adj = star()
    n = adj.shape[0]
    scores = personalized_pagerank(adj, np.full((n, 3), 1.0 / n))
    assert np.allclose(scores.sum(axis=0), 1.0)
    assert np.all(scores >= 0)
    assert np.all(scores[0] > scores[1:].max(axis=0))


def test_matches_networkx_with_personalisation_and_a_dangling_node():
    g, _ = star()
    g.add_node(7)  # dangling: its mass goes back along the teleport vector, as in networkx
    adj = nx.to_scipy_sparse_array(g, nodelist=sorted(g), format="csr")
    t = np.array([0.0, 0.5, 0.1, 0.1, 0.0, 0.2, 0.05, 0.05])
    ours = personalized_pagerank(adj, t, damping=0.85, tol=1e-12)[:, 0]
    ref = nx.pagerank(g, alpha=0.85, personalization=dict(enumerate(t)), tol=1e-12)
    assert np.allclose(ours, [ref[i] for i in range(len(t))], atol=1e-8)


def test_teleport_is_zero_on_clues_and_uniform_when_no_similarity():
    cos = np.array([[0.5, -0.2, 0.5], [-1.0, -0.5, -0.1]])
    t = teleport_vectors(cos, n_clues=2)
    assert t.shape == (5, 2)
    assert np.all(t[:2] == 0)
    assert np.allclose(t[2:, 0], [0.5, 0.0, 0.5])
    assert np.allclose(t[2:, 1], 1 / 3)


def test_bad_inputs_are_named():
    _, adj = star()
    with pytest.raises(ParamsError, match="damping"):
        personalized_pagerank(adj, np.full(adj.shape[0], 1 / adj.shape[0]), damping=1.0)
    with pytest.raises(DataError, match="teleport"):
        personalized_pagerank(adj, np.ones(3))


def test_graph_has_owner_and_similarity_edges():
    embs = np.array([[1.0, 0.0], [0.99, 0.141], [0.0, 1.0]], dtype=np.float32)
    embs /= np.linalg.norm(embs, axis=1, keepdims=True)
    adj = build_graph(embs, np.array([0, 0, 1]), 2, threshold=0.75, max_neighbors=5)
    g = to_networkx(adj)
    assert (adj != adj.T).nnz == 0
    assert set(g.edges()) == {(0, 2), (0, 3), (1, 4), (2, 3)}
    assert isinstance(adj, sp.csr_matrix)


def test_faiss_and_numpy_backends_give_the_same_edges():
    pytest.importorskip("faiss")
    from components.retrieval.assomem.graph import similarity_edges

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 8)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    a = set(zip(*similarity_edges(x, threshold=0.5, max_neighbors=5)))
    b = set(zip(*similarity_edges(x, threshold=0.5, max_neighbors=5, backend="faiss")))
    assert a and len(a ^ b) <= 2  # equal up to float ties at the k-th neighbour
