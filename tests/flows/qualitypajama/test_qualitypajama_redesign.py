"""The default design can decide (issue 19): sanity-checked fits, runs as the bootstrap unit, the gap-slope
proxy with its power, projections kept near the grid, and the params that set them."""

import copy

import numpy as np
import pytest
from pydantic import ValidationError

from components.evaluation.claims import INCONCLUSIVE, REPRODUCED
from components.scaling.simulate import simulate_rows
from flows.qualitypajama import claims as C
from flows.qualitypajama.fit import sane_samples, usable
from flows.qualitypajama.params import PRESETS, Params
from flows.qualitypajama.report import trusted_samples

LAW = {"E": 2.5, "A": 48.0, "alpha": 0.35, "B": 56.0, "beta": 0.35}
BUDGETS = [31_250, 62_500, 125_000, 250_000, 500_000]


def grid(seeds=(0, 1)):
    return [
        {"size_target": n, "seed": s, "N": n, "D": d}
        for n in (20_000, 50_000, 120_000, 300_000)
        for s in seeds
        for d in BUDGETS
    ]


def test_a_runaway_fit_is_not_usable_and_its_refits_drop_out():
    """The issue's alpha = 101, A = 1e245 fit was counted usable (only positivity was checked)."""
    assert usable(LAW)
    assert not usable({**LAW, "alpha": 101.0, "A": 1e245})
    assert usable({**LAW, "E": 0.0})  # E is shared and judged on its own (identified or not)
    samples = np.array([[LAW[k] for k in ("A", "B", "E", "alpha", "beta")]] * 4)
    samples[1, [0, 3]] = 1e245, 101.0
    clean, dropped = sane_samples(samples)
    assert dropped == 1 and np.isnan(clean[1]).all() and np.isfinite(clean[[0, 2, 3]]).all()


def test_too_many_insane_refits_make_an_intervention_inconclusive():
    s = np.ones((100, 5))
    fits = {"raw": {"refits_dropped": 2}, "qa-67": {"refits_dropped": 10}}
    out, flags = trusted_samples(fits, {"raw": s, "qa-67": s})
    assert np.isfinite(out["raw"]).all() and np.isnan(out["qa-67"]).all()
    assert len(flags) == 1 and flags[0].startswith("qa-67: 10.0%")


def _gap_part(rows, **kw):
    args = dict(
        delta=0.01,
        level=0.95,
        note="Mini scale",
        seed=0,
        n_resamples=2000,
        power_sims=60,
        power_resamples=300,
        power_delta_beta=0.05,
    )
    return C.gap_slope_part(rows, "raw", "qa-67", LAW, BUDGETS, **{**args, **kw})


def test_gap_slope_detects_a_moved_beta_through_one_percent_run_noise_and_states_its_power():
    rows = simulate_rows(grid(), {"raw": LAW, "qa-67": {**LAW, "beta": 0.40}}, {"run": 0.01, "point": 0.002}, seed=4)
    part = _gap_part(rows)
    assert part.verdict == REPRODUCED and part.n_seeds == 8 and part.cluster_unit == C.RUN_UNIT
    power = {r["planted"]: r["reproduced"] for r in part.details["power"]["rows"]}
    slope0, slope5 = part.details["power"]["planted_slope"]
    assert slope0 == 0.0 and power[slope5] >= 0.9 and power[0.0] <= 0.15
    assert "proxy" in part.metric


def test_gap_slope_with_one_seed_cannot_decide():
    rows = simulate_rows(grid(seeds=(0,)), {"raw": LAW, "qa-67": {**LAW, "beta": 0.40}}, {"run": 0.01}, seed=4)
    rows = [r for r in rows if r["size_target"] == 20_000]
    assert _gap_part(rows, power_sims=0).verdict == INCONCLUSIVE


def test_opposing_forces_do_not_compare_the_shared_e():
    rng = np.random.default_rng(0)
    law = np.array([[LAW[k] for k in ("A", "B", "E", "alpha", "beta")]])
    draws = {n: law * np.exp(rng.normal(0, 0.01, (200, 5))) for n in ("raw", "qa-67")}
    full = {n: {"full": LAW} for n in draws}
    res = C.claim_opposing(
        full, draws, "raw", ["qa-67"], d_exp=0.01, d_log=0.05, level=0.95, note="Mini scale", n_seeds=2
    )
    assert "E" not in res.parts[0]["details"]["classes"]
    ids = [p["id"] for side in res.parts[0]["parts"] for p in side["parts"]]
    assert ids and not any("/E/" in i for i in ids)


