"""optimistic-o2nc's champion (ODOG's tuned settings): the JSON loader round-trips the saved folder, the evaluator
gives the same numbers on the loaded settings, and sabotaged settings score clearly worse (fast: no pipeline run)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from components.errors import DataError
from components.optim.settings import OptimiserSettings, load_settings, save_settings
from flows.optimistic_o2nc import champion
from flows.optimistic_o2nc.params import PRESETS, Params
from flows.runtime.mlflow_model import ALLOWED_LOADERS, resolve_loader

LOADER = "components.optim.settings:load_settings"


@pytest.fixture(scope="module")
def smoke():
    p = Params.model_validate(PRESETS["smoke"])
    return p, champion.settings_for(p)


def test_settings_round_trip_bit_for_bit_and_evaluate_the_same(smoke, tmp_path):
    p, settings = smoke
    folder = champion.save(p, tmp_path / "a")
    assert LOADER in ALLOWED_LOADERS and resolve_loader(LOADER) is load_settings
    loaded = load_settings(folder)
    assert loaded == OptimiserSettings("odog", champion.config_of(p))
    assert loaded.config == p.methods["odog"].model_dump()  # what measure.tasks hands to build_method
    assert (save_settings(loaded, tmp_path / "b") / "settings.json").read_bytes() == (
        folder / "settings.json"
    ).read_bytes()
    rows = np.zeros((4, 1))
    assert np.array_equal(
        loaded.pyfunc_predict(rows), OptimiserSettings("odog", champion.config_of(p)).pyfunc_predict(rows)
    )
    assert loaded.pyfunc_predict(rows).shape == (4, 3)
    assert np.array_equal(loaded.pyfunc_predict({"rows": rows}), loaded.pyfunc_predict(rows))  # as MLflow serves it
    again = champion.evaluate(loaded, settings, tmp_path)
    assert again == champion.evaluate(OptimiserSettings("odog", champion.config_of(p)), settings, tmp_path)
    assert set(again) == set(champion.RULES) and again["reached"] == 1.0


def test_sabotaged_settings_score_clearly_worse(smoke, tmp_path):
    p, settings = smoke
    good = load_settings(champion.save(p, tmp_path))
    det_only = {**settings, "sigmas": []}  # the deterministic grid is enough to see it, and cheaper
    base = champion.evaluate(good, det_only, tmp_path)
    assert set(base) == {"log_calls", "reached"}
    # the learner's step cut 100-fold: ODOG crawls (many more calls per eps, or the cap)
    slow = champion.evaluate(replace(good, config={**good.config, "eta": good.config["eta"] / 100}), det_only, tmp_path)
    assert slow["log_calls"] > base["log_calls"] + 1.0, (base, slow)
    # the ball radius D shrunk 1000-fold: each step moves almost nothing, runs spend the cap
    tiny = champion.evaluate(
        replace(good, config={**good.config, "radius": good.config["radius"] / 1000}), det_only, tmp_path
    )
    assert tiny["reached"] < base["reached"] and tiny["log_calls"] > base["log_calls"] + 1.0, (base, tiny)
    for metric in base:  # each worse value is outside its rule's tolerance
        rule = champion.RULES[metric]
        worse = (base[metric] - tiny[metric]) if rule.higher_is_better else (tiny[metric] - base[metric])
        assert worse > rule.tolerance, metric


def test_loader_refuses_what_is_not_a_settings_file(tmp_path):
    with pytest.raises(DataError, match="not an optimiser settings file"):
        load_settings(tmp_path)  # no settings.json
    (tmp_path / "settings.json").write_text(json.dumps({"format": 1, "method": "odog", "config": [1, 2]}))
    with pytest.raises(DataError, match="config object"):
        load_settings(tmp_path)
    (tmp_path / "settings.json").write_text(json.dumps({"format": 1, "method": "sgd-pickled", "config": {}}))
    with pytest.raises(DataError, match="is not one of"):
        load_settings(tmp_path)
