"""Bad input: a clear one-line error naming the key or file, a non-zero exit, and nothing overwritten."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from tests.conftest import PLANNED_IN_COPY, ROOT, error_line, paperline

pytestmark = pytest.mark.integration


def test_a_planned_card_has_no_pipeline_to_run(planned_project):
    root, env = planned_project
    assert "has no pipeline yet" in error_line(paperline("run", PLANNED_IN_COPY, cwd=root, env=env, timeout=120))


@pytest.mark.parametrize(
    "args, expected",
    [
        (["run", "nopaper"], "unknown paper 'nopaper'"),
        (["run", "qualitypajama", "--profile", "tiny"], "unknown profile 'tiny'"),
        (["run", "qualitypajama", "--set", "training.lrr=1"], "qualitypajama.training.lrr: unknown key"),
        (
            ["run", "qualitypajama", "--set", "training.lr=fast"],
            "qualitypajama.training.lr: Input should be a valid number",
        ),
        (
            ["run", "qualitypajama", "--set", "corpus.junk_frac=1.5"],
            "qualitypajama.corpus.junk_frac: Input should be less than 1",
        ),
        (["run", "qualitypajama", "--set", "training.lr"], "expected KEY=VALUE"),
        (["show", "nopaper"], "unknown paper"),
    ],
)
def test_params_and_names_fail_before_any_work(tmp_path, args, expected):
    before = sorted(p.name for p in ROOT.iterdir())
    proc = paperline(*args, cwd=ROOT, timeout=120)
    assert expected in error_line(proc)
    assert sorted(p.name for p in ROOT.iterdir()) == before


def test_unknown_key_in_params_yaml_names_the_path(project):
    params = project / "params.yaml"
    tree = yaml.safe_load(params.read_text())
    tree["qualitypajama"]["trainin"] = {"lr": 1}
    params.write_text(yaml.safe_dump(tree, sort_keys=False))
    digest = hashlib.md5(params.read_bytes()).hexdigest()
    proc = paperline("run", "qualitypajama", cwd=project, timeout=120)
    assert "qualitypajama.trainin: unknown key" in error_line(proc)
    assert hashlib.md5(params.read_bytes()).hexdigest() == digest
    assert [p.name for p in (project / "data").iterdir() if p.is_dir()] == []  # no stage ran


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "content, expected",
    [
        ('{"id": "a", "text": "one two"}\n{"id": "b", "te', "bad.jsonl:2: not valid JSON"),
        ('{"id": "a", "body": "one two"}\n', "bad.jsonl:1: missing field(s) 'text'"),
        ("", "bad.jsonl: no records (empty JSONL)"),
    ],
)
@pytest.mark.parametrize("command", [["curate", "dedup"], ["curate", "filter"]])
def test_curate_commands_reject_corrupt_jsonl_and_write_nothing(tmp_path, content, expected, command):
    bad = _write(tmp_path / "bad.jsonl", content)
    proc = paperline(*command, str(bad), str(tmp_path / "out.jsonl"), cwd=tmp_path, timeout=120)
    assert expected in error_line(proc)
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize(
    "csv, args, expected",
    [
        ("N,D,L\n1,2,3\n", ["--n-column", "N", "--d-column", "X", "--loss-column", "L"], "'X'"),
        ("N,D,L\n" + "1e6,1e9,x\n" * 8, ["--n-column", "N", "--d-column", "D", "--loss-column", "L"], "L"),
        ("N,D,L\n" + "1e6,-1e9,3\n" * 8, ["--n-column", "N", "--d-column", "D", "--loss-column", "L"], "D"),
        ("N,D,L\n" + "1e6,1e9,3\n" * 3, ["--n-column", "N", "--d-column", "D", "--loss-column", "L"], "6"),
        ("N,D,L\n1,2,3\n", ["--n-column", "N", "--loss-column", "L"], "exactly one of --d-column or --flops-column"),
    ],
)
def test_scaling_fit_rejects_bad_tables(tmp_path, csv, args, expected):
    path = _write(tmp_path / "t.csv", csv)
    proc = paperline("scaling-fit", str(path), *args, "--json", cwd=tmp_path, timeout=120)
    assert expected in error_line(proc)


@pytest.mark.slow
def test_pipeline_inputs_corrupted_or_failing_their_suite(project):
    assert paperline("run", "qualitypajama", "--stage", "curate", cwd=project).returncode == 0
    curated = project / "data/qualitypajama/curated/raw.jsonl"
    before = hashlib.md5(curated.read_bytes()).hexdigest()

    # a truncated input file: the stage fails naming the file and line; its previous output stays
    pool = project / "data/qualitypajama/corpus/pool.jsonl"
    original = pool.read_bytes()
    pool.write_bytes(original[: len(original) // 2])
    proc = paperline("stage", "qualitypajama", "curate", "--force", cwd=project)
    assert "pool.jsonl:" in error_line(proc) and "not valid JSON" in proc.stderr
    assert hashlib.md5(curated.read_bytes()).hexdigest() == before
    pool.write_bytes(original)

    # a dataset failing its suite: the message names expectation and column; nothing downstream runs
    proc = paperline("run", "qualitypajama", "--set", "grid.budgets=[8192, 100000000]", cwd=project)
    line = error_line(proc)
    assert "expect_column_values_to_be_between" in line and "'tokens'" in line
    assert not (project / "data/qualitypajama/tokens").exists()
    assert not (project / "data/qualitypajama/grid").exists()

    # a hub dataset while offline: fails at once in the corpus stage, naming the id
    proc = paperline("run", "qualitypajama", "--set", "corpus.hf_dataset=HuggingFaceFW/fineweb", cwd=project)
    line = error_line(proc)
    assert "HuggingFaceFW/fineweb" in line and "offline" in line.lower()
