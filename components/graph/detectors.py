"""Every detector behind one call: ``run_detector(name, graph, prepared, configs, seed)``.

CER-GOD's two ablations are the same code with one switch: ``cer-god-nomask`` fixes every edge weight at 1
(no spoiler, hence no repulsion), ``cer-god-nodiv`` sets gamma = 0 (no diversity loss).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from components.errors import ParamsError
from components.graph.baselines import (
    degree_probe,
    feature_norm_probe,
    fit_anomalydae,
    fit_gae,
    fit_iforest,
    leakage_probe,
)
from components.graph.cergod import CerGodConfig, fit_cergod
from components.graph.graph import Graph
from components.graph.recon import Prepared, TrainConfig, fit_dominant

CERGOD_VARIANTS = {"cer-god": {}, "cer-god-nomask": {"use_mask": False}, "cer-god-nodiv": {"gamma": 0.0}}
NEURAL = {"dominant": fit_dominant, "anomalydae": fit_anomalydae, "gae": fit_gae}
SIMPLE = ("iforest", "degree-probe", "featnorm-probe", "leakage-probe")
METHODS: tuple[str, ...] = (*CERGOD_VARIANTS, *NEURAL, *SIMPLE)


def run_detector(
    name: str, g: Graph, p: Prepared, *, cergod: CerGodConfig, baselines: dict[str, TrainConfig], seed: int
) -> dict:
    """Fit one detector on one graph with one seed; ``scores`` (higher = more outlying) and method extras."""
    if name in CERGOD_VARIANTS:
        return fit_cergod(g, p, dataclasses.replace(cergod, **CERGOD_VARIANTS[name]), seed)
    if name in NEURAL:
        if name not in baselines:
            raise ParamsError(f"baselines.{name}: no training settings given")
        return NEURAL[name](p, baselines[name], seed)
    if name == "iforest":
        return fit_iforest(g.x, seed)
    if name == "degree-probe":
        return {"scores": degree_probe(g.degree()), "seconds": 0.0}
    if name == "featnorm-probe":
        return {"scores": feature_norm_probe(g.x), "seconds": 0.0}
    if name == "leakage-probe":
        return {"scores": leakage_probe(g.degree(), g.x), "seconds": 0.0}
    raise ParamsError(f"method {name!r}: use one of {list(METHODS)}")


def is_deterministic(name: str) -> bool:
    """Probes do not depend on the seed: one run per graph is enough."""
    return name in ("degree-probe", "featnorm-probe", "leakage-probe")


def edge_weight_summary(g: Graph, pairs: np.ndarray, weights: np.ndarray) -> dict:
    """Mean learned weight per edge type: normal-normal, normal-outlier (the trap), outlier-outlier."""
    y = g.y
    kind = y[pairs[:, 0]] + y[pairs[:, 1]]
    out = {}
    for k, label in enumerate(("normal-normal", "normal-outlier", "outlier-outlier")):
        sel = kind == k
        out[label] = {"mean": float(weights[sel].mean()) if sel.any() else None, "edges": int(sel.sum())}
    return out
