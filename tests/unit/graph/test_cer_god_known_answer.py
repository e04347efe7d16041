"""CER-GOD known-answer test and its sabotage check (ARCHITECTURE.md, "Method tests").

Fixture (built here, seeded): 120 normal nodes with N(0, 1) features in 8 dimensions on a sparse random graph and
10 planted outliers with N(3, 1) features that form their own block (p = 0.5) and send 3 edges each to random
normal nodes (the homophily trap: aggregation mixes them into their normal neighbours). Degrees are matched (about
7.5 for both groups), so a structure-only scorer is near chance. On this graph each piece of the method has a job:

- the clustering detector (DEC on the standardised per-node [attribute error, structure error]) must rank
  outliers above normal nodes (AUC),
- its threshold-free labels must beat the trivial labelling "everything is an outlier" (F1),
- the spoiler must weaken normal-outlier edges more than the others (AUC of 1 - w for heterophilous edges).

Settings: the card leaves eps and gamma open; eps = 0.1 (about the planted share) and gamma = 50, everything else
is CerGodConfig's default apart from size (hid 8, 80 epochs, 10 warm-up). That the diversity loss acts on a
collapsing case is tested in ``test_clustering.py``.

Measured (5 seeds, mean): AUC 0.997 vs trivial 0.563, F1 0.811 vs 0.143, edge AUC 0.923 vs 0.5. Sabotaged:
score sign flipped -> AUC 0.003 (fails the AUC check); edge mask all ones -> edge AUC 0.5 (fails edge).
(The previous fixture added one far node, features near 100, as a DEC collapse trap for the embedding reading; in
error space that single node's error sets the standardisation's scale, so it was dropped with that reading.)
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import f1_score, roc_auc_score

from components.graph import cergod
from components.graph.cergod import CerGodConfig, fit_cergod
from components.graph.graph import NORMAL, TRAP, Graph, from_pairs
from components.graph.recon import prepare

SEEDS = range(5)
CFG = CerGodConfig(epochs=80, warmup=10, hid=8, eps=0.1, gamma=50.0)
AUC_MARGIN = 0.15  # mean AUC over seeds >= mean best trivial structure scorer + this
F1_MARGIN = 0.05  # mean F1 of the pseudo-labels >= F1 of labelling every node an outlier + this
EDGE_MARGIN = 0.10  # mean AUC of (1 - w) for normal-outlier edges >= 0.5 (untrained, uniform weights) + this


def trap_fixture(seed: int, n_norm: int = 120, n_out: int = 10, d: int = 8) -> Graph:
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.normal(0, 1, (n_norm, d)), rng.normal(3, 1, (n_out, d))]).astype(np.float32)
    pairs = [(i, j) for i in range(n_norm) for j in range(i + 1, n_norm) if rng.random() < 0.06]
    pairs += [(i, j) for i in range(n_norm, n_norm + n_out) for j in range(i + 1, n_norm + n_out) if rng.random() < 0.5]
    for o in range(n_norm, n_norm + n_out):
        pairs += [(o, int(j)) for j in rng.choice(n_norm, 3, replace=False)]
    kind = np.array([NORMAL] * n_norm + [TRAP] * n_out)
    return from_pairs("kat", x, np.array(pairs), kind)


def known_answer() -> dict:
    """Fit CER-GOD on the fixture for every seed; measured means, trivial baselines and whether each check passes."""
    rows = []
    for seed in SEEDS:
        g = trap_fixture(seed)
        out = fit_cergod(g, prepare(g), CFG, seed)
        y, pairs = g.y, out["edge_pairs"]
        deg = roc_auc_score(y, g.degree())
        het = (y[pairs[:, 0]] != y[pairs[:, 1]]).astype(int)
        rows.append(
            {
                "auc": roc_auc_score(y, out["scores"]),
                "trivial_auc": max(0.5, deg, 1 - deg),
                "f1": f1_score(y, out["labels"]),
                "trivial_f1": f1_score(y, np.ones_like(y)),
                "edge_auc": roc_auc_score(het, -out["edge_weights"]),
            }
        )
    m = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
    m["passes"] = {
        "auc": m["auc"] >= m["trivial_auc"] + AUC_MARGIN,
        "f1": m["f1"] >= m["trivial_f1"] + F1_MARGIN,
        "edge": m["edge_auc"] >= 0.5 + EDGE_MARGIN,
    }
    return m


def test_cer_god_known_answer():
    m = known_answer()
    assert all(m["passes"].values()), m


def _flip_sign(monkeypatch):
    real = cergod._outputs

    def flipped(*args, **kwargs):
        out = real(*args, **kwargs)
        return {**out, "scores": -out["scores"]}

    monkeypatch.setattr(cergod, "_outputs", flipped)


def _mask_all_ones(monkeypatch):
    monkeypatch.setattr(
        cergod.CerGod, "edge_weights", lambda self, und, use_mask: torch.ones(und.numel(), dtype=torch.float32)
    )


@pytest.mark.parametrize("sabotage", [_flip_sign, _mask_all_ones], ids=["score-sign-flipped", "edge-mask-all-ones"])
def test_sabotage_breaks_the_known_answer(monkeypatch, sabotage):
    sabotage(monkeypatch)
    m = known_answer()
    assert not all(m["passes"].values()), m
