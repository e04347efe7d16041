"""CER-GOD's champion: the CER-GOD detector the fit stage trains on the first graph with the first seed.

The folder (``data/cer-god/runs/champion/``: ``config.json`` + ``model.safetensors``, loaded by
``components.graph.cergod:load_detector``) holds the GNN autoencoder, the two cluster centres, the spoiler's
edge logits and the trained graph's edges (the method is transductive: it scores that graph's nodes). It is
re-evaluated as the evaluate stage measures it: the detector's scores and pseudo-labels come from
``components.graph.cergod.detect``, the very function the fit stage scores with (so a change to how CER-GOD scores
nodes reaches both), and the metrics from ``components.graph.metrics.detection_metrics`` against the injected
outliers of the evaluation graph (``data/cer-god/graphs/<graph>.npz``; the labels are never seen in training).
Scoring is one full-graph forward pass without sampling (the structure term is exact) and the metrics are
scikit-learn's, so an unchanged detector on an unchanged graph gives the same numbers; a torch or scikit-learn
upgrade that moves them is what the recurring evaluation is there to catch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flows.runtime.champions import Rule, evaluated_candidate

SLUG = "cer-god"
LOADER = "components.graph.cergod:load_detector"  # the allow-listed loader its child run is logged with
METHOD = "cer-god"
LIBRARIES = ("scikit-learn", "safetensors")
RULES = {  # every metric is a rate in [0, 1]: tolerances in its own units
    "auc": Rule(higher_is_better=True, tolerance=0.02, relative=False),  # ROC-AUC (claim 1): 2 points
    "ap": Rule(higher_is_better=True, tolerance=0.02, relative=False),  # average precision: 2 points
    "trap_auc": Rule(higher_is_better=True, tolerance=0.02, relative=False),  # AUC around outliers (claim 2)
    "f1": Rule(higher_is_better=True, tolerance=0.02, relative=False),  # F1 of the pseudo-labels (claim 4)
}


def choose(p) -> tuple[str, int]:
    """(graph, seed) of the champion: the first graph, and the first seed (the one whose edge weights are kept)."""
    return p.graphs[0].name, min(p.run.seeds)


def settings_for(p, graph: str, run_seed: int) -> dict[str, Any]:
    from flows.cer_god.spec import GRAPHS

    return {"graph": f"{GRAPHS}/{graph}.npz", "seed": int(run_seed), "dense_max_nodes": p.run.dense_max_nodes}


def evaluate(model: Any, settings: dict, root: Path) -> dict[str, float]:
    from components.errors import DataError
    from components.graph.graph import Graph
    from components.graph.metrics import detection_metrics
    from components.graph.recon import prepare

    path = Path(root) / settings["graph"]
    if not path.is_file():
        raise DataError(
            f"{path}: CER-GOD's evaluation graph not found (run `paperline run cer-god --stage inject` or `dvc pull`)"
        )
    g = Graph.load(path)
    out = model.score(g, prepare(g, int(settings["dense_max_nodes"])), int(settings["seed"]))
    m = detection_metrics(g.y, out["scores"], g.edge_index, labels=out["labels"])  # F1 of its own pseudo-labels
    return {k: float(m[k]) for k in RULES}


def candidate(run_id: str | None, name: str, folder: Path, settings: dict, root: Path) -> dict | None:
    """The champion record: its metrics computed on the detector loaded back from ``folder`` by its logged loader."""
    return evaluated_candidate(SLUG, run_id, name, folder, LOADER, evaluate, RULES, settings, root)
