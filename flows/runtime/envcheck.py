"""The environment checked before any work: service URLs and the folders a run writes.

A bad ``PREFECT_API_URL`` or ``MLFLOW_TRACKING_URI``, an MLflow SQLite store that cannot be written, or a
read-only ``data/`` or ``reports/`` would otherwise end deep inside Prefect, MLflow or a stage in a traceback,
after work was done. Each is one :class:`EnvironmentProblem` naming the variable or folder.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from urllib.parse import urlparse

from components.errors import PaperlineError

# the tracking-store schemes MLflow knows (a "dialect+driver" scheme is checked by its dialect)
MLFLOW_SCHEMES = {"", "file", "sqlite", "postgresql", "mysql", "mssql", "http", "https", "databricks", "uc"}
MLFLOW_SCHEMES |= {"databricks-uc"}


class EnvironmentProblem(PaperlineError):
    """An environment variable or a project folder that cannot work; the message names it."""


def _short(value: str) -> str:
    return value if len(value) <= 80 else value[:77] + "..."


def check_prefect_url() -> None:
    """``PREFECT_API_URL``, when set, must be an http(s) URL with a host."""
    value = os.environ.get("PREFECT_API_URL")
    if not value:
        return
    url = urlparse(value)
    if url.scheme not in {"http", "https"} or not url.hostname:
        raise EnvironmentProblem(
            f"PREFECT_API_URL={_short(value)}: not an http(s) URL with a host (e.g. http://127.0.0.1:4200/api); "
            "fix or unset it"
        )


def check_mlflow_uri(var: str = "MLFLOW_TRACKING_URI") -> None:
    """``var`` must use a scheme MLflow supports; a SQLite or file store must be writable where it points."""
    value = os.environ.get(var)
    if not value:
        return
    url = urlparse(value)
    scheme = url.scheme.split("+", 1)[0].lower()
    if scheme not in MLFLOW_SCHEMES:
        raise EnvironmentProblem(
            f"{var}={_short(value)}: unsupported scheme {url.scheme!r} (use sqlite:///PATH, a folder, "
            "http(s)://HOST or a database URL); fix or unset it"
        )
    if scheme in {"http", "https"} and not url.hostname:
        raise EnvironmentProblem(f"{var}={_short(value)}: no host in the URL; fix or unset it")
    if scheme == "sqlite":
        path = value[len("sqlite:///") :] if value.startswith("sqlite:///") else ""
        if path and path != ":memory:":
            _check_store_file(var, value, Path(path))
    elif scheme in {"", "file"}:
        _check_store_folder(var, value, Path(url.path if scheme == "file" else value))


def _check_store_file(var: str, value: str, db: Path) -> None:
    if db.is_dir():
        raise EnvironmentProblem(f"{var}={_short(value)}: {db} is a folder, not a database file")
    folder = db.parent
    if db.exists():
        ok = os.access(db, os.R_OK | os.W_OK) and not _read_only(db)
    else:
        ok = folder.is_dir() and _can_create_in(folder)
    if not ok:
        raise EnvironmentProblem(
            f"{var}={_short(value)}: the MLflow store cannot be written there; point it at a writable path"
        )


def _check_store_folder(var: str, value: str, folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise EnvironmentProblem(f"{var}={_short(value)}: {folder} is a file, not a folder")
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is None or not _can_create_in(existing):
        raise EnvironmentProblem(f"{var}={_short(value)}: the MLflow folder cannot be written; point it elsewhere")


def _read_only(path: Path) -> bool:
    """No write bit for anyone, or a read-only mount (root passes os.access on a chmod-ed folder)."""
    try:
        st = path.stat()
        vfs = os.statvfs(path)
    except OSError:
        return True
    return (st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)) == 0 or bool(vfs.f_flag & os.ST_RDONLY)


def _can_create_in(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (tried with a temporary file, removed at once)."""
    if not folder.is_dir() or _read_only(folder) or not os.access(folder, os.W_OK | os.X_OK):
        return False
    try:
        with tempfile.TemporaryFile(dir=folder, prefix=".paperline-probe-"):
            pass
    except OSError:
        return False
    return True


def check_writable_folders(root: Path) -> None:
    """``data/`` and ``reports/`` (where they exist), and the ``.paperline`` state folder, must be writable."""
    for name in ("data", "reports", ".paperline"):
        folder = root / name
        if folder.is_symlink() and not folder.exists():
            raise EnvironmentProblem(f"{folder}: a broken link; remove it or point it at a folder")
        if folder.exists() and not folder.is_dir():
            raise EnvironmentProblem(f"{folder}: expected a folder, found a file; move it away")
        if folder.is_dir() and not _can_create_in(folder):
            raise EnvironmentProblem(f"{folder}: read-only; make it writable (a run writes its outputs there)")


def check_environment(root: Path, *, writing: bool) -> None:
    """Every check above; the folders only for a command that writes (run, stage, report, repro)."""
    check_prefect_url()
    check_mlflow_uri("MLFLOW_TRACKING_URI")
    check_mlflow_uri("MLFLOW_REGISTRY_URI")
    if writing:
        check_writable_folders(root)
