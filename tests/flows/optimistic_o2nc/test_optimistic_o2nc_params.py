"""optimistic-o2nc's params: the validators reject bad eps and step sizes (moved from tests/unit/optim)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from flows.optimistic_o2nc.params import PRESETS, Params


def test_pipeline_params_reject_bad_eps_and_step_sizes():
    smoke = PRESETS["smoke"]
    with pytest.raises(ValidationError, match="eps"):
        Params(**{**smoke, "grid": {**smoke["grid"], "eps": [0.1, 0.0]}})
    with pytest.raises(ValidationError, match="eta"):
        Params(**{**smoke, "methods": {"odog": {"eta": 0.0}}})


def test_small_eps_budget_reaches_the_runs_of_the_two_smallest_eps_for_every_method():
    from flows.optimistic_o2nc.measure import tasks

    p = Params(**PRESETS["default"])
    assert p.grid.small_eps_budget == 40_000 and p.grid.budget == 5_000
    small = sorted(p.grid.eps)[:2]
    det = [t for t in tasks(p) if t.grid == "det"]
    for t in det:
        assert t.budget == (40_000 if t.eps_rel in small else 5_000), t
    by_method = {(t.method, t.eps_rel): t.budget for t in det}
    assert by_method[("odog", small[0])] == by_method[("cmo23", small[0])]  # the same cap for method and baseline
    full = Params(**PRESETS["full"])
    assert {t.budget for t in tasks(full) if t.grid == "det"} == {200_000}


def test_small_eps_budget_below_the_budget_is_rejected():
    d = PRESETS["default"]
    with pytest.raises(ValidationError, match="small_eps_budget"):
        Params(**{**d, "grid": {**d["grid"], "small_eps_budget": 1_000}})
    unset = Params(**{**d, "grid": {**d["grid"], "small_eps_budget": None}})
    assert {unset.grid.budget_for(e) for e in unset.grid.eps} == {5_000}
