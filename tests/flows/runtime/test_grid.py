"""The kit's grid stage: results survive the store unchanged, and a job's key moves with what it depends on."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from flows.runtime.grid import decode, encode, job_key


def _job(x: dict) -> dict:
    return x


def _other(x: dict) -> dict:
    return x


def test_plain_results_come_back_equal_through_json():
    value = (
        {"row": {"id": "g0/cer-god/0", "auc": 0.8125, "nan": float("nan"), "inf": -float("inf"), "n": 3}},
        {"scores": np.linspace(0, 1, 7, dtype=np.float32), "labels": np.array([[1, 0], [0, 1]], dtype=np.int64)},
        [np.float64(0.1), np.int32(4), True, None, Path("a/b")],
        {1: "int key", "__odd": 2},
    )
    back = decode(json.loads(json.dumps(encode(value), allow_nan=False)))  # strict JSON: no NaN literals
    assert isinstance(back, tuple) and isinstance(back[0], dict)
    assert back[0]["row"]["auc"] == 0.8125 and np.isnan(back[0]["row"]["nan"]) and back[0]["row"]["inf"] == -np.inf
    for name in ("scores", "labels"):
        assert back[1][name].dtype == value[1][name].dtype and np.array_equal(back[1][name], value[1][name])
    assert back[2][0] == np.float64(0.1) and back[2][0].dtype == np.float64 and back[2][1].dtype == np.int32
    assert back[2][2:] == [True, None, Path("a/b")]
    assert back[3] == {1: "int key", "__odd": 2}


def test_objects_that_are_not_plain_data_are_refused():
    with pytest.raises(TypeError, match="plain data"):
        encode({"model": object()})
    with pytest.raises(TypeError, match="plain data"):
        encode(np.array([object()], dtype=object))


def test_a_job_key_changes_with_the_stage_inputs_the_function_and_the_job():
    job = {"graph": "g0", "seed": 1}
    key = job_key("fp-a", _job, job)
    assert key == job_key("fp-a", _job, dict(reversed(list(job.items()))))  # order of keys does not matter
    assert key != job_key("fp-b", _job, job)  # code, data or params of the stage changed
    assert key != job_key("fp-a", _other, job)
    assert key != job_key("fp-a", _job, {**job, "seed": 2})
    assert job_key("fp-a", partial(_job), job) != job_key("fp-a", partial(_job, y=1), job)


# -- typed jobs and results through a real stage -----------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    seed: int
    scale: float


@dataclass
class Row:
    seed: int
    values: np.ndarray
    note: str


def _typed(job: Job) -> Row:
    return Row(job.seed, np.arange(3) * job.scale, f"seed {job.seed}")


def _untyped(job: Job) -> dict:
    return {"seed": job.seed}


def _stage(tmp_path: Path):
    from flows.registry import PaperSpec, StageSpec
    from flows.runtime.params import Section
    from flows.runtime.settings import Paths
    from flows.runtime.stages import StageContext

    (tmp_path / "code.py").write_text("x = 1\n")
    stage = StageSpec("grid", "fake_grid_module", deps=("code.py",), params=("profile",), outs=("data/toy/out",))
    paper = PaperSpec("toy", 99, "Toy", None, (stage,))
    return StageContext(paper, stage, Section(), "smoke", Paths(tmp_path))


@pytest.mark.slow  # a Prefect server for the session
def test_typed_jobs_give_typed_results_fresh_and_from_the_cache(tmp_path, prefect_api):
    from flows.runtime.grid import run_grid

    ctx = _stage(tmp_path)
    jobs = [Job(0, 1.0), Job(1, 2.0)]
    first, stats = run_grid(ctx, _typed, jobs, desc="typed", result=Row), {}
    again = run_grid(ctx, _typed, jobs, desc="typed", result=Row, stats=stats)
    assert stats == {"jobs": 2, "cached": 2}
    for rows in (first, again):
        assert [type(r) for r in rows] == [Row, Row]
        assert [r.note for r in rows] == ["seed 0", "seed 1"]
        np.testing.assert_array_equal(rows[1].values, [0.0, 2.0, 4.0])
    with pytest.raises(TypeError, match="not the declared result Row"):
        run_grid(ctx, _untyped, jobs, desc="untyped", result=Row)
    with pytest.raises(TypeError, match="expected a dataclass type"):
        run_grid(ctx, _typed, jobs, desc="typed", result=dict)


# -- publishing a job's files into the stage's output -------------------------------------------------------------


def test_publish_copies_a_job_folder_or_part_of_it_without_the_completion_marker(tmp_path):
    from flows.runtime.grid import DONE, publish

    job_dir = tmp_path / "job"
    (job_dir / "model").mkdir(parents=True)
    (job_dir / "model" / "weights.bin").write_bytes(b"w")
    (job_dir / "curve.json").write_text("[]")
    (job_dir / DONE).write_text("key")
    out = tmp_path / "out"
    assert publish(job_dir, out / "run") == out / "run"
    assert sorted(p.relative_to(out / "run").as_posix() for p in (out / "run").rglob("*")) == [
        "curve.json",
        "model",
        "model/weights.bin",
    ]
    (job_dir / "model" / "weights.bin").write_bytes(b"new")
    publish(str(job_dir), out / "run", part="model")  # a str folder too; files already there are overwritten
    assert (out / "run" / "weights.bin").read_bytes() == b"new" and (out / "run" / "curve.json").is_file()


@dataclass(frozen=True)
class FileJob:
    name: str


@dataclass
class Made:
    name: str
    job_dir: str


def _make(job: FileJob, job_dir: Path) -> Made:
    (job_dir / job.name).mkdir()
    (job_dir / job.name / "model.txt").write_text(job.name)
    return Made(job.name, str(job_dir))


@pytest.mark.slow  # a Prefect server for the session
def test_jobs_with_files_are_published_from_their_job_folders_fresh_and_cached(tmp_path, prefect_api):
    from flows.runtime.grid import DONE, publish, run_grid

    ctx = _stage(tmp_path)
    jobs = [FileJob("a"), FileJob("b")]
    for expect_cached in (0, 2):
        stats: dict = {}
        made = run_grid(ctx, _make, jobs, desc="files", files=True, result=Made, stats=stats)
        assert stats["cached"] == expect_cached
        out = tmp_path / f"out{expect_cached}"
        for m in made:
            publish(m.job_dir, out / m.name, part=m.name)
            assert (Path(m.job_dir) / DONE).is_file()
        assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
            "a",
            "a/model.txt",
            "b",
            "b/model.txt",
        ]
        assert (out / "b" / "model.txt").read_text() == "b"
