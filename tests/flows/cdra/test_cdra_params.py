"""cdra params: every preset validates; bad values fail naming the key; a pair file in the wrong format is named."""

from __future__ import annotations

import pytest

from components.cdra import task as T
from components.errors import DataError, ParamsError
from flows.cdra.params import PRESETS, Params
from flows.runtime.params import resolve


@pytest.mark.parametrize("profile", list(PRESETS))
def test_presets_validate(profile):
    p = resolve(Params, PRESETS, slug="cdra", profile=profile)
    assert p.rl.group_size == 5 and p.data.seeds


@pytest.mark.parametrize(
    "override, key",
    [
        ("rl.group_size=1", "cdra.rl.group_size"),  # out of range: a group of one has no baseline
        ("data.seeds=[]", "cdra.data.seeds"),  # an empty set
        ("data.per_topic=0", "cdra.data.per_topic"),
        ("data.heldout=5000", "cdra.data: heldout 5000"),  # more held out than there are pairs
        ("policy.noise=0.9", "cdra.policy.noise"),
        ("policy.n_sft=100000", "cdra: policy.n_sft 100000 exceeds"),
        ("rl.prompts_per_step=5000", "cdra: rl.prompts_per_step"),
        ("rl.beta=-1", "cdra.rl.beta"),
        ("prm.kind=mystery", "cdra.prm"),  # an unknown name
    ],
)
def test_bad_values_name_the_key(override, key):
    with pytest.raises(ParamsError, match=key):
        resolve(Params, PRESETS, slug="cdra", profile="smoke", overrides=[override])


def test_pair_rows_in_the_wrong_format_are_named():
    good = {"id": "a", "topic": "topic00", "explicit": "nuts", "value": "pregnant"}
    assert T.pair_of(good).implicit == "alcohol"
    with pytest.raises(DataError, match="missing field 'value'"):
        T.pair_of({k: v for k, v in good.items() if k != "value"})
    with pytest.raises(DataError, match="unknown value 'astronaut'"):
        T.pair_of({**good, "value": "astronaut"})
    with pytest.raises(DataError, match="unknown explicit"):
        T.pair_of({**good, "explicit": "gluten"})
    with pytest.raises(DataError, match="unknown word 'gluten'"):
        T.encode(["Step", "gluten"])
