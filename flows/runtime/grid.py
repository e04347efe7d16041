"""The kit's grid stage: a stage's independent jobs, each run once, resumable after a kill, in every paper.

``run_grid(ctx, fn, jobs, desc=...)`` is ``[fn(job) for job in jobs]`` through the configured task runner
(``--runner``: local, process pool, Dask, Ray), where every job is a Prefect task whose result is persisted
(JSON, the trusted serializer of :func:`flows.runtime.runners.json_results`) and cached on a key made of

- the stage's fingerprint (its command, the content of its code and data dependencies, its params values:
  what ``dvc.lock`` records), so any change to code, data or params recomputes;
- the job function's qualified name, and the job itself (a dict or a dataclass of plain values).

A stage killed after some jobs finished reruns only the others: Prefect finds the finished ones in its result
storage (state ``Cached``); ``PAPERLINE_GRID_CACHE=refresh`` runs every job again and stores the new results
(for checks that must recompute, such as a fan-out on another runner). Jobs that write files (a model) get
``files=True``: the function is then called as ``fn(job, job_dir)`` with a folder of its own that outlives
the stage's staging folders (which a killed stage loses), under ``PAPERLINE_SHARED_DIR`` (a cluster's shared
storage) or ``.paperline/results``; a cached result whose folder is gone is computed again. The stage copies
what it publishes out of ``job_dir`` with ``publish(job_dir, dest, part=...)``: the job's folder (or its subfolder
``part``) copied into the stage's output at ``dest``, without the grid's completion marker.

Jobs and results can be typed: a job may be a dataclass of plain values (the function receives it as it is),
and ``result=<a dataclass>`` declares what ``fn`` returns: its fields are stored and the stage gets instances of
that class back, from a fresh run or from the cache alike (the class comes from the caller, never from storage).

Results must be plain data: dicts with string keys, lists, tuples, str, int, float, bool, None, numpy
arrays and scalars. They are stored as tagged JSON (never pickle: reading a stored result runs no code) and
come back equal, so a resumed stage writes the same outputs as an uninterrupted one. Prefect's own
``cache_policy`` hashes task inputs but not the code a function calls; the stage fingerprint does, so the key
is computed here and handed to Prefect through ``cache_key_fn``.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import json
import logging
import math
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from components.faults import crash_point
from flows.runtime import runners

if TYPE_CHECKING:
    from flows.runtime.stages import StageContext

log = logging.getLogger("paperline")

CACHE_ENV = "PAPERLINE_GRID_CACHE"  # "refresh": run every job again and overwrite its stored result
DONE = ".job-complete"  # written in job_dir after fn returned: the folder holds the whole job's files


# -- results as tagged JSON ------------------------------------------------------------------------------------


def encode(value: Any) -> Any:
    """``value`` as JSON-safe data that :func:`decode` turns back into an equal value."""
    import numpy as np

    if isinstance(value, np.generic):  # before float and int: np.float64 is a float, np.bool_ is not a bool
        return {"__npscalar__": [value.dtype.str, base64.b64encode(value.tobytes()).decode()]}
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            raise TypeError("grid results: numpy arrays of Python objects are not plain data")
        data = np.ascontiguousarray(value)
        return {"__ndarray__": [data.dtype.str, list(data.shape), base64.b64encode(data.tobytes()).decode()]}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("__") for k in value):
            return {k: encode(v) for k, v in value.items()}
        return {"__items__": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, Path):
        return {"__path__": str(value)}
    raise TypeError(f"grid results must be plain data; got {type(value).__name__}")


def decode(value: Any) -> Any:
    import numpy as np

    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        ((tag, body),) = value.items()
        if tag == "__float__":
            return float(body)
        if tag == "__ndarray__":
            dtype, shape, data = body
            return np.frombuffer(base64.b64decode(data), dtype=np.dtype(dtype)).reshape(shape).copy()
        if tag == "__npscalar__":
            dtype, data = body
            return np.frombuffer(base64.b64decode(data), dtype=np.dtype(dtype))[0]
        if tag == "__tuple__":
            return tuple(decode(v) for v in body)
        if tag == "__items__":
            return {decode(k): decode(v) for k, v in body}
        if tag == "__path__":
            return Path(body)
    return {k: decode(v) for k, v in value.items()}


# -- keys ------------------------------------------------------------------------------------------------------


def _plain(job: Any) -> Any:
    if dataclasses.is_dataclass(job) and not isinstance(job, type):
        return {"__dataclass__": type(job).__qualname__, **dataclasses.asdict(job)}
    return job


def _function(fn: Callable) -> Any:
    """A function's name, with the arguments bound by ``functools.partial``."""
    if isinstance(fn, functools.partial):
        return {"fn": _function(fn.func), "args": list(fn.args), "kwargs": fn.keywords}
    return f"{fn.__module__}.{fn.__qualname__}"


