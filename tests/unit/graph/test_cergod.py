"""CER-GOD end to end on a toy graph: the spoiler's weights, the outputs, repeatability, the ablation switches."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from components.errors import ParamsError
from components.graph.cergod import CerGodConfig, fit_cergod
from components.graph.detectors import edge_weight_summary, run_detector
from components.graph.recon import TrainConfig, prepare

CFG = CerGodConfig(epochs=80, warmup=10, hid=8, mask_init=0.0)


@pytest.fixture
def fitted(toy):
    return fit_cergod(toy, prepare(toy), CFG, seed=0)


def test_spoiler_weights_in_unit_interval_and_drop_across_classes(toy, fitted):
    w = fitted["edge_weights"]
    assert w.shape == (len(fitted["edge_pairs"]),) and (w >= 0).all() and (w <= 1).all()
    summary = edge_weight_summary(toy, fitted["edge_pairs"], w)
    cross, within = summary["normal-outlier"]["mean"], summary["normal-normal"]["mean"]
    assert cross < 0.5 < within  # started at sigmoid(0) = 0.5 everywhere
    assert cross < summary["outlier-outlier"]["mean"]


def test_outputs_and_threshold_free_labels(toy, fitted):
    assert fitted["scores"].shape == (toy.n,) and np.isfinite(fitted["scores"]).all()
    assert set(np.unique(fitted["labels"])) <= {0, 1}
    assert fitted["minority_share"] == pytest.approx(fitted["labels"].mean())
    assert fitted["collapsed"] is (fitted["minority_share"] < 0.01)
    assert {"recon", "cluster", "repulsion", "diversity"} <= set(fitted["final_losses"])


def test_same_seed_same_result(toy, fitted):
    again = fit_cergod(toy, prepare(toy), CFG, seed=0)
    assert np.array_equal(again["scores"], fitted["scores"])


def test_no_mask_variant_keeps_unit_weights(toy):
    p = prepare(toy)
    out = run_detector("cer-god-nomask", toy, p, cergod=dataclasses.replace(CFG, epochs=20), baselines={}, seed=0)
    assert (out["edge_weights"] == 1).all() and out["final_losses"]["repulsion"] == 0.0


def test_bad_config_names_the_key(toy):
    with pytest.raises(ParamsError, match="cergod.warmup"):
        fit_cergod(toy, prepare(toy), dataclasses.replace(CFG, warmup=80), seed=0)
    with pytest.raises(ParamsError, match="method 'nope'"):
        run_detector("nope", toy, prepare(toy), cergod=CFG, baselines={"dominant": TrainConfig()}, seed=0)


def test_residual_cluster_input_variant(toy):
    out = fit_cergod(toy, prepare(toy), dataclasses.replace(CFG, epochs=20, cluster_input="residual"), seed=0)
    assert out["scores"].shape == (toy.n,) and np.isfinite(out["scores"]).all()
    with pytest.raises(ParamsError, match="cergod.cluster_input"):
        fit_cergod(toy, prepare(toy), dataclasses.replace(CFG, cluster_input="z"), seed=0)
