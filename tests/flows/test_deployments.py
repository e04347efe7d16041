"""`paperline schedule` / `deployments` fail clearly without a server or with a bad cron; prefect.yaml is complete."""

from __future__ import annotations

import pytest
import yaml

from components.errors import PaperlineError, ParamsError
from flows import deployments
from flows.registry import papers
from tests.conftest import ROOT


def test_schedule_without_a_server_says_how_to_get_one(monkeypatch, tmp_path):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with pytest.raises(PaperlineError, match="PREFECT_API_URL or run `paperline server start`"):
        deployments.schedule("qualitypajama", tmp_path, cron="0 3 * * *")


def test_bad_cron_is_rejected_before_anything_is_created(monkeypatch, tmp_path):
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    with pytest.raises(ParamsError, match="--cron 'every day'"):
        deployments.schedule("qualitypajama", tmp_path, cron="every day")


def test_committed_prefect_yaml_is_the_generated_one():
    from flows.deploy_yaml import render

    assert (ROOT / "prefect.yaml").read_text() == render(), "run `paperline deployments-yaml --write`"


def test_prefect_yaml_has_one_deployment_per_paper_and_the_recurring_eval():
    doc = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    names = {d["name"] for d in doc["deployments"]}
    implemented = set(papers())  # every paper slug: a deployment exists before its pipeline lands
    assert implemented <= names and deployments.RECURRING in names
    for d in doc["deployments"]:
        assert d["entrypoint"] in deployments.ENTRYPOINTS.values()
        assert d["work_pool"]["name"] == deployments.DEFAULT_POOL
        if d["name"] != deployments.RECURRING:
            assert d["parameters"]["paper"] == d["name"]
