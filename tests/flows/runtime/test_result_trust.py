"""Stored Prefect task results: a planted record naming another serializer never runs code.

Prefect deserialises a cached result with the serializer named inside the record, so
without the guard a record rewritten to ``pickle`` executes its payload on the next
lookup (the control below shows it does); ``runners.fan_out`` removes such records
first, and the task simply reruns.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from flows.runtime import runners

pytestmark = pytest.mark.integration


class _Payload:
    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):  # what an attacker's pickle would do on load
        return (Path(self.marker).write_text, ("code ran",))


def _task():
    from prefect import task
    from prefect.cache_policies import INPUTS

    def double(x: int) -> dict:
        return {"x": x, "double": 2 * x}

    return task(
        double, name="double", cache_policy=INPUTS, persist_result=True, result_serializer=runners.json_results()
    )


def _plant(storage: Path, marker: Path) -> Path:
    from prefect.serializers import PickleSerializer

    [record_path] = [p for p in storage.rglob("*") if p.is_file()]
    record = json.loads(record_path.read_text())
    record["metadata"]["serializer"] = {"type": "pickle", "picklelib": "cloudpickle", "picklelib_version": None}
    record["result"] = PickleSerializer().dumps(_Payload(str(marker))).decode()
    record_path.write_text(json.dumps(record))
    return record_path


@pytest.fixture
def storage(tmp_path, prefect_api):
    from prefect.settings import PREFECT_LOCAL_STORAGE_PATH, temporary_settings

    folder = tmp_path / "results"
    with temporary_settings({PREFECT_LOCAL_STORAGE_PATH: folder}):
        yield folder


def _run(calls, *, guard: bool):
    from prefect import flow

    t = _task()

    @flow(name="result-trust", persist_result=False)
    def body():
        if guard:
            return [state.result() for _, state in runners.fan_out(t, calls, runners.parse("local"))]
        return [t(**call) for call in calls]

    return body()


def test_a_planted_pickle_record_is_removed_before_the_fan_out_and_the_task_reruns(storage, tmp_path):
    marker = tmp_path / "pwned"
    assert _run([{"x": 3}], guard=True) == [{"x": 3, "double": 6}]
    planted = _plant(storage, marker)
    assert _run([{"x": 3}], guard=True) == [{"x": 3, "double": 6}]
    assert not marker.exists()
    assert json.loads(planted.read_text())["metadata"]["serializer"]["type"] == "json"  # rewritten by the rerun


def test_control_without_the_guard_prefect_runs_the_planted_code(storage, tmp_path):
    """Shows the attack is real, so the test above can fail."""
    marker = tmp_path / "pwned"
    _run([{"x": 4}], guard=False)
    _plant(storage, marker)
    try:
        _run([{"x": 4}], guard=False)
    except Exception:
        pass
    assert marker.read_text() == "code ran"


def test_only_records_with_exactly_the_json_serializer_are_kept(tmp_path):
    trusted = runners.json_results().model_dump(mode="json")
    good = {"metadata": {"serializer": trusted}, "result": "{}"}
    bad = [
        {"metadata": {"serializer": {**trusted, "jsonlib": "os"}}},
        {"metadata": {"serializer": {**trusted, "object_decoder": "builtins.eval"}}},
        {"metadata": {"serializer": {"type": "pickle"}}},
    ]
    (tmp_path / "good").write_text(json.dumps(good))
    for i, record in enumerate(bad):
        (tmp_path / f"bad{i}").write_text(json.dumps(record))
    (tmp_path / "raw").write_bytes(os.urandom(64))
    assert sorted(runners.drop_untrusted_results(tmp_path)) == ["bad0", "bad1", "bad2", "raw"]
    assert [p.name for p in tmp_path.iterdir()] == ["good"]
