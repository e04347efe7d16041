"""The real `paperline run vip --profile full`, offline, on stand-ins in the real formats: DAPO-Math-17k rows
(jsonl) and a Hugging Face causal LM folder in place of Qwen2.5-Math-1.5B. The base model is measured and saved,
every full-profile method trains it through the same loop, and the claims and report come out; an absent model
id fails with one line naming it, before any work."""

from __future__ import annotations

import json

import pytest

from components.io import read_json, read_jsonl
from tests.conftest import error_line, paperline
from tests.vip_hf_fixture import tiny_hf_policy, write_dapo_jsonl

pytestmark = [pytest.mark.slow, pytest.mark.integration]

SMALL = [
    "data.n_train=24",
    "data.n_heldout=10",
    "data.features=[hashed]",
    "rl.methods.vip.features=hashed",
    "rl.methods.vip-rloo.features=hashed",
    "rl.seeds=[0,1]",
    "rl.steps=2",
    "rl.q=4",
    "rl.budget_per_step=16",
    "rl.hi=8",
    "rl.max_new=6",
    "rl.eval_k=2",
    "rl.n_evals=1",
    "rl.grad_repeats=2",
    "rl.dapo_max_rounds=1",
    "claims.n_resamples=200",
    "claims.power_sims=5",
    "claims.power_resamples=100",
    "resources.workers=1",
    "progress=false",
]


def _sets(*pairs: str) -> list[str]:
    return [x for kv in pairs for x in ("--set", kv)]


def test_full_profile_runs_offline_on_a_local_causal_lm_and_dapo_rows(project, tmp_path):
    (project / "data/local").mkdir(parents=True, exist_ok=True)
    rows = write_dapo_jsonl(project / "data/local/dapo.jsonl", 40)  # path params stay in the checkout
    model = tiny_hf_policy(tmp_path / "policy")
    absent = paperline(
        "run",
        "vip",
        "--profile",
        "full",
        *_sets(f"data.local_file={rows}", "model.hf_model=no-such-org/no-such-model", *SMALL),
        cwd=project,
    )
    assert "no-such-org/no-such-model" in error_line(absent)
    proc = paperline(
        "run",
        "vip",
        "--profile",
        "full",
        *_sets(f"data.local_file={rows}", f"model.hf_model={model}", *SMALL),
        "--replace-default",  # the full profile's own report, not a variant's (flows/runtime/variants.py)
        cwd=project,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = project / "data/vip"
    base = read_json(data / "sft/sft.json")
    assert base["base_model"] == str(model) and base["examples"] == 0
    assert json.loads((data / "sft/model/config.json").read_text())["model_type"] == "gpt2"
    steps = read_jsonl(data / "runs/steps.jsonl")
    assert {s["method"] for s in steps} == {
        "uniform",
        "vip",
        "dapo",
        "uniform-rloo",
        "vip-rloo",
        "heuristic",
        "vip-beta",
    }
    assert all(sum(s["sizes"]) == 16 and min(s["sizes"]) >= 2 and max(s["sizes"]) <= 8 for s in steps)
    assert (data / "runs/models/vip-seed0/config.json").is_file()
    claims = read_json(project / "reports/vip/claims.json")
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3", "C4"]
