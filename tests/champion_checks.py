"""The check each pipeline's smoke test applies to its champion (one helper instead of a copy per pipeline).

A smoke run never moves ``@champion`` but keeps its candidate on record (artifact ``champion/<slug>.json``).
The check promotes that candidate into the run's own MLflow store with ``paperline promote``'s code (the call
a passing default run makes), runs the recurring evaluation on it (registry -> allow-listed loader -> the
paper's evaluator), and requires the accepted values back; then it plants a better accepted value for one
metric and requires the flow to fail naming the paper and that metric.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def promote_smoke_candidate(root: Path, slug: str, tmp_path: Path, monkeypatch) -> dict:
    """Register the smoke run's champion candidate as ``slug@champion``; returns the candidate."""
    from mlflow import MlflowClient

    from flows.runtime.promote import promote

    uri = f"sqlite:///{root / '.paperline' / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name(slug)
    parents = [
        r
        for r in client.search_runs([exp.experiment_id])
        if "mlflow.parentRunId" not in r.data.tags and r.data.tags.get(f"champion.{slug}") == "not moved: smoke profile"
    ]
    assert parents, f"{slug}: the smoke run proposed no champion (no champion.{slug} tag)"
    local = client.download_artifacts(parents[0].info.run_id, f"champion/{slug}.json", str(tmp_path))
    candidate = json.loads(Path(local).read_text())
    assert candidate["eval"]["evaluator"] == slug and set(candidate["metrics"]) == set(candidate["eval"]["rules"])
    assert promote(slug) == {slug: "1"}  # `paperline promote <slug>`: the latest completed run's candidate
    return candidate


def check_champion(root: Path, slug: str, tmp_path: Path, monkeypatch) -> tuple[dict, dict]:
    """Promote, re-evaluate (accepted values back), plant a regression (the flow names it).

    Returns the candidate and the re-evaluation's result."""
    from mlflow import MlflowClient

    from flows.recurring.flow import RegressionDetected, run

    candidate = promote_smoke_candidate(root, slug, tmp_path, monkeypatch)
    result = run(str(root), {"papers": [slug]})[slug]
    assert result["regressions"] == [], result
    for metric, accepted in candidate["metrics"].items():
        assert result["metrics"][metric] == pytest.approx(accepted, rel=1e-6, abs=1e-9), metric
    assert {"torch", "numpy"} <= set(result["versions"])
    metric, rule = sorted(candidate["eval"]["rules"].items())[0]
    old = candidate["metrics"][metric]
    step = (abs(old) + 1.0) * (rule["tolerance"] + 0.5) if rule.get("relative", True) else rule["tolerance"] + 0.5
    planted = old + step if rule["higher_is_better"] else old - step  # the accepted value was much better
    MlflowClient().set_registered_model_tag(slug, f"accepted.{metric}", repr(planted))
    verb = "fell" if rule["higher_is_better"] else "rose"
    with pytest.raises(RegressionDetected, match=rf"{slug}: {metric} {verb} from"):
        run(str(root), {"papers": [slug]})
    return candidate, result
