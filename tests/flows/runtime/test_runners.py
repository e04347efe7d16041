"""Runner specs: what `--runner` / PAPERLINE_RUNNER accept and which Prefect task runner each builds."""

from __future__ import annotations

import pytest

from components.errors import ParamsError
from flows.runtime import runners


@pytest.mark.parametrize(
    ("text", "kind", "address", "workers"),
    [
        (None, "local", None, None),
        ("local", "local", None, None),
        ("process:3", "process", None, 3),
        ("dask", "dask", None, None),
        ("dask:2", "dask", None, 2),
        ("tcp://127.0.0.1:8786", "dask", "tcp://127.0.0.1:8786", None),
        ("dask://10.0.0.5:8786", "dask", "tcp://10.0.0.5:8786", None),
        ("ray", "ray", None, None),
        ("ray://head:10001", "ray", "ray://head:10001", None),
    ],
)
def test_parse_accepts_documented_specs(text, kind, address, workers):
    spec = runners.parse(text)
    assert (spec.kind, spec.address, spec.workers) == (kind, address, workers)


@pytest.mark.parametrize("text", ["spark", "process:0", "dask:two", "local:4"])
def test_parse_rejects_bad_specs_naming_them(text):
    with pytest.raises(ParamsError, match="runner"):
        runners.parse(text)


def test_configured_prefers_environment(monkeypatch):
    monkeypatch.setenv(runners.ENV, "dask:4")
    assert runners.configured("process:2") == runners.RunnerSpec("dask", workers=4)
    monkeypatch.delenv(runners.ENV)
    assert runners.configured("process:2") == runners.RunnerSpec("process", workers=2)
    assert runners.configured().kind == "local"


def test_build_makes_the_matching_prefect_runner():
    from prefect.task_runners import ProcessPoolTaskRunner, ThreadPoolTaskRunner

    DaskTaskRunner = pytest.importorskip("prefect_dask", reason="prefect-dask is not installed").DaskTaskRunner

    assert isinstance(runners.build(runners.parse("local")), ThreadPoolTaskRunner)
    assert isinstance(runners.build(runners.parse("process:2")), ProcessPoolTaskRunner)
    remote = runners.build(runners.parse("tcp://127.0.0.1:1"))
    assert isinstance(remote, DaskTaskRunner) and remote.address == "tcp://127.0.0.1:1"
    local = runners.build(runners.parse("dask:3"))
    assert local.cluster_kwargs["n_workers"] == 3 and local.cluster_kwargs["processes"] is True


def test_ray_without_prefect_ray_fails_clearly():
    pytest.importorskip("prefect")
    try:
        import prefect_ray  # noqa: F401
    except ImportError:
        with pytest.raises(ParamsError, match="prefect-ray"):
            runners.build(runners.parse("ray"))
    else:
        assert runners.build(runners.parse("ray")) is not None
