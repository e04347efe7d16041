"""CLI habits a user expects: clean --help, --version, "did you mean", --json listings, resolved params as YAML."""

from __future__ import annotations

import json
import textwrap
from importlib.metadata import version

import pytest
import yaml
from typer.testing import CliRunner

from flows.cli import app
from tests.conftest import PLANNED_IN_COPY, ROOT, error_line, fake_checkout, paperline

pytestmark = pytest.mark.integration

COMMANDS = [
    [],
    ["list"],
    ["show"],
    ["metrics"],
    ["run"],
    ["stage"],
    ["report"],
    ["repro"],
    ["doctor"],
    ["server"],
    ["server", "start"],
    ["dvc-yaml"],
    ["verdicts"],
    ["new"],
    ["params"],
    ["scaling-fit"],
    ["schedule"],
    ["deployments"],
    ["curate"],
    ["curate", "dedup"],
    ["curate", "filter"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "paperline")
def test_help_shows_no_bool_metavars(command):
    result = CliRunner().invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.output and "Usage:" in result.output


def test_run_help_shows_flags_and_value_names():
    out = paperline("run", "--help", cwd=ROOT, timeout=120).stdout
    assert "<bool>" not in out and "<list[str]>" not in out
    for text in (
        "--force ",
        "--no-track ",
        "--wait / --no-wait",
        "--set KEY=VALUE",
        "--profile PROFILE",
        "--stage STAGE",
    ):
        assert text in out, text


def test_version():
    proc = paperline("--version", cwd=ROOT, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == f"paperline {version('paperline')}"


@pytest.mark.parametrize(
    "args, suggestion",
    [
        (["run", "qualitypajma"], "did you mean 'qualitypajama'?"),
        (["show", "optimistic_o2mc"], "did you mean 'optimistic-o2nc'?"),
        (["run", "qualitypajama", "--stage", "trian"], "did you mean 'train'?"),
        (["stage", "qualitypajama", "tokenise"], "did you mean 'tokenize'?"),
        (["report", "qualitypajma"], "did you mean 'qualitypajama'?"),
        (["repro", "neuraldv"], "did you mean 'neuraldb'?"),
        (["show", "qualitypajama", "--set", "qualitypajama.trainig.lr=1"], "did you mean 'training'?"),
    ],
)
def test_misspelt_paper_or_stage_suggests_the_closest(args, suggestion):
    line = error_line(paperline(*args, cwd=ROOT, timeout=120))
    assert suggestion in line and (repr(args[-1]) in line or args[-1].split("=")[0].rsplit(".", 1)[0] in line)


def test_shell_completion_offers_the_implemented_papers():
    env = {"_PAPERLINE_COMPLETE": "complete_bash", "COMP_WORDS": "paperline run o", "COMP_CWORD": "2"}
    proc = paperline(cwd=ROOT, env=env, timeout=120)
    assert proc.stdout.split() == ["ofmu", "optimistic-o2nc"], proc.stdout + proc.stderr
    assert "--install-completion" in paperline("--help", cwd=ROOT, timeout=120).stdout


@pytest.mark.parametrize(
    "words, want",
    [
        ("paperline run optimistic-o2nc --stage r", ["report"]),
        ("paperline show qualitypajama --profile s", ["smoke"]),
        ("paperline run optimistic-o2nc --set claims.n_r", ["claims.n_resamples="]),
        ("paperline run qualitypajama --set training.l", ["training.lr="]),
    ],
)
def test_shell_completion_offers_profiles_stages_and_params_keys(words, want):
    env = {"_PAPERLINE_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)}
    proc = paperline(cwd=ROOT, env=env, timeout=120)
    assert proc.stdout.split() == want, proc.stdout + proc.stderr


def test_list_json_parses(planned_project):
    root, env = planned_project
    proc = paperline("list", "--json", cwd=root, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = {row["slug"]: row for row in json.loads(proc.stdout)}
    assert rows["qualitypajama"]["implemented"] and "train" in rows["qualitypajama"]["stages"]
    assert rows[PLANNED_IN_COPY]["implemented"] is False and rows[PLANNED_IN_COPY]["stages"] == []
    assert {"last_profile", "last_date"} <= set(rows[PLANNED_IN_COPY]) and rows[PLANNED_IN_COPY]["last_date"] is None


def test_list_says_which_profile_and_date_the_verdicts_come_from(tmp_path):
    import shutil

    root = tmp_path / "proj"
    (root / "reports/icql").mkdir(parents=True)
    for name in ("params.yaml", "dvc.yaml"):
        shutil.copy(ROOT / name, root / name)
    doc = {
        "paper": "icql",
        "profile": "default",
        "claims": [{"id": "C1", "verdict": "reproduced"}],
        "provenance": {"date": "2026-12-01 17:02 UTC"},
    }
    (root / "reports/icql/claims.json").write_text(json.dumps(doc))
    out = paperline("list", cwd=root, env={"PAPERLINE_ROOT": str(root)}, timeout=120).stdout
    (row,) = [line for line in out.splitlines() if " icql " in line]
    assert "C1: reproduced" in row and "default, 2026-12-01 17:02" in row


def test_a_fresh_checkout_lists_the_recorded_verdicts_until_a_run_of_its_own_replaces_them(tmp_path):
    import shutil

    root = tmp_path / "proj"
    (root / "docs/verdicts").mkdir(parents=True)
    for name in ("params.yaml", "dvc.yaml"):
        shutil.copy(ROOT / name, root / name)
    shutil.copy(ROOT / "docs/verdicts/icql.json", root / "docs/verdicts/icql.json")
    record = json.loads((root / "docs/verdicts/icql.json").read_text())
    env = {"PAPERLINE_ROOT": str(root)}

    rows = {r["slug"]: r for r in json.loads(paperline("list", "--json", cwd=root, env=env, timeout=120).stdout)}
    assert rows["icql"]["last_source"] == "recorded"
    assert rows["icql"]["last_verdicts"] == {c["id"]: c["verdict"] for c in record["claims"]}
    assert rows["ofmu"]["last_source"] is None and rows["ofmu"]["last_verdicts"] is None  # nothing recorded here
    (row,) = [
        line for line in paperline("list", cwd=root, env=env, timeout=120).stdout.splitlines() if " icql " in line
    ]
    assert "recorded default" in row

    (root / "reports/icql").mkdir(parents=True)
    own = {"paper": "icql", "profile": "smoke", "claims": [{"id": "C1", "verdict": "inconclusive"}], "provenance": {}}
    (root / "reports/icql/claims.json").write_text(json.dumps(own))
    rows = {r["slug"]: r for r in json.loads(paperline("list", "--json", cwd=root, env=env, timeout=120).stdout)}
    assert rows["icql"]["last_source"] == "run" and rows["icql"]["last_verdicts"] == {"C1": "inconclusive"}


def test_show_json_parses():
    proc = paperline("show", "qualitypajama", "--json", cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["slug"] == "qualitypajama" and [s["name"] for s in doc["stages"]][-1] == "report"
    assert set(doc["params"]) == {"smoke", "default", "full"} and "resolved" not in doc
    with_set = json.loads(
        paperline(
            "show", "qualitypajama", "--json", "-p", "smoke", "--set", "training.lr=0.002", cwd=ROOT, timeout=120
        ).stdout
    )
    assert with_set["resolved"]["profile"] == "smoke" and with_set["resolved"]["params"]["training"]["lr"] == 0.002


def test_show_set_prints_the_resolved_params_as_yaml():
    proc = paperline("show", "qualitypajama", "--profile", "smoke", "--set", "training.lr=0.002", cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.startswith("resolved params (profile smoke, --set training.lr=0.002")
    )
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("  "))
    params = yaml.safe_load(textwrap.dedent("\n".join(lines[start + 1 : end])))
    assert params["training"]["lr"] == 0.002 and params["seed"] is not None and "grid" in params
    bad = paperline("show", "qualitypajama", "--set", "training.lrr=1", cwd=ROOT, timeout=120)
    assert "training.lrr" in error_line(bad)


def test_metrics_prints_one_key_per_line_and_json(tmp_path):
    fake_checkout(tmp_path)
    (tmp_path / "reports/icql").mkdir(parents=True)
    (tmp_path / "reports/icql/metrics.json").write_text('{"scores": {"t1/icql": 0.25, "t4/bc": 2}, "n": 3}')
    env = {"PAPERLINE_ROOT": str(tmp_path)}
    out = paperline("metrics", "icql", cwd=tmp_path, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert [line.split() for line in out.stdout.splitlines()] == [
        ["scores.t1/icql", "0.25"],
        ["scores.t4/bc", "2"],
        ["n", "3"],
    ]
    as_json = paperline("metrics", "icql", "--json", cwd=tmp_path, env=env, timeout=120)
    assert json.loads(as_json.stdout) == {"scores.t1/icql": 0.25, "scores.t4/bc": 2, "n": 3}
    assert "no metrics yet" in error_line(paperline("metrics", "ofmu", cwd=tmp_path, env=env, timeout=120))