def _params(**edits):
    d = copy.deepcopy(PRESETS["default"])
    for path, value in edits.items():
        section, key = path.split(".")
        d[section][key] = value
    return Params.model_validate(d)


def test_default_design_has_two_seeds_a_1k_vocabulary_no_llm_rewrite_and_10x_projection():
    p = _params()
    assert len(p.grid.seeds) >= 2 and p.tokenizer.vocab_size == 1024 and p.rewrite.llm_docs == 0
    assert p.claims.projection_multiplier <= 10 and p.fit.power_sims >= 1


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ({"grid.seeds": [0]}, "seeds"),
        ({"claims.projection_multiplier": 100.0}, "projection_multiplier"),
        ({"grid.extra_seeds": [1]}, "extra_seeds"),
    ],
)
def test_bad_design_values_are_refused_naming_the_field(edit, field):
    with pytest.raises(ValidationError, match=field):
        _params(**edit)


def test_a_pair_without_usable_refits_is_inconclusive_not_no_reversal():
    """All refits insane (NaN): the old code's failed check part made C3 "not reproduced"."""
    nan = np.full((50, 5), np.nan)
    res = C.claim_reversal(
        {"raw": nan, "qa-67": nan}, ["raw", "qa-67"], 1e10, 1e12, level=0.95, note="Mini scale", n_seeds=2
    )
    assert res.verdict == INCONCLUSIVE and res.parts[0]["verdict"] == INCONCLUSIVE


def test_default_vocabulary_keeps_the_smallest_models_embedding_near_its_size():
    """C = 6ND counts non-embedding parameters: at 4k tokens the smallest model's embedding was 5.8x its N."""
    from components.models.tiny_lm import config_for_params, non_embedding_params

    p = _params()
    cfg = config_for_params(min(p.grid.sizes), vocab_size=p.tokenizer.vocab_size, max_seq_len=p.training.seq_len)
    assert p.tokenizer.vocab_size * cfg.d_model / non_embedding_params(cfg) < 1.5


def test_report_labels_an_all_template_qa_arm_as_the_stand_in():
    from flows.qualitypajama.report import _curation_section

    text = _curation_section({}, {"synthetic_qa": {"template": 120}}).markdown
    assert "template stand-in" in text and "template-QA data" in text
    assert "template-QA" not in _curation_section({}, {"synthetic_qa": {"template": 100, "smollm2": 8}}).markdown


def test_power_section_shows_the_planted_delta_beta_beside_its_slope():
    from types import SimpleNamespace

    from flows.qualitypajama.report import _power_section

    part = {
        "id": "C1/qa-67/gap-slope",
        "details": {
            "power": {
                "planted_delta_beta": [0.0, 0.05],
                "rows": [
                    {"planted": 0.0, "n_sim": 10, "reproduced": 0.1},
                    {"planted": 0.166, "n_sim": 10, "reproduced": 1.0},
                ],
            }
        },
    }
    fits = {"shared_E": {"state": "not identified", "reason": "E at 0"}, "fitter_power": None}
    table = _power_section(fits, [SimpleNamespace(parts=[part])]).tables[-1]
    assert [r["planted Δbeta"] for r in table] == [0.0, 0.05] and table[1]["planted slope"] == "0.1660"


def test_power_section_lists_the_refit_parts_power():
    from types import SimpleNamespace

    from flows.qualitypajama.report import _power_section

    leaf = {
        "id": "C2/qa-67/beta/improved",
        "rule": "standard",
        "details": {
            "power": {
                "planted_in_deltas": [0.0, 5.0],
                "rows": [
                    {"planted": 0.0, "n_sim": 20, "reproduced": 0.0, "not_reproduced": 0.1},
                    {"planted": 0.05, "n_sim": 20, "reproduced": 0.35, "not_reproduced": 0.0},
                ],
            }
        },
    }
    claim = {
        "id": "C2",
        "rule": "composite",
        "details": {},
        "parts": [{"id": "C2/qa-67", "rule": "composite", "parts": [leaf]}],
    }
    fits = {
        "shared_E": {"state": "identified", "reason": "inside"},
        "fitter_power": None,
        "refit_power": {"n_sim": 20, "n_boot": 200, "simulated": ["qa-67", "raw"]},
    }
    section = _power_section(fits, [SimpleNamespace(parts=claim["parts"], to_dict=lambda: claim)])
    (table,) = section.tables
    assert [(r["comparison"], r["planted (x band)"], r["reproduced"]) for r in table] == [
        ("C2/qa-67/beta/improved", 0.0, "0.00"),
        ("C2/qa-67/beta/improved", 5.0, "0.35"),
    ]
    assert "20 runs simulated from the fitted laws of qa-67, raw" in section.markdown
