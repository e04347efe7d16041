"""Record a successful ``paperline run`` in ``dvc.lock``, so that ``dvc status`` agrees with the run.

``paperline run`` executes the same stage code that ``dvc repro`` calls, but outside DVC, so without this step
``dvc status`` reports every stage as changed after a run. After a run whose params are exactly those of
``params.yaml`` (no ``--set``, and the file's profile), its stages are committed with DVC's own ``commit`` (what
``dvc repro`` does after running a stage: hash deps, params and outs into ``dvc.lock`` and the outs into the
cache). A run with overrides is not recorded: ``dvc.lock`` would then claim that ``params.yaml`` produced outputs
it did not. Inside ``dvc repro`` (``DVC_STAGE`` set) DVC records the stage itself.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
from collections.abc import Iterable, Sequence

from flows.registry import dvc_stage_name
from flows.runtime.settings import Paths


def why_not(paths: Paths, *, profile: str | None, file_profile: str, overrides: Sequence[str]) -> str | None:
    """Why this run must not be recorded in dvc.lock, or None if it may."""
    if os.environ.get("DVC_STAGE"):
        return "dvc repro records its own stages"
    if not (paths.root / ".dvc").is_dir() or not (paths.root / "dvc.yaml").is_file():
        return "this checkout is not a DVC project"
    if overrides:
        return "the run used --set, so its params are not those of params.yaml"
    if profile is not None and profile != file_profile:
        return f"the run used --profile {profile} while params.yaml says profile: {file_profile}"
    return None


def record(paths: Paths, stages: Iterable[str]) -> list[str]:
    """Commit the run's stages (``owner:name`` keys of the run's results) to dvc.lock; returns the DVC names."""
    from dvc.repo import Repo  # DVC's import costs ~1 s, so only after a run that gets recorded

    names = [dvc_stage_name(*key.split(":", 1)) for key in stages]
    dvc_log = logging.getLogger("dvc")
    level = dvc_log.level
    dvc_log.setLevel(logging.WARNING)  # no "Updating lock file" line per stage; the CLI says it once
    try:
        with contextlib.redirect_stdout(io.StringIO()), Repo(str(paths.root)) as repo:
            for name in names:
                repo.commit(name, force=True, relink=False)
    finally:
        dvc_log.setLevel(level)
    return names
