"""Schema-only database templates, so a fresh checkout's first Prefect server and MLflow store skip migrations.

Measured here (2 cores): a temporary Prefect server answers after 15 s on a new database and 5 s on a migrated
one (the migrations take about 10 s); a new MLflow SQLite store spends about 2 s creating its tables. A fresh
clone, every copy that ``benchmarks/profiles.py`` times and every test project paid that on each first run.

The first time a package version needs a database, its empty, migrated database is built once in a temporary
folder (``prefect server database upgrade``; MLflow's own store initialisation) and kept under the user's cache,
keyed by the package version (``PAPERLINE_TEMPLATE_DIR``, default ``~/.cache/paperline/db-templates``). A
checkout with no database gets a copy, linked into place so a database that another process created meanwhile
is never replaced. Anything that goes wrong here is skipped silently: the server or store then migrates its own
database as before, so a template can cost time but never a run.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing
from pathlib import Path

PREFECT_DB = "prefect.db"


def template_dir() -> Path:
    explicit = os.environ.get("PAPERLINE_TEMPLATE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "paperline" / "db-templates"


def _template(kind: str) -> Path:
    return template_dir() / f"{kind}-{importlib.metadata.version(kind)}.db"


def _migrated(db: Path) -> bool:
    """True if ``db`` is an SQLite database that records an Alembic revision (both stores use Alembic)."""
    if not db.is_file():
        return False
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            return bool(con.execute("SELECT version_num FROM alembic_version").fetchall())
    except sqlite3.Error:
        return False


def _keep(built: Path, kind: str) -> Path | None:
    """Snapshot ``built`` (consistently, through SQLite's backup) as ``kind``'s template; its path or None."""
    if not _migrated(built):
        return None
    target = _template(kind)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".part")
    os.close(fd)
    try:
        with closing(sqlite3.connect(built)) as src, closing(sqlite3.connect(tmp)) as dst:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file (the backup keeps Prefect's WAL)
        os.replace(tmp, target)  # two builders race harmlessly: both snapshots are the same empty schema
    finally:
        Path(tmp).unlink(missing_ok=True)
    return target


def _place(template: Path, db: Path) -> bool:
    """Copy ``template`` to ``db`` unless ``db`` exists (link, so a database created meanwhile stays)."""
    db.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=db.parent, prefix=f".{db.name}.", suffix=".part")
    os.close(fd)
    try:
        shutil.copyfile(template, tmp)
        os.link(tmp, db)
        return True
    except FileExistsError:
        return False
    finally:
        Path(tmp).unlink(missing_ok=True)


def _build_prefect() -> Path | None:
    with tempfile.TemporaryDirectory(prefix="paperline-prefect-template-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API_")}
        env.update(PREFECT_HOME=home, PREFECT_SERVER_ANALYTICS_ENABLED="false", PREFECT_LOGGING_LEVEL="WARNING")
        done = subprocess.run(
            [sys.executable, "-m", "prefect", "server", "database", "upgrade", "-y"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=300,
            check=False,
        )
        return _keep(Path(home) / PREFECT_DB, "prefect") if done.returncode == 0 else None


def _build_mlflow() -> Path | None:
    from mlflow.tracking import MlflowClient

    with tempfile.TemporaryDirectory(prefix="paperline-mlflow-template-") as folder:
        db = Path(folder) / "mlflow.db"
        MlflowClient(f"sqlite:///{db}").search_experiments()  # creates and migrates the tables
        return _keep(db, "mlflow")


def _seed(db: Path, kind: str, build) -> bool:
    """Place ``kind``'s template (built first if missing or broken) at ``db`` unless ``db`` exists."""
    if db.exists():
        return False
    template = _template(kind)
    if not _migrated(template):
        template = build()
    return bool(template) and _place(template, db)


def seed_prefect(home: str | os.PathLike | None = None) -> bool:
    """Give ``home`` (default ``$PREFECT_HOME``) a migrated empty Prefect database if it has none.

    Only for Prefect's default SQLite location (not when ``PREFECT_API_DATABASE_CONNECTION_URL`` names
    another database). True if a copy was placed."""
    home = home or os.environ.get("PREFECT_HOME")
    if not home or os.environ.get("PREFECT_API_DATABASE_CONNECTION_URL"):
        return False
    try:
        return _seed(Path(home) / PREFECT_DB, "prefect", _build_prefect)
    except (OSError, sqlite3.Error, subprocess.SubprocessError, importlib.metadata.PackageNotFoundError):
        return False


def seed_mlflow(uri: str | None = None) -> bool:
    """Give the SQLite MLflow store at ``uri`` (default ``$MLFLOW_TRACKING_URI``) migrated empty tables if its
    file does not exist yet. True if a copy was placed."""
    uri = uri or os.environ.get("MLFLOW_TRACKING_URI", "")
    if not uri.startswith("sqlite:///"):
        return False
    try:
        return _seed(Path(uri[len("sqlite:///") :]), "mlflow", _build_mlflow)
    except Exception:
        return False
