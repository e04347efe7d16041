"""anthrobench params: every preset validates; bad values fail naming the key."""

from __future__ import annotations

import pytest

from components.errors import ParamsError
from flows.anthrobench.params import PRESETS, Params
from flows.runtime.params import resolve


@pytest.mark.parametrize("profile", list(PRESETS))
def test_presets_validate(profile):
    p = resolve(Params, PRESETS, slug="anthrobench", profile=profile)
    assert p.data.n_turns == 5 and p.claims.target in ("simulator", *p.targets.models)


@pytest.mark.parametrize(
    "override, key",
    [
        ("data.seeds=[]", "anthrobench.data.seeds"),  # an empty set
        ("data.n_turns=1", "anthrobench.data.n_turns"),  # out of range: no turn 2 means no late onset
        ("hazards.a={telepathy: 1.0}", "anthrobench.hazards.a: .*unknown behaviour"),  # an unknown name
        ("hazards.a={empathy: 50.0}", "anthrobench.hazards.a: .*intercepts"),  # out of range
        ("targets.temperature=0", "anthrobench.targets.temperature"),
        ("targets.models=[endpoint:my-model]", "anthrobench.targets: .*endpoint_url"),  # a mismatched pair
        ("claims.target=gpt-4o", "anthrobench: .*claims.target"),  # not a target of this run
        ("claims.late_count=15", "anthrobench.claims.late_count"),  # more than 14 behaviours
    ],
)
def test_bad_values_name_the_key(override, key):
    with pytest.raises(ParamsError, match=key):
        resolve(Params, PRESETS, slug="anthrobench", profile="smoke", overrides=[override])
