"""implicit-planning params: every preset validates; bad values fail naming the key."""

from __future__ import annotations

import pytest

from components.errors import ParamsError
from flows.implicit_planning.params import PRESETS, Params
from flows.runtime.params import resolve


@pytest.mark.parametrize("profile", list(PRESETS))
def test_presets_validate(profile):
    p = resolve(Params, PRESETS, slug="implicit-planning", profile=profile)
    assert p.steer.multiplier == 1.5 and p.control.pairs


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("data.seeds=[]", "implicit-planning.data.seeds"),  # an empty set
        ("data.families=[ight, ough]", "implicit-planning.data.families"),  # an unknown name
        ("steer.multiplier=0", "implicit-planning.steer.multiplier"),  # out of range
        ("steer.position=middle", "implicit-planning.steer.position"),  # an unknown name
        ("control.pairs=[[ight, ight]]", "implicit-planning.control"),  # a pair of one family
        ("control.pairs=[[ight, zzz]]", "implicit-planning.control"),  # an unknown family
        ("steer.real_pairs=[[ight, ough]]", "implicit-planning: .*real_pairs"),
        ("steer.real_layers=[-1]", "implicit-planning.steer.real_layers"),
        ("data.lines_train=1", "implicit-planning.data.lines_train"),  # too few to average
        ("data.qa_pairs=21", "implicit-planning.data.qa_pairs"),
        ("steer.multipliers=[4, 10]", "implicit-planning.steer.*must include steer.multiplier"),  # card's m dropped
        ("steer.multipliers=[1.5, -2]", "implicit-planning.steer.*multipliers"),  # out of range
        ("claims.engaged_kl=0", "implicit-planning.claims.engaged_kl"),  # a precondition that cannot fail
    ],
)
def test_bad_values_name_the_key(override, key):
    with pytest.raises(ParamsError, match=key):
        resolve(Params, PRESETS, slug="implicit-planning", profile="smoke", overrides=[override])
