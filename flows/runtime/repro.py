"""The main job: ``dvc repro`` over the registered pipelines with one shared Prefect server."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from components.errors import PaperlineError
from flows.registry import SHARED, dvc_stage_name, get_paper, paper_slugs
from flows.runtime import prefect_server
from flows.runtime.lock import hold
from flows.runtime.settings import Paths

log = logging.getLogger("paperline")


def tool_env(url: str | None) -> dict[str, str]:
    """The environment for DVC and its stage commands: this venv's bin first on PATH, the server URL."""
    env = dict(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    if url:
        env["PREFECT_API_URL"] = url
    return env


def dvc_targets(paper: str | None) -> list[str]:
    if paper is None:
        return []
    spec = get_paper(paper)
    return [dvc_stage_name(spec.slug, st.name) for st in spec.stages]


def lock_owners(paper: str | None) -> list[str]:
    """The owners whose stages ``dvc repro [paper]`` may run (their locks are held for the whole run)."""
    from flows.runtime.pipeline import plan

    if paper is not None:
        return sorted({owner for owner, _ in plan(paper, None, with_upstream=True)})
    return sorted({SHARED, *(s for s in paper_slugs() if get_paper(s).implemented)})


def reproduce(paths: Paths, paper: str | None = None, *, keep_server: bool = False, wait: bool = False) -> Path:
    """Run ``dvc repro [paper's stages]`` holding the papers' locks (its stage processes inherit them);
    start (and afterwards stop) a local Prefect server if none is set."""
    targets = dvc_targets(paper)
    with hold(paths, lock_owners(paper), wait=wait, export=True):
        return _reproduce(paths, targets, keep_server=keep_server)


def _reproduce(paths: Paths, targets: list[str], *, keep_server: bool) -> Path:
    from flows.cli_views import write_index

    started = False
    url = prefect_server.choose(paths)  # PREFECT_API_URL (it must answer), else the recorded server
    if not url:
        log.info("starting a local Prefect server for this reproduction")
        url = prefect_server.start(paths, owned=not keep_server)  # owned: it ends if this process is killed
        started = True
    try:
        cmd = [str(Path(sys.executable).parent / "dvc"), "repro", *targets]
        log.info("running: dvc repro %s", " ".join(targets))
        proc = subprocess.run(cmd, cwd=paths.root, env=tool_env(url))
        if proc.returncode != 0:
            raise PaperlineError(f"dvc repro failed with exit code {proc.returncode} (see the stage output above)")
    finally:
        if started and not keep_server:
            prefect_server.stop(paths)
    return write_index(paths)
