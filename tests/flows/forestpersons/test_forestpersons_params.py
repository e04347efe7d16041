"""forestpersons params: every preset validates; bad values fail naming the key; a corrupt set names its file."""

from __future__ import annotations

import numpy as np
import pytest

from components.errors import DataError, ParamsError
from flows.forestpersons.common import load_set
from flows.forestpersons.params import PRESETS, Params
from flows.runtime.params import resolve


@pytest.mark.parametrize("profile", list(PRESETS))
def test_presets_validate(profile):
    p = resolve(Params, PRESETS, slug="forestpersons", profile=profile)
    assert set(p.train.seeds) == {"forest", "urban", "aerial"}


@pytest.mark.parametrize(
    "override, key",
    [
        ("train.seeds.lake=[0]", "forestpersons.train.seeds: .*unknown domain"),  # an unknown name
        ("train.seeds.forest=[0]", "forestpersons.train.seeds: .*at least 2 seeds"),  # too few seeds for the claims
        ("train.seeds.urban=[]", "forestpersons.train.seeds: .*missing"),  # an empty set
        ("scenes.test_images=405", "forestpersons.scenes: .*whole number"),  # shape: frames do not divide the set
        ("scenes.size=16", "forestpersons.scenes.size"),  # out of range
        ("tiers.hard_from=0.3", "forestpersons.tiers: .*easy_below"),  # inconsistent bounds
        ("source.hf_id=not a dataset id", "forestpersons.source.hf_id"),
        ("eval.hog.scale=1.0", "forestpersons.eval.hog.scale"),
        ("train.epochs=0", "forestpersons.train.epochs"),
    ],
)
def test_bad_values_name_the_key(override, key):
    with pytest.raises(ParamsError, match=key):
        resolve(Params, PRESETS, slug="forestpersons", profile="smoke", overrides=[override])


def test_a_set_in_the_wrong_format_names_its_file(tmp_path):
    (tmp_path / "forest_test.npz").write_text("not an npz")
    with pytest.raises(DataError, match="forest_test.npz"):
        load_set(tmp_path, "forest_test")
    np.savez(tmp_path / "forest_test.npz", images=np.zeros((2, 8, 8, 3), np.uint8))
    (tmp_path / "forest_test.json").write_text('{"images": [], "annotations": []}')
    with pytest.raises(DataError, match="2 images but 0 image records"):
        load_set(tmp_path, "forest_test")
