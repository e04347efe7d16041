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
