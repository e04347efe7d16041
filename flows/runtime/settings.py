"""Project paths and the environment defaults every paperline process starts with.

``apply_env_defaults`` must run before Prefect, MLflow or Hugging Face are
imported: they read these variables at import time. Values already set in the
environment win, so a user can point at a Prefect server, an MLflow server or
go online (``PAPERLINE_ONLINE=1``) without touching code.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

STATE_DIR = ".paperline"  # ignored by git: MLflow store, Prefect home, caches


def find_root(start: Path | None = None) -> Path:
    """The project root: the nearest folder above ``start`` (default cwd) holding params.yaml and dvc.yaml.

    ``PAPERLINE_ROOT`` wins, but must name a checkout (a folder with both params.yaml and dvc.yaml): a
    stray value is an error naming the variable, never a new ``.paperline`` in some other folder."""
    env = os.environ.get("PAPERLINE_ROOT")
    if env:
        root = Path(env).resolve()
        if not _is_checkout(root):
            from components.errors import PaperlineError

            raise PaperlineError(
                f"PAPERLINE_ROOT={env[:120]}: not a paperline checkout (a checkout is a folder holding both "
                "params.yaml and dvc.yaml); unset it or point it at one"
            )
        return root
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "params.yaml").is_file() and (folder / "dvc.yaml").is_file():
            return folder
    return here


def _is_checkout(folder: Path) -> bool:
    # params.yaml present (a broken one, even a folder, is reported by the params loader naming it)
    return (folder / "params.yaml").exists() and (folder / "dvc.yaml").is_file()


@dataclass(frozen=True)
class Paths:
    """Where a paper's data, reports and the runtime state live, relative to the root."""

    root: Path

    @property
    def state(self) -> Path:
        return self.root / STATE_DIR

    @property
    def params_file(self) -> Path:
        return self.root / "params.yaml"

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    def data(self, slug: str) -> Path:
        return self.root / "data" / slug

    def report(self, slug: str, variant: str | None = None) -> Path:
        """A paper's report folder, or its ``variant``'s (``flows.runtime.variants``)."""
        from flows.runtime.variants import report_rel

        return self.root / report_rel(slug, variant)

    @property
    def markers(self) -> Path:
        return self.state / "stages"

    @property
    def cache(self) -> Path:
        """Content-addressed file cache; PAPERLINE_CACHE_DIR shares one between checkouts."""
        return Path(os.environ.get("PAPERLINE_CACHE_DIR") or self.state / "cache")


def online() -> bool:
    """True when the user allowed network access (hub downloads) with PAPERLINE_ONLINE=1."""
    return os.environ.get("PAPERLINE_ONLINE", "").lower() in {"1", "true", "yes"}


def apply_env_defaults(root: Path | None = None, *, writing: bool = False) -> Paths:
    """Set quiet, offline, fast defaults for Prefect, MLflow, DVC, GX and HF (see ../shared/STACK.md), then check
    the environment before any work (``writing``: also that the folders a run writes are writable)."""
    paths = Paths(find_root(root))
    if root is None and not os.environ.get("PAPERLINE_ROOT") and not _is_checkout(paths.root):
        from components.errors import PaperlineError

        raise PaperlineError(
            f"{paths.root}: not inside a paperline checkout (no params.yaml and dvc.yaml here or "
            "above); cd into one or set PAPERLINE_ROOT"
        )
    state = paths.state
    defaults = {
        "PREFECT_HOME": str(state / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_RESULTS_PERSIST_BY_DEFAULT": "true",
        "PREFECT_LOCAL_STORAGE_PATH": str(state / "prefect" / "storage"),
        "MLFLOW_TRACKING_URI": f"sqlite:///{state / 'mlflow.db'}",
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false",  # its "Downloading artifacts" bars on every model log
        "DO_NOT_TRACK": "true",
        "DVC_NO_ANALYTICS": "1",
        "GX_ANALYTICS_ENABLED": "false",
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HOME": str(state / "hf"),
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    if not online():
        defaults["HF_HUB_OFFLINE"] = "1"
        defaults["HF_DATASETS_OFFLINE"] = "1"
        defaults["TRANSFORMERS_OFFLINE"] = "1"
    if os.environ.get("CI") or not sys.stderr.isatty():
        defaults["TQDM_DISABLE"] = "1"  # progress bars only on a terminal: no bar spam in CI logs or log files
    for key, value in defaults.items():
        os.environ.setdefault(key, value)
    if state.is_symlink() or (state.exists() and not state.is_dir()):
        from components.errors import PaperlineError

        raise PaperlineError(f"{state}: expected a folder (the runtime state), found a file or link; move it away")
    try:
        state.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        from components.errors import PaperlineError

        raise PaperlineError(f"{state}: cannot create the state folder ({exc.strerror})") from None
    from flows.runtime.envcheck import check_environment

    check_environment(paths.root, writing=writing)
    return paths
