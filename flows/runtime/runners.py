"""Choosing the Prefect task runner a pipeline's fan-out (a training grid, a seed sweep) goes through.

A runner is named by a short spec, from ``--runner`` on ``paperline run`` or the
``PAPERLINE_RUNNER`` variable (the CLI option sets the variable, so stage code and
the processes a worker starts see the same choice):

=====================  ======================================================
``local``              Prefect's default thread runner (tasks in this process)
``process[:N]``        ``ProcessPoolTaskRunner`` with N processes (default: CPUs)
``dask``               ``DaskTaskRunner`` on a local cluster (``dask:N`` workers)
``tcp://host:port``    ``DaskTaskRunner`` against a running Dask scheduler
``ray`` / ``ray://…``  ``RayTaskRunner`` (local, or against a Ray cluster address)
=====================  ======================================================

Tasks fanned out this way should take and return paths (on a shared folder or
S3), not large objects: results cross process and machine boundaries.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from components.errors import ParamsError

log = logging.getLogger("paperline")

ENV = "PAPERLINE_RUNNER"
KINDS = ("local", "process", "dask", "ray")


@dataclass(frozen=True)
class RunnerSpec:
    """A parsed runner spec: its kind, an optional cluster address and worker count."""

    kind: str
    address: str | None = None
    workers: int | None = None

    def __str__(self) -> str:
        if self.address:
            return f"{self.kind}@{self.address}"
        return self.kind if self.workers is None else f"{self.kind}:{self.workers}"


def parse(spec: str | None) -> RunnerSpec:
    """Parse a runner spec (see the module doc); ``None``/empty means ``local``. Raises ParamsError."""
    text = (spec or "local").strip()
    if text.startswith(("tcp://", "tls://", "dask://")):
        _check_address(text)
        return RunnerSpec("dask", address=text.replace("dask://", "tcp://", 1))
    if text.startswith("ray://"):
        _check_address(text)
        return RunnerSpec("ray", address=text)
    kind, _, rest = text.partition(":")
    if kind not in KINDS:
        raise ParamsError(
            f"runner {text!r}: choose local, process[:N], dask[:N], tcp://HOST:PORT (Dask), ray or ray://HOST:PORT"
        )
    if kind == "ray" and rest:
        return RunnerSpec("ray", address=rest)
    workers = None
    if rest:
        if kind == "local" or not rest.isdigit() or int(rest) < 1:
            raise ParamsError(f"runner {text!r}: the part after ':' must be a worker count >= 1 (process:N, dask:N)")
        workers = int(rest)
        if workers > max_workers():
            raise ParamsError(f"runner {text[:40]!r}: at most {max_workers()} workers here (8 per CPU core)")
    return RunnerSpec(kind, workers=workers)


def max_workers() -> int:
    """The largest worker count a runner spec may ask for: 8 per CPU core."""
    return (os.cpu_count() or 1) * 8


def _check_address(text: str) -> None:
    """``scheme://HOST:PORT``: a host name or IPv4/IPv6 address and a port 1..65535, else a ParamsError."""
    import ipaddress
    import re
    from urllib.parse import urlsplit

    bad = f"runner {text[:60]!r}: expected SCHEME://HOST:PORT with a valid host and a port 1..65535"
    try:
        parts = urlsplit(text)
        host, port = parts.hostname, parts.port
    except ValueError:
        raise ParamsError(bad) from None
    if not host or port is None or not 1 <= port <= 65535 or parts.path not in ("", "/"):
        raise ParamsError(bad)
    if re.fullmatch(r"[0-9.]+", host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise ParamsError(bad) from None
    elif ":" not in host and not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,252})", host):
        raise ParamsError(bad)


def configured(default: str | None = None) -> RunnerSpec:
    """The runner chosen for this process: ``PAPERLINE_RUNNER``, else ``default``, else local."""
    return parse(os.environ.get(ENV) or default)


def build(spec: RunnerSpec) -> Any:
    """A Prefect task runner instance for ``spec`` (imports Dask or Ray only when asked for)."""
    if spec.kind == "local":
        from prefect.task_runners import ThreadPoolTaskRunner

        return ThreadPoolTaskRunner(max_workers=1)
    if spec.kind == "process":
        from prefect.task_runners import ProcessPoolTaskRunner

        return ProcessPoolTaskRunner(max_workers=spec.workers)
    if spec.kind == "dask":
        try:
            from prefect_dask import DaskTaskRunner
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ParamsError("runner dask needs prefect-dask (pip install prefect-dask)") from exc
        if spec.address:
            return DaskTaskRunner(address=spec.address)
        kwargs = {"n_workers": spec.workers or 2, "threads_per_worker": 1, "processes": True, "dashboard_address": None}
        return DaskTaskRunner(cluster_kwargs=kwargs)
    try:
        from prefect_ray import RayTaskRunner
    except ImportError as exc:
        raise ParamsError("runner ray needs prefect-ray and ray (pip install prefect-ray); not installed here") from exc
    return RayTaskRunner(address=spec.address) if spec.address else RayTaskRunner()


