"""Comparing variants with DVC experiments (issue 47): each `dvc exp run -S` commits the report's metrics.json,
so `dvc exp show --json` lists every claim's effect, CI bounds and verdict code per experiment and
`dvc metrics diff` compares them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import tool

pytestmark = [pytest.mark.slow, pytest.mark.integration]

PAPER, REPORT = "assomem", "assomem-report"  # the shortest smoke pipeline
METRICS = f"reports/{PAPER}/metrics.json"
VARIANTS = {"seed-1": f"{PAPER}.seed=1", "seed-2": f"{PAPER}.seed=2"}  # data, split and bootstrap all move


def experiments(shown: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``dvc exp show --json``'s experiments by name: their data (metrics, params), baselines left out."""
    out: dict[str, dict[str, Any]] = {}

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            if node.get("name") in VARIANTS and isinstance(node.get("data"), dict):
                out[node["name"]] = node["data"]
            for key in ("experiments", "revs"):
                walk(node.get(key) or [])

    walk(shown)
    return out


def claim_numbers(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    doc = (data.get("metrics") or {}).get(METRICS) or {}
    assert "error" not in doc, doc
    return (doc.get("data") or {}).get("claim") or {}


def test_exp_show_lists_each_claims_numbers_per_experiment(project):
    for name, setting in VARIANTS.items():
        run = tool("dvc", "exp", "run", "--name", name, "-S", setting, REPORT, cwd=project)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

    shown = tool("dvc", "exp", "show", "--json", cwd=project)
    assert shown.returncode == 0, shown.stderr[-3000:]
    found = experiments(json.loads(shown.stdout))
    assert set(found) == set(VARIANTS), shown.stdout[-3000:]
    numbers = {name: claim_numbers(data) for name, data in found.items()}
    verdicts = json.loads((project / f"reports/{PAPER}/claims.json").read_text())["claims"]
    ids = [c["id"] for c in verdicts]
    for name, claims in numbers.items():
        assert list(claims) == ids, (name, claims)
        for cid, values in claims.items():
            assert values["verdict_code"] in (-1, 0, 1) and values["testable"] in (0, 1), (name, cid, values)
            assert isinstance(values.get("effect"), (int, float)), (name, cid, values)
    a, b = (numbers[name] for name in VARIANTS)
    moved = [cid for cid in ids if a[cid]["effect"] != b[cid]["effect"]]
    assert moved, f"a different seed moved no claim's effect: {a} vs {b}"

    diff = tool("dvc", "metrics", "diff", "--json", *VARIANTS, cwd=project)  # the two experiments, side by side
    assert diff.returncode == 0, diff.stderr[-3000:]
    changed = json.loads(diff.stdout)[METRICS]
    assert {f"claim.{cid}.effect" for cid in moved} <= set(changed), changed
