"""selfaug-decoding params: every preset validates; bad values fail naming the key (the CLI prints the one line
and exits 2, tests/integration covers that path for every paper)."""

from __future__ import annotations

import pytest

from components.errors import ParamsError
from flows.runtime.params import resolve
from flows.selfaug_decoding.params import PRESETS, Params


@pytest.mark.parametrize("profile", list(PRESETS))
def test_presets_validate(profile):
    p = resolve(Params, PRESETS, slug="selfaug-decoding", profile=profile)
    # the card's values are in every tuning grid
    assert 1.0 in p.decoding.alpha_grid and 0.1 in p.decoding.beta_grid and 0.5 in p.decoding.tau_grid
    assert p.decoding.noise_step == 500 and "greedy" in p.decoding.methods


@pytest.mark.parametrize(
    "override, key",
    [
        ("model.seeds=[]", "selfaug-decoding.model.seeds"),  # an empty set
        ("decoding.methods=[greedy, dola]", "selfaug-decoding.decoding.methods: .*unknown method"),  # unknown name
        ("decoding.methods=[vcd]", "selfaug-decoding.decoding.methods: .*greedy must be"),
        ("decoding.beta_grid=[0, 0.1]", "selfaug-decoding.decoding.beta_grid: .*out of range"),  # log(0)
        ("decoding.tau_grid=[0.5, 1.0]", "selfaug-decoding.decoding.tau_grid: .*same length"),  # unequal effort
        ("decoding.alpha_grid=[]", "selfaug-decoding.decoding.alpha_grid"),  # an empty grid
        ("decoding.noise_step=1000", "selfaug-decoding.decoding.noise_step"),  # outside the 1000-step schedule
        ("decoding.sas_rules={existence: blur, colour: color_inversion, position: horizontal_flip, count: "
         "random_mask, caption: random_mask}", "selfaug-decoding.decoding.sas_rules: .*unknown augmentation"),
        ("decoding.sas_rules={existence: noise}", "selfaug-decoding.decoding.sas_rules: .*must map exactly"),
        ("data.trigger=hexagon", "selfaug-decoding.data.trigger: .*unknown shape"),
        ("data.partner=triangle", "selfaug-decoding.data: .*trigger and partner"),
        ("data.size=60", "selfaug-decoding.data: .*multiple of 8"),  # wrong shape for the encoder
        ("data.cooc=1.5", "selfaug-decoding.data.cooc"),
        ("model.n_heads=5", "selfaug-decoding.model: .*divisible"),
        ("data.n_captions=100000", "selfaug-decoding.data: .*must not exceed"),
    ],
)  # fmt: skip
def test_bad_values_name_the_key(override, key):
    with pytest.raises(ParamsError, match=key):
        resolve(Params, PRESETS, slug="selfaug-decoding", profile="smoke", overrides=[override])
