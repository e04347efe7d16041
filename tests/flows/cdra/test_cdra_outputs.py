"""The train stage's tables pass GX suites before they are written: every (seed, arm) judged on every held-out
pair, PRM step scores in {-1, 0, 1} on held-out pairs only, finite RL statistics with one row per step."""

from __future__ import annotations

import math

import pytest

from components.cdra.cdpa import METRICS
from components.data import validate as V
from components.errors import ValidationFailed
from flows.cdra.params import PRESETS, Params
from flows.cdra.train import RL_ARMS, output_checks
from flows.runtime.params import resolve

HELD = ["p1", "p2", "p3"]


@pytest.fixture(scope="module")
def params() -> Params:
    return resolve(Params, PRESETS, slug="cdra", profile="smoke")


def tables(p: Params) -> dict[str, list[dict]]:
    judged = dict.fromkeys(METRICS, True)
    return {
        "eval": [
            {"seed": s, "arm": a, "id": i, **judged} for s in p.data.seeds for a in ("sft", *RL_ARMS) for i in HELD
        ],
        "prm_steps": [
            {"seed": s, "i": n, "step": 1, "pair": i, "gold": 1, "genprm": 0, "score_only": -1}
            for s in p.data.seeds
            for n, i in enumerate(HELD)
        ],
        "rl_steps": [
            {"seed": s, "arm": a, "step": k, "reward": 0.5, "kl": 0.01, "zero_process": 0.2, "zero_outcome": 0.6}
            for s in p.data.seeds
            for a in RL_ARMS
            for k in range(p.rl.steps)
        ],
    }


def check(name: str, rows: list[dict], p: Params) -> None:
    V.validate(rows, output_checks(name, p, HELD), name=f"cdra {name}")


def test_well_formed_tables_pass(params):
    for name, rows in tables(params).items():
        check(name, rows, params)


@pytest.mark.parametrize(
    ("name", "damage", "column"),
    [
        ("eval", lambda rows: rows.pop(), None),  # one (seed, arm, pair) never judged
        ("eval", lambda rows: rows[0].update(id="not-held-out"), "id"),
        ("eval", lambda rows: rows[0].update(arm="grpo"), "arm"),
        ("prm_steps", lambda rows: rows[0].update(genprm=2), "genprm"),
        ("prm_steps", lambda rows: rows[0].update(pair="a-training-pair"), "pair"),
        ("rl_steps", lambda rows: rows[0].update(reward=math.nan), "reward"),
        ("rl_steps", lambda rows: rows[0].update(zero_process=1.5), "zero_process"),
        ("rl_steps", lambda rows: rows.append(dict(rows[0])), None),  # a step logged twice
    ],
)
def test_a_damaged_table_fails_naming_what_is_wrong(params, name, damage, column):
    rows = tables(params)[name]
    damage(rows)
    with pytest.raises(ValidationFailed) as err:
        check(name, rows, params)
    first = str(err.value).splitlines()[0]
    assert f"cdra {name}" in first
    assert column is None or repr(column) in first or column in first
