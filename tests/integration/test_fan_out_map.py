"""runners.map_items (the uncached fan-out under the kit's grid stage): the process runner gives the local runner's
results, in order, and a failing item's error reaches the caller."""

from __future__ import annotations

import pytest

from flows.runtime import runners

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def square_with_pid(x: int) -> dict:
    import os

    if x < 0:
        raise ValueError(f"item {x} is negative")
    return {"x": x, "y": x * x, "pid": os.getpid()}


def test_process_runner_matches_local_in_order(prefect_api, monkeypatch):
    items = list(range(9))
    monkeypatch.delenv(runners.ENV, raising=False)
    local = runners.map_items(square_with_pid, items, workers=1)
    monkeypatch.setenv(runners.ENV, "process:2")
    pooled = runners.map_items(square_with_pid, items, workers=1, chunk=2)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "pid"} for r in rows]  # noqa: E731
    assert strip(pooled) == strip(local) == [{"x": x, "y": x * x} for x in items]
    assert {r["pid"] for r in local} == {local[0]["pid"]}
    assert local[0]["pid"] not in {r["pid"] for r in pooled}  # the runner choice reached the work


def test_a_failing_item_raises_its_own_error(prefect_api, monkeypatch):
    monkeypatch.setenv(runners.ENV, "process:2")
    with pytest.raises(ValueError, match="item -1 is negative"):
        runners.map_items(square_with_pid, [1, -1, 2], workers=2)
