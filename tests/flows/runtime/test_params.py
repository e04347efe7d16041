"""Params resolution: presets, params.yaml, --set, and one-line errors naming the key path."""

import pytest

from components.errors import ParamsError
from flows.qualitypajama import params as qp
from flows.runtime import params as P
from flows.runtime.settings import Paths


def resolve(file_section=None, overrides=(), profile="smoke"):
    return P.resolve(
        qp.Params, qp.PRESETS, slug="qualitypajama", profile=profile, file_section=file_section, overrides=overrides
    )


def test_preset_then_file_then_set_win_in_order():
    base = resolve()
    assert base.training.lr == qp.PRESETS["smoke"]["training"]["lr"]
    from_file = resolve({"training": {"lr": 0.01, "batch_size": None}})
    assert from_file.training.lr == 0.01
    assert from_file.training.batch_size == base.training.batch_size  # null = preset
    from_set = resolve({"training": {"lr": 0.01}}, ["training.lr=0.02", "qualitypajama.seed=7"])
    assert (from_set.training.lr, from_set.seed) == (0.02, 7)


def test_every_profile_preset_is_valid():
    for profile in P.PROFILES:
        assert resolve(profile=profile).interventions


@pytest.mark.parametrize(
    "section, overrides, expected",
    [
        ({"trainin": {"lr": 1}}, (), "qualitypajama.trainin: unknown key"),
        ({}, ["training.lrr=1"], "qualitypajama.training.lrr: unknown key"),
        ({}, ["training.lr=fast"], "qualitypajama.training.lr:"),
        ({}, ["training.lr=-1"], "qualitypajama.training.lr: Input should be greater than 0"),
        ({}, ["corpus.junk_frac=1.5"], "qualitypajama.corpus.junk_frac"),
        ({}, ["interventions=[raw, bogus]"], "unknown intervention"),
        ({}, ["curation.bands=20", "curation.rows=8"], "exceeds num_perm"),
    ],
)
def test_bad_values_name_the_key_path(section, overrides, expected):
    with pytest.raises(ParamsError) as err:
        resolve(section, overrides)
    assert expected in str(err.value)


def test_set_without_equals_and_unknown_profile():
    with pytest.raises(ParamsError, match="expected KEY=VALUE"):
        resolve(overrides=["training.lr"])
    with pytest.raises(ParamsError, match="unknown profile 'tiny'"):
        resolve(profile="tiny")


def test_null_template_lists_every_leaf():
    template = P.null_template(qp.Params)
    assert template["training"]["lr"] is None and template["seed"] is None
    assert set(template) == set(qp.Params.model_fields)


def test_only_a_run_with_params_yaml_own_params_is_recorded_in_dvc_lock(tmp_path, monkeypatch):
    from flows.runtime.dvc_lock import why_not

    monkeypatch.delenv("DVC_STAGE", raising=False)
    paths = Paths(tmp_path)
    assert "not a DVC project" in why_not(paths, profile=None, file_profile="smoke", overrides=())
    (tmp_path / ".dvc").mkdir()
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    assert why_not(paths, profile=None, file_profile="smoke", overrides=()) is None
    assert why_not(paths, profile="smoke", file_profile="smoke", overrides=()) is None
    assert "--profile default" in why_not(paths, profile="default", file_profile="smoke", overrides=())
    assert "--set" in why_not(paths, profile=None, file_profile="smoke", overrides=("ofmu.model.lr=1",))
    monkeypatch.setenv("DVC_STAGE", "ofmu-train")
    assert "dvc repro" in why_not(paths, profile=None, file_profile="smoke", overrides=())
