"""CER-GOD's champion: the fit stage's export round-trips bit for bit, the evaluator recomputes the fit's own scores'
metrics through the same scoring function, a sabotaged detector scores clearly worse, and the wrong graph or a
missing file is a DataError naming it.

The graph (built here, seeded): 120 normal nodes with N(0, 1) features on a sparse random graph and 10 outliers with
N(3, 1) features forming their own dense block with 3 edges each to normal nodes. One CER-GOD fit (hid 8, 60
epochs, 10 warm-up) through the fit stage's ``run_one``: about a second. Measured: AUC 1.0 (seed 0). Sabotaged
(every encoder weight zeroed): the embedding is 0 for every node, so every score ties: AUC 0.5, F1 0.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from components.errors import DataError
from components.graph import cergod
from components.graph.cergod import CerGodConfig, load_detector, save_detector
from components.graph.graph import NORMAL, TRAP, from_pairs
from components.graph.metrics import detection_metrics
from components.graph.recon import prepare
from flows.cer_god import champion
from flows.cer_god.fit import FitJob, run_one
from flows.runtime.mlflow_model import ALLOWED_LOADERS, resolve_loader

LOADER = "components.graph.cergod:load_detector"
CFG = CerGodConfig(epochs=60, warmup=10, hid=8)
SETTINGS = {"graph": "data/cer-god/graphs/toy.npz", "seed": 0, "dense_max_nodes": 5000}


def toy_graph(seed: int = 0, n_norm: int = 120, n_out: int = 10, d: int = 8):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.normal(0, 1, (n_norm, d)), rng.normal(3, 1, (n_out, d))]).astype(np.float32)
    pairs = [(i, j) for i in range(n_norm) for j in range(i + 1, n_norm) if rng.random() < 0.06]
    pairs += [(i, j) for i in range(n_norm, n_norm + n_out) for j in range(i + 1, n_norm + n_out) if rng.random() < 0.5]
    for o in range(n_norm, n_norm + n_out):
        pairs += [(o, int(j)) for j in rng.choice(n_norm, 3, replace=False)]
    return from_pairs("toy", x, np.array(pairs), np.array([NORMAL] * n_norm + [TRAP] * n_out))


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """(checkout root holding the graph, the graph, the fit's arrays, the champion folder) via the fit stage's job."""
    root = tmp_path_factory.mktemp("cer-god-champion")
    g = toy_graph()
    path = root / SETTINGS["graph"]
    path.parent.mkdir(parents=True)
    g.save(path)
    job = FitJob(
        graph="toy",
        path=str(path),
        method="cer-god",
        seed=0,
        run_seed=0,
        first_seed=0,
        cergod=dataclasses.asdict(CFG),
        baselines={},
        threads=1,
        dense_max_nodes=5000,
        champion=True,
    )
    threads = torch.get_num_threads()
    try:
        arrays = run_one(job).arrays
    finally:
        torch.set_num_threads(threads)
    return root, g, arrays, save_detector(arrays["champion"], root / "champion")


def test_loader_is_allowed_and_round_trips_bit_for_bit(fitted):
    root, g, arrays, folder = fitted
    assert LOADER in ALLOWED_LOADERS and resolve_loader(LOADER) is load_detector
    det = resolve_loader(LOADER)(folder)
    saved = arrays["champion"]["tensors"]
    state = det.model.state_dict()
    assert all(np.array_equal(state[k].numpy(), v) for k, v in saved.items() if k in state)
    assert sorted(saved) == sorted([*state, "graph.edge_index"])
    out = det.score(g, prepare(g))
    assert np.array_equal(out["scores"], arrays["scores"]) and np.array_equal(out["labels"], arrays["labels"])
    assert np.array_equal(det.pyfunc_predict(g.x), arrays["scores"])  # the MLflow pyfunc: features -> scores


def test_evaluate_recomputes_the_fit_stage_metrics(fitted):
    """What the evaluate stage computes from the fit's scores.npz is what the champion's evaluator gives."""
    root, g, arrays, folder = fitted
    metrics = champion.evaluate(load_detector(folder), SETTINGS, root)
    want = detection_metrics(g.y, arrays["scores"], g.edge_index, labels=arrays["labels"])
    assert metrics == {k: want[k] for k in champion.RULES}
    assert metrics["auc"] > 0.9  # the detector works on this graph: what the sabotage below must break


def test_the_evaluator_follows_the_pipelines_scoring_function(fitted, monkeypatch):
    """No copy of the scoring: a change to ``cergod.detect`` reaches the champion's re-evaluation."""
    root, _, _, folder = fitted
    before = champion.evaluate(load_detector(folder), SETTINGS, root)
    real = cergod.detect
    monkeypatch.setattr(cergod, "detect", lambda *a, **k: {**real(*a, **k), "scores": -real(*a, **k)["scores"]})
    after = champion.evaluate(load_detector(folder), SETTINGS, root)
    assert after["auc"] == pytest.approx(1 - before["auc"])


def test_merged_cluster_centres_score_at_chance(fitted):
    """Both centres at one point: every node's q is (0.5, 0.5), so the loaded detector can no longer rank."""
    root, _, _, folder = fitted
    good = champion.evaluate(load_detector(folder), SETTINGS, root)
    broken = load_detector(folder)
    with torch.no_grad():
        broken.model.centres[1] = broken.model.centres[0]
    bad = champion.evaluate(broken, SETTINGS, root)
    assert bad["auc"] == pytest.approx(0.5) and bad["auc"] <= good["auc"] - 0.3
    assert bad["f1"] <= good["f1"] - 0.3 and bad["ap"] < good["ap"] - 0.3


def test_candidate_uses_the_loaded_folder_and_declares_every_rule(fitted):
    root, _, _, folder = fitted
    assert champion.candidate(None, "toy/cer-god/0", folder, SETTINGS, root) is None
    cand = champion.candidate("run-id", "toy/cer-god/0", folder, SETTINGS, root)
    assert cand["metrics"] == champion.evaluate(load_detector(folder), SETTINGS, root)
    assert cand["eval"]["evaluator"] == "cer-god" and set(cand["eval"]["rules"]) == set(cand["metrics"])


def test_other_graph_missing_file_and_broken_folder_are_data_errors(fitted, tmp_path):
    root, g, _, folder = fitted
    det = load_detector(folder)
    other = dataclasses.replace(g, edge_index=g.edge_index[:, 2:])
    with pytest.raises(DataError, match="is not the graph 'toy' it was trained on"):
        det.score(other, prepare(other))
    with pytest.raises(DataError, match=r"toy\.npz: CER-GOD's evaluation graph not found .*paperline run cer-god"):
        champion.evaluate(det, SETTINGS, tmp_path)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad/config.json").write_text((folder / "config.json").read_text())
    (tmp_path / "bad/model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(DataError, match="not a readable CER-GOD detector folder"):
        load_detector(tmp_path / "bad")
    with pytest.raises(DataError, match="missing"):
        load_detector(tmp_path / "nowhere")