def job_key(stage_fingerprint: str, fn: Callable, job: Any) -> str:
    """The cache key of one job: the stage's fingerprint, the function and the job's values."""
    text = json.dumps(
        {"stage": stage_fingerprint, "fn": _function(fn), "job": _plain(job)},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def job_root(ctx: StageContext) -> Path:
    """Where jobs with files keep their folders: a path every worker sees (PAPERLINE_SHARED_DIR on a cluster)."""
    base = Path(os.environ.get("PAPERLINE_SHARED_DIR") or ctx.paths.state / "results")
    return base / "grid" / ctx.paper.slug / ctx.stage.name


# -- the task --------------------------------------------------------------------------------------------------


def _fields(value: Any, result: type | None) -> Any:
    """A typed result as the dict of its fields (shallow: arrays and lists in it are encoded as they are)."""
    if result is None:
        return value
    if not isinstance(value, result):
        raise TypeError(f"grid job returned {type(value).__name__}, not the declared result {result.__name__}")
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def _run_job(fn: Callable, job: Any, key: str, job_dir: str | None, result: type | None = None) -> Any:
    """One job (module level, so process and cluster runners can pickle it); returns the encoded result."""
    if job_dir is None:
        return encode(_fields(fn(job), result))
    folder = Path(job_dir)
    if folder.exists():  # leftovers of a job killed before it finished
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    value = encode(_fields(fn(job, folder), result))
    (folder / DONE).write_text(key)
    return value


def _key_from_parameters(_context: Any, parameters: dict[str, Any]) -> str:
    return f"grid-{parameters['key']}"


def _task(desc: str) -> Any:
    from prefect import task

    return task(
        _run_job,
        name=f"grid-{desc}",
        cache_key_fn=_key_from_parameters,
        persist_result=True,
        result_serializer=runners.json_results(),
        refresh_cache=os.environ.get(CACHE_ENV) == "refresh",  # e.g. to check another runner gives the same
        retries=0,
    )


def _runner(workers: int) -> runners.RunnerSpec:
    return runners.configured("local" if workers <= 1 else f"process:{workers}")


def publish(job_dir: str | Path, dest: Path, part: str | None = None) -> Path:
    """Copy a ``files=True`` job's folder, or its subfolder ``part``, to ``dest`` (in the stage's output), without
    the grid's completion marker; files already at ``dest`` are overwritten. Returns ``dest``."""
    src = Path(job_dir) / part if part else Path(job_dir)
    shutil.copytree(src, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(DONE))
    return dest


def run_grid(
    ctx: StageContext,
    fn: Callable[..., Any],
    jobs: Sequence[Any],
    *,
    desc: str,
    workers: int = 1,
    files: bool = False,
    progress: bool = False,
    stats: dict[str, int] | None = None,
    result: type | None = None,
) -> list[Any]:
    """``[fn(job) for job in jobs]`` (or ``fn(job, job_dir)`` with ``files``), results in job order; jobs that
    finished in an earlier run of the same stage inputs come from Prefect's result cache.

    ``fn`` must be a module-level function; the first failing job's error is raised. After each job the
    fault seam ``grid-job:<paper>:<stage>:<n>`` (n = jobs done so far) lets a test kill the stage there.
    A ``stats`` dict given is filled with ``jobs`` and ``cached`` (how many came from the cache). ``result``, a
    dataclass, is the type every job returns: the results come back as its instances.
    """
    if result is not None and not (dataclasses.is_dataclass(result) and isinstance(result, type)):
        raise TypeError(f"run_grid(result=...): expected a dataclass type, got {result!r}")
    from tqdm import tqdm

    from flows.runtime.stages import fingerprint

    jobs = list(jobs)
    base = fingerprint(ctx)
    root = job_root(ctx) if files else None
    calls = []
    for job in jobs:
        key = job_key(base, fn, job)
        calls.append({"fn": fn, "job": job, "key": key, "job_dir": str(root / key) if root else None, "result": result})
    task = _task(desc)
    results: list[Any] = []
    cached = 0
    point = f"grid-job:{ctx.paper.slug}:{ctx.stage.name}"
    states = runners.fan_out(task, calls, _runner(workers))
    for n, (call, state) in enumerate(tqdm(states, total=len(calls), desc=desc, disable=None if progress else True), 1):
        if state.name == "Cached" and call["job_dir"] and not (Path(call["job_dir"]) / DONE).is_file():
            state = task.with_options(refresh_cache=True)(**call, return_state=True)  # its folder is gone
        cached += state.name == "Cached"
        value = decode(state.result())  # raises the job's exception
        results.append(value if result is None else result(**value))
        crash_point(f"{point}:{n}")
    log.info("%s: %d of %d jobs from the cache of an earlier run", desc, cached, len(calls))
    if stats is not None:
        stats.update(jobs=len(calls), cached=cached)
    return results
