"""cer-god params: every preset validates; bad values fail naming the key."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from flows.cer_god.params import PRESETS, Params


@pytest.mark.parametrize("profile", list(PRESETS))
def test_presets_validate(profile):
    p = Params(**PRESETS[profile])
    assert p.run.methods and p.graphs
    assert p.cergod.config().epochs == p.cergod.epochs


@pytest.mark.parametrize(
    "patch, key",
    [
        ({"injection": {"contextual_rate": 0.3, "structural_rate": 0.2, "trap_rate": 0.1}}, "total injection rate 0.6"),
        ({"cergod": {"epochs": 10, "warmup": 10}}, "warmup"),
        ({"run": {"methods": ["dominant"], "seeds": [0, 1], "collapse_seeds": [0, 1]}}, "methods must include"),
        ({"graphs": [{"name": "x", "source": "pygod", "dataset": "cora"}]}, "dataset"),
        ({"cergod": {"cluster_input": "z"}}, "cluster_input"),
        ({"baselines": {"cola": {}}}, "unknown baseline"),
    ],
)
def test_bad_values_name_the_key(patch, key):
    with pytest.raises(ValidationError, match=key):
        Params(**{**PRESETS["smoke"], **patch})
