"""Issue 19 (OFMU): the dev-split sweep and its rules, GA's early stop in the flow, equal vision checkpoints."""

from __future__ import annotations

import copy

import pytest

from flows.ofmu import tune as T
from flows.ofmu.params import LM_SWEEP, PRESETS, MethodSpec, Params, checkpoint_grid


def params(**changes) -> Params:
    d = copy.deepcopy(PRESETS["default"])
    for section, values in changes.items():
        d[section].update(values)
    return Params.model_validate(d)


# --- the sweep's rules ---------------------------------------------------------------------------------------------


def test_lm_rule_picks_the_best_utility_among_settings_at_the_matched_forget_quality():
    recs = [{"mu": 0.70, "fq": 1e-6}, {"mu": 0.55, "fq": 0.30}, {"mu": 0.60, "fq": 0.06}, {"mu": 0.10, "fq": 0.9}]
    assert T.pick_lm(recs, 0.05) == 2  # the highest MU whose FQ reaches the threshold, not the highest MU
    assert T.pick_lm(recs, 0.95) == 3  # none reaches it: the highest FQ


def test_vision_rule_prefers_settings_that_reach_the_band_then_test_accuracy():
    recs = [
        {"in_band": 0.0, "TA": 0.95, "gap": 0.5},
        {"in_band": 1.0, "TA": 0.85, "gap": 0.0},
        {"in_band": 1.0, "TA": 0.88, "gap": 0.0},
        {"in_band": 0.0, "TA": 0.80, "gap": 0.1},
    ]
    assert T.pick_vision(recs) == 2
    assert T.pick_vision([recs[0], recs[3]]) == 1  # none in band: the nearest to it


def test_sweep_gives_every_method_the_same_settings_count_and_seeds_and_marks_the_pick():
    methods = {
        "ga": MethodSpec(kind="ga", options={"lr": 1e-3}),
        "ofmu": MethodSpec(kind="ofmu", options={"beta": 1.0}),
        "ofmu-beta0": MethodSpec(kind="ofmu", options={"beta": 0.0}),
    }
    calls = []

    def run_one(name, spec, seed):
        calls.append((name, seed))
        return {"mu": spec.options.get("lr", 0) + spec.options.get("lr_inner", 0), "fq": 0.5}

    tune = {"ga": [{"lr": 1e-4}, {"lr": 1e-2}], "ofmu": [{"lr_inner": 1e-3}, {"lr_inner": 1e-4, "beta": 0.1}]}
    chosen, recs = T.sweep(tune, methods, [100, 101], run_one, T.aggregate_lm, lambda rs: T.pick_lm(rs, 0.05))
    assert sorted(calls) == sorted((m, s) for m in tune for _ in range(2) for s in (100, 101))
    assert chosen["ga"] == {"lr": 1e-2} and chosen["ofmu"] == {"beta": 1.0, "lr_inner": 1e-3}
    assert sum(r["chosen"] for r in recs) == 2
    picked = T.apply(methods, chosen)
    # the ablation follows OFMU's pick and keeps what defines it
    assert picked["ofmu-beta0"].options == {"beta": 0.0, "lr_inner": 1e-3}


def test_the_default_sweep_grid_has_the_same_size_for_every_method_and_covers_ofmus_knobs():
    assert {len(g) for g in LM_SWEEP.values()} == {8}
    ofmu = LM_SWEEP["ofmu"]
    for knob in ("lr_inner", "beta", "inner_steps", "rho0", "rho_growth"):
        assert len({o[knob] for o in ofmu}) == 2, knob
    p = params(unlearn={"tune": "grid"}, vision={"tune": "grid"})
    assert p.unlearn.tune == LM_SWEEP and set(p.vision.tune) == set(LM_SWEEP)


@pytest.mark.parametrize(
    "section, values, match",
    [
        ("unlearn", {"tune": {"ga": [{"lr": 1e-3}], "ofmu": [{}, {}]}}, "same non-zero number"),
        ("unlearn", {"tune": {"nope": [{}]}}, "unknown method"),
        ("unlearn", {"tune": {"ga": [{}]}, "tune_seeds": [0]}, "must not overlap"),
        ("unlearn", {"tune": {"ofmu": [{"inner_steps": 2}]}}, "not a multiple"),
        ("vision", {"tune": {"ofmu": [{}]}, "tune_scenario": "class-3"}, "claims do not use"),
        ("vision", {"checkpoint_every": 7}, "checkpoint_every"),
    ],
)
def test_bad_tuning_params_are_refused_naming_the_field(section, values, match):
    with pytest.raises(ValueError, match=match):
        params(**{section: values})


def test_the_frozen_default_is_not_the_untuned_setting_of_the_old_code():
    """The default carries the sweep's pick (README: Tuning), not the hand-set beta = 1, lr 1e-3 everywhere."""
    p = params()
    old = {"beta": 1.0, "inner_steps": 3, "lr_inner": 1e-3, "lr_outer": 1e-3, "rho0": 0.01, "rho_growth": 1.1}
    assert {k: p.unlearn.methods["ofmu"].options[k] for k in old} != old
    ofmu, beta0 = p.unlearn.methods["ofmu"].options, p.unlearn.methods["ofmu-beta0"].options
    assert {k: v for k, v in beta0.items() if k != "beta"} == {k: v for k, v in ofmu.items() if k != "beta"}
    assert beta0["beta"] == 0.0


# --- GA's early stop in the flow -----------------------------------------------------------------------------------


def test_ga_gets_the_retrain_models_forget_loss_as_its_stop_threshold():
    from flows.ofmu.unlearn import options_for

    p = params()
    ga = p.unlearn.methods["ga"]
    assert options_for(p, ga, 3.5)["stop_loss_f"] == 3.5
    assert "stop_loss_f" not in options_for(p, p.unlearn.methods["graddiff"], 3.5)
    off = params(unlearn={"ga_stop": "none"})
    assert options_for(off, off.unlearn.methods["ga"], 3.5).get("stop_loss_f") is None


# --- vision: the same checkpoint grid for every method -----------------------------------------------------------


def test_every_vision_method_is_checked_on_the_same_grid_of_evaluations():
    """Issue 19: GradDiff was checked after each of its steps (90 chances to hit the UA band), OFMU once per round
    (10). Now both are checked every ``checkpoint_every`` evaluations (default: one OFMU round)."""
    import torch

    from components.unlearning import vision as VI
    from flows.ofmu.vision import _method

    torch.set_num_threads(1)
    d = copy.deepcopy(PRESETS["smoke"])
    p = Params.model_validate(d)
    data = VI.load_digits_split(0.2, seed=0)
    mask = VI.forget_mask(data["y_train"], "class-3", seed=0)
    base = VI.train_classifier(
        VI.mlp(16, seed=0), data["x_train"], data["y_train"], epochs=2, lr=1e-3, batch=32, seed=0
    )
    every = checkpoint_grid(p.vision.methods)
    assert every == 18  # one OFMU round (T = 3)
    rows = {m: _method(p, data, mask, base, m, p.vision.methods[m], 0, -1.0, every)[0] for m in ("graddiff", "ofmu")}
    assert rows["graddiff"]["checks"] == rows["ofmu"]["checks"] == p.vision.budget // every
    assert not rows["graddiff"]["in_band"] and rows["graddiff"]["evals"] == p.vision.budget
