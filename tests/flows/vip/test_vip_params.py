"""vip params: every preset validates; bad values fail naming the key; the DAPO-Math-17k loader reads the real
format from a local fixture, names a file in the wrong format, and fails at once offline naming the Hub id."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.errors import DataError, ParamsError
from components.vip import dapo_format
from flows.runtime.params import resolve
from flows.vip.params import PRESETS, Params

FIXTURE = Path(__file__).parents[2] / "fixtures" / "vip" / "dapo_math_17k_sample.jsonl"


@pytest.mark.parametrize("profile", list(PRESETS))
def test_presets_validate(profile):
    p = resolve(Params, PRESETS, slug="vip", profile=profile)
    assert {"uniform", "vip"} <= set(p.rl.methods)


@pytest.mark.parametrize(
    "override, key",
    [
        ("rl.budget_per_step=1000", "vip.rl: .*budget_per_step 1000 must lie in"),  # budget outside [L*Q, U*Q]
        ("rl.lo=1", "vip.rl.lo"),  # out of range: a group of one has no baseline
        ("rl.hi=1", "vip.rl.hi"),
        ("rl.seeds=[]", "vip.rl.seeds"),  # an empty set
        ("data.sft_mix={add9: 1.0}", "vip.data: .*sft_mix: unknown tier"),  # an unknown name
        ("data.features=[bert]", "vip.data: .*unknown feature set"),
        ("data.sft_noise=1.0", "vip.data.sft_noise"),
        ("rl.gp_inference=vi", "vip.rl.gp_inference"),  # an unknown name
        ("model.hf_model=Qwen/Qwen2.5-Math-1.5B", "vip: .*model.hf_model .*set data.source: dapo"),  # mismatched pair
        (
            "data.source=dapo",
            "vip: .*TinyLM cannot read DAPO prompts",
        ),  # out of range: every answer slipped teaches nothing right
        ("rl.methods.vip.predictor=oracle", "vip.rl.methods.vip: .*predictor 'oracle'"),
        ("rl.methods.vip.advantage=ppo", "vip.rl.methods.vip: .*advantage 'ppo'"),
        ("rl.q=1", "vip.rl.q"),
        ("rl.budget_per_step=60", "vip.rl: .*multiple of q"),
        ("data.features=[minilm]", "vip: .*features 'hashed' is not in data.features"),  # smoke's VIP uses hashed
    ],
)
def test_bad_values_name_the_key(override, key):
    with pytest.raises(ParamsError, match=key):
        resolve(Params, PRESETS, slug="vip", profile="smoke", overrides=[override])


def test_dapo_format_fixture_loads_and_bad_files_are_named(tmp_path):
    import pandas as pd

    rows = dapo_format.load_local(FIXTURE)
    assert [r["target"] for r in rows] == ["7", "132", "5", "63"] and "3+4" in rows[0]["prompt"]
    pq = tmp_path / "train.parquet"
    pd.read_json(FIXTURE, lines=True).to_parquet(pq)
    assert dapo_format.load_local(pq) == rows
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "1+1", "answer": "2"}\n')
    with pytest.raises(DataError, match="bad.jsonl: row 0 is not in the DAPO-Math-17k format"):
        dapo_format.load_local(bad)
    with pytest.raises(DataError, match="notes.txt: expected .parquet or .jsonl"):
        (tmp_path / "notes.txt").write_text("x")
        dapo_format.load_local(tmp_path / "notes.txt")


def test_hub_id_fails_at_once_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataError, match="BytedTsinghua-SIA/DAPO-Math-17k"):
        dapo_format.load_hub("BytedTsinghua-SIA/DAPO-Math-17k", 10)