def json_results() -> Any:
    """The serializer for persisted task results: plain JSON, never pickle.

    Prefect's default serializer is cloudpickle, so a shared result volume would be a
    code-execution path. ``object_decoder=None`` also keeps Prefect's JSON decoder from
    importing a class named in a stored record; a task whose result is not plain JSON
    (dicts, lists, strings, numbers) fails when its result is written, not later.
    """
    from prefect.serializers import JSONSerializer

    return JSONSerializer(object_encoder=None, object_decoder=None)


def drop_untrusted_results(storage: str | os.PathLike | None = None) -> list[str]:
    """Remove stored Prefect task results that this project did not write; return their names.

    Prefect deserialises a stored result with the serializer named *inside* the
    file (``ResultRecord.deserialize``), so a planted record naming ``pickle``, or
    ``json`` with another ``jsonlib`` or an ``object_decoder``, would run code when a
    cached task is looked up. Every record whose serializer is not exactly
    :func:`json_results` is removed before a fan-out submits (its task then simply
    reruns). Covers Prefect's local result storage (``PREFECT_LOCAL_STORAGE_PATH`` as
    Prefect resolves it); a remote store must be writable by trusted workers only.
    """
    import json
    from pathlib import Path

    if storage is None:
        from prefect.settings import get_current_settings

        storage = get_current_settings().results.local_storage_path  # where Prefect itself reads them
    folder = Path(storage)
    if not folder.is_dir():
        return []
    trusted = json_results().model_dump(mode="json")
    dropped = []
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        try:
            record = json.loads(path.read_bytes())
            ok = isinstance(record, dict) and record.get("metadata", {}).get("serializer") == trusted
        except (ValueError, OSError, AttributeError):
            ok = False
        if not ok:
            path.unlink(missing_ok=True)
            dropped.append(path.name)
    if dropped:
        log.warning(
            "removed %d stored task result(s) not written with the JSON serializer: %s",
            len(dropped),
            ", ".join(sorted(dropped)[:5]),
        )
    return dropped


def _probe(seconds: float = 0.0, tag: int = 0, busy: bool = False) -> str:
    """Wait ``seconds`` (sleeping, or spinning the CPU if ``busy``); return ``host:pid`` of the process that ran it.

    Used by the fan-out checks and ``benchmarks/fanout.py``; ``tag`` only makes calls distinct.
    """
    import socket
    import time

    if busy:
        end, x = time.process_time() + seconds, 0
        while time.process_time() < end:
            x += sum(i * i for i in range(1000))
    else:
        time.sleep(seconds)
    return f"{socket.gethostname()}:{os.getpid()}"


def probe_task():
    """The probe as an uncached Prefect task (built on demand so importing this module stays cheap)."""
    from prefect import task

    return task(_probe, name="probe", cache_policy=None, persist_result=False, retries=0)


def fan_out(task: Callable, calls: Sequence[dict[str, Any]], spec: RunnerSpec) -> Iterator[tuple[dict[str, Any], Any]]:
    """Submit ``task(**call)`` for every call through the runner; yield (call, final state) in call order.

    With ``local`` the tasks run one after another in this process (no pool), which
    keeps a failing task's traceback simple and costs nothing per task.
    """
    drop_untrusted_results()
    if spec.kind == "local":
        for call in calls:
            yield call, task(**call, return_state=True)
        return
    log.info("fanning %d tasks out on the %s runner", len(calls), spec)
    with build(spec) as runner:
        futures = [runner.submit(task, call) for call in calls]
        for call, future in zip(calls, futures):
            future.wait()
            yield call, future.state


def _apply(fn: Callable[[Any], Any], items: list) -> list:
    """One chunk of a :func:`map_items` call (module level, so process and cluster runners can pickle it)."""
    return [fn(x) for x in items]


def map_items(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    *,
    workers: int = 1,
    chunk: int = 1,
    desc: str = "items",
    progress: bool = False,
) -> list:
    """``[fn(x) for x in items]`` through the configured runner (``--runner`` / ``PAPERLINE_RUNNER``, else
    ``local`` for one worker and ``process:<workers>`` for more), results in input order.

    A stage's grid goes through :func:`flows.runtime.grid.run_grid` (cached, resumable jobs); this uncached
    map serves work outside a stage (a tuning script), and ``--runner dask:2`` or ``ray`` reaches both.
    ``chunk`` items make one task (fan out coarse work: a Prefect task costs 10-250 ms). ``fn`` must be a
    module-level function and the
    items and results picklable plain data; the first failing item's error is raised.
    """
    from tqdm import tqdm

    spec = configured("local" if workers <= 1 else f"process:{workers}")
    items = list(items)
    if spec.kind == "local":
        return [fn(x) for x in tqdm(items, desc=desc, disable=None if progress else True)]
    from prefect import task

    t = task(_apply, name=f"map-{desc}", cache_policy=None, persist_result=False, retries=0)
    calls = [{"fn": fn, "items": items[i : i + chunk]} for i in range(0, len(items), max(1, chunk))]
    out: list = []
    for _call, state in tqdm(fan_out(t, calls, spec), total=len(calls), desc=desc, disable=None if progress else True):
        out.extend(state.result())  # raises the task's exception
    return out
