"""The champion contract every pipeline files into (flows.runtime.champions), the package versions beside each
re-evaluation, and a run's accepted verdicts (flows.runtime.accepted): on a SQLite MLflow store, no servers."""

from __future__ import annotations

import json

import pytest

from components.errors import DataError
from components.registry_eval.compare import find_regressions
from components.registry_eval.environment import changes, versions
from flows.runtime.champions import Rule, candidate, eval_spec, evaluator


def test_a_candidate_carries_its_evaluator_settings_and_one_rule_per_metric():
    c = candidate("daze", "run1", "m", {"asr": 1.0}, {"asr": Rule(True, 0.02, relative=False)}, {"env": "CartPole-v1"})
    assert c["eval"] == {
        "evaluator": "daze",
        "settings": {"env": "CartPole-v1"},
        "rules": {"asr": {"higher_is_better": True, "tolerance": 0.02, "relative": False}},
    }
    assert candidate("daze", None, "m", {"asr": 1.0}, {"asr": Rule(True)}, {}) is None  # untracked: nothing to register
    with pytest.raises(ValueError, match="differ"):
        candidate("daze", "r", "m", {"asr": 1.0, "br": 2.0}, {"asr": Rule(True)}, {})
    with pytest.raises(DataError, match="not finite"):
        candidate("daze", "r", "m", {"asr": float("nan")}, {"asr": Rule(True)}, {})
    with pytest.raises(ValueError, match="tolerance"):
        Rule(True, -0.1)


def test_evaluators_are_looked_up_only_among_implemented_papers(monkeypatch):
    from flows import registry
    from flows.specs import Paper

    card = Paper(99, "toy-planned", "A planned card", "99-toy-planned.md")  # every real card has a pipeline now
    monkeypatch.setattr(registry, "PLANNED", (*registry.PLANNED, card))
    monkeypatch.setattr(registry, "_PAPERS", None)
    evaluate, libraries = evaluator("daze")
    assert evaluate.__module__ == "flows.daze.champion" and "gymnasium" in libraries
    with pytest.raises(DataError, match="not an implemented paper"):
        evaluator("os")  # a registry tag naming any module must not reach importlib
    with pytest.raises(DataError, match="not an implemented paper"):
        evaluator(card.slug)  # a card without a pipeline
    # the first eval-tag form (QualityPajama's lm-loss) still resolves
    assert eval_spec({"kind": "lm-loss", "seq_len": 8})["evaluator"] == "qualitypajama"


def test_declared_rules_set_direction_units_and_tolerance():
    rules = {
        "asr": {"higher_is_better": True, "tolerance": 0.02, "relative": False},
        "forget_rouge": {"higher_is_better": False, "tolerance": 0.05, "relative": False},
    }
    assert find_regressions("p", {"asr": 0.0}, {"asr": 0.0}, rules=rules) == []  # an accepted 0 is not frozen
    [reg] = find_regressions("p", {"asr": 0.95}, {"asr": 0.90}, rules=rules)
    assert reg.message() == "p: asr fell from 0.95 to 0.9 (-0.05, tolerance 0.02)"
    assert find_regressions("p", {"asr": 0.95}, {"asr": 0.94}, rules=rules) == []
    [reg] = find_regressions("p", {"forget_rouge": 0.1}, {"forget_rouge": 0.2}, rules=rules)
    assert "forget_rouge rose from 0.1 to 0.2" in reg.message()
    # a tolerance the user sets wins over the declared one
    assert find_regressions("p", {"asr": 0.95}, {"asr": 0.90}, rules=rules, tolerances={"asr": 0.1}) == []


def test_package_versions_and_what_changed_between_two_points():
    now = versions(["gymnasium", "no-such-dist-xyz"])
    assert now["torch"].startswith("2.") and now["no-such-dist-xyz"] == "absent" and "scikit-learn" in now
    assert changes({"torch": "2.13.0", "numpy": "2.0"}, {"torch": "2.14.0", "numpy": "2.0", "mujoco": "3.0"}) == [
        "mujoco absent -> 3.0",
        "torch 2.13.0 -> 2.14.0",
    ]


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    return tmp_path


def _claims(path, verdicts: dict[str, str]):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"claims": [{"id": k, "verdict": v} for k, v in verdicts.items()]}))
    return path


@pytest.mark.slow  # MLflow's store migrations
def test_verdicts_are_accepted_by_hand_and_a_scheduled_rerun_that_changes_one_fails_naming_it(store):
    from mlflow import MlflowClient

    from flows.runtime.accepted import VerdictChanged, accepted_verdicts, settle
    from flows.runtime.tracking import Tracker

    claims = _claims(store / "reports/toy/claims.json", {"C1": "reproduced", "C2": "not reproduced"})
    first = Tracker("toy", "first", {"paper": "toy"})
    settle(first, "toy", {}, "default", claims, "compare")  # nothing accepted yet: accepted, not compared
    client = MlflowClient()
    assert accepted_verdicts(client, "toy") == {"C1": "reproduced", "C2": "not reproduced"}

    settle(
        Tracker("toy", "smoke", {"paper": "toy"}),
        "toy",
        {},
        "smoke",
        _claims(claims, {"C1": "inconclusive"}),
        "compare",
    )  # a smoke run neither compares nor accepts
    assert accepted_verdicts(client, "toy")["C1"] == "reproduced"

    changed = _claims(claims, {"C1": "reproduced", "C2": "reproduced"})
    rerun = Tracker("toy", "scheduled", {"paper": "toy"})
    with pytest.raises(
        VerdictChanged, match=r"toy: verdicts changed since the accepted run: C2: not reproduced -> reproduced"
    ):
        settle(rerun, "toy", {}, "default", changed, "compare")
    assert accepted_verdicts(client, "toy")["C2"] == "not reproduced"  # nothing accepted
    assert client.get_run(rerun.run_id).data.tags["verdict_changes"] == "C2: not reproduced -> reproduced"

    by_hand = Tracker("toy", "by hand", {"paper": "toy"})
    settle(by_hand, "toy", {}, "default", changed, "accept")  # a run by hand accepts the change
    assert accepted_verdicts(client, "toy") == {"C1": "reproduced", "C2": "reproduced"}
    assert client.get_registered_model("toy").tags["accepted.run_id"] == by_hand.run_id
