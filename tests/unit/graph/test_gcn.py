"""The weighted GCN: all weights 1 is a plain GCN; weights enter the symmetric normalisation of A~ + I."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.graph.gcn import GCNLayer, gcn_norm


def _dense_gcn(x, adj, w, b):
    a_hat = adj + torch.eye(adj.shape[0])
    d = a_hat.sum(1).rsqrt()
    return (d[:, None] * a_hat * d[None, :]) @ (x @ w.T) + b


def test_unit_weights_equal_plain_gcn(toy):
    torch.manual_seed(0)
    layer = GCNLayer(8, 5)
    ei = torch.as_tensor(toy.edge_index)
    x = torch.as_tensor(toy.x)
    adj = torch.zeros(toy.n, toy.n)
    adj[ei[0], ei[1]] = 1
    ones = layer(x, ei, gcn_norm(ei, torch.ones(ei.shape[1]), toy.n))
    plain = layer(x, ei, gcn_norm(ei, None, toy.n))
    assert torch.allclose(ones, plain)
    assert torch.allclose(plain, _dense_gcn(x, adj, layer.lin.weight, layer.bias), atol=1e-5)


def test_weights_follow_dense_formula_and_reach_gradient(toy):
    torch.manual_seed(0)
    layer = GCNLayer(8, 3)
    ei = torch.as_tensor(toy.edge_index)
    x = torch.as_tensor(toy.x)
    pairs, und = toy.undirected()
    logits = torch.randn(len(pairs), requires_grad=True)
    w = torch.sigmoid(logits)[torch.as_tensor(und)]
    out = layer(x, ei, gcn_norm(ei, w, toy.n))
    adj = torch.zeros(toy.n, toy.n)
    adj[ei[0], ei[1]] = w.detach()
    assert torch.allclose(out, _dense_gcn(x, adj, layer.lin.weight, layer.bias), atol=1e-5)
    out.sum().backward()
    assert logits.grad is not None and logits.grad.abs().sum() > 0


def test_matches_pyg_gcnconv(toy):
    nn_mod = pytest.importorskip("torch_geometric.nn")
    torch.manual_seed(0)
    ours = GCNLayer(8, 4)
    ref = nn_mod.GCNConv(8, 4)
    ref.lin.weight.data = ours.lin.weight.data.clone()
    ref.bias.data = torch.randn(4)
    ours.bias.data = ref.bias.data.clone()
    ei = torch.as_tensor(toy.edge_index)
    x = torch.as_tensor(toy.x)
    w = torch.rand(ei.shape[1])
    w = (w + w[torch.as_tensor(toy.undirected()[1])]) / 2  # any weights; PyG takes per-direction weights
    assert np.allclose(ours(x, ei, gcn_norm(ei, w, toy.n)).detach(), ref(x, ei, w).detach(), atol=1e-5)
