"""daze params: presets validate; bad input fails before any work with one line naming the field."""

from __future__ import annotations

import pytest

from components.errors import ParamsError
from flows.daze.params import PRESETS, Params
from flows.runtime.params import resolve
from tests.conftest import ROOT, error_line, paperline


@pytest.mark.parametrize("profile", list(PRESETS))
def test_presets_validate(profile):
    p = Params(**PRESETS[profile])
    assert all({"clean", "daze"} <= set(e.methods) for e in p.envs)


@pytest.mark.parametrize(
    "override, expected",
    [
        (
            "envs=[{id: Pong-v5, steps: 1000, methods: [clean, daze], attack: {target: 0, beta: 0.02, k: 5}}]",
            "daze.envs.0.id: Value error, unknown env 'Pong-v5'",
        ),
        (
            "envs=[{id: CartPole-v1, steps: 1000, methods: [clean, sleepernets], "
            "attack: {target: 0, beta: 0.02, k: 5}}]",
            "daze.envs.0.methods: Value error, unknown method 'sleepernets'",
        ),
        (
            "envs=[{id: CartPole-v1, steps: 1000, methods: [clean, daze], attack: {target: 0, beta: 1.5, k: 5}}]",
            "daze.envs.0.attack.beta: Input should be less than or equal to 0.5",
        ),
        (
            "envs=[{id: CartPole-v1, steps: 1000, methods: [clean, daze], attack: {target: 3, beta: 0.02, k: 5}}]",
            "CartPole-v1 has actions 0..1, got 3.0",
        ),
        (
            "envs=[{id: InvertedPendulum-v5, steps: 1000, methods: [clean, daze], "
            "attack: {target: -2, beta: 0.01, k: 10}}]",
            "normalised units must lie in [-1, 1]",
        ),
        (
            "envs=[{id: CartPole-v1, steps: 1000, methods: [clean, daze], "
            "attack: {target: 0, beta: 0.02, tau: 0, k: 5}}]",
            "daze.envs.0.attack.tau: Input should be greater than 0",
        ),
        ("train.seeds=[]", "daze.train.seeds: List should have at least 1 item"),
        ("envs=[]", "daze.envs: List should have at least 1 item"),
        ("eval.factors=[0.8, 50]", "daze.eval.factors: Value error, factors must lie in [0.1, 10]"),
    ],
)
def test_bad_values_fail_naming_the_field(override, expected):
    with pytest.raises(ParamsError) as err:
        resolve(Params, PRESETS, slug="daze", profile="smoke", overrides=[override])
    assert expected in str(err.value) and "\n" not in str(err.value)


def test_the_cli_exits_2_with_one_line_and_writes_nothing():
    before = sorted(p.name for p in ROOT.iterdir())
    proc = paperline("run", "daze", "--profile", "smoke", "--set", "train.seeds=[]", cwd=ROOT, timeout=120)
    assert "daze.train.seeds" in error_line(proc)
    assert sorted(p.name for p in ROOT.iterdir()) == before
