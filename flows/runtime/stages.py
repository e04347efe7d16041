"""Running one stage: its context, staged (atomic) outputs, and the completion marker.

A stage writes each declared output into a staging path beside the target;
only when the stage returns are the staged outputs renamed into place, and only
then is the stage's marker written. A killed stage therefore leaves no partial
output at an output path, and ``paperline run`` skips a stage whose marker
fingerprint (code, data and params hashes, as DVC computes them) still matches
and whose outputs are intact. Under ``dvc repro`` DVC makes the same decision
from ``dvc.lock``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from components.errors import PaperlineError
from components.faults import crash_point
from components.io import TMP_PREFIX, path_md5, read_json, write_json
from flows.registry import PaperSpec, StageSpec
from flows.runtime.settings import Paths

log = logging.getLogger("paperline")


@dataclass
class StageContext:
    """What a stage's ``run(ctx)`` gets: validated params, paths, tracking, staged outputs."""

    paper: PaperSpec
    stage: StageSpec
    params: BaseModel
    profile: str
    paths: Paths
    tracker_handle: Any = None  # a Tracker, a Future of one (set up in the background), or None (no tracking)
    staged: dict[str, Path] = field(default_factory=dict)

    @property
    def tracker(self) -> Any:
        """The MLflow tracker (waits for its background set-up on first use), or None."""
        if self.tracker_handle is not None and hasattr(self.tracker_handle, "result"):
            self.tracker_handle = self.tracker_handle.result()
        return self.tracker_handle

    @property
    def slug(self) -> str:
        return self.paper.slug

    def input(self, rel: str) -> Path:
        """An input path (relative to the root); it must exist."""
        path = self.paths.root / rel
        if not path.exists():
            raise PaperlineError(f"{rel}: missing input of stage {self.paper.slug}:{self.stage.name}; run its upstream stage first")
        return path

    def output(self, rel: str) -> Path:
        """The staging path to write the declared output ``rel`` to (renamed into place on success)."""
        declared = (*self.stage.outs, *self.stage.metrics, *self.stage.plots)
        if rel not in declared:
            raise PaperlineError(f"{self.paper.slug}:{self.stage.name} writes {rel!r}, which is not a declared output")
        if rel not in self.staged:
            target = self.paths.root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            staging = target.with_name(f"{TMP_PREFIX}{target.name}-{os.getpid()}")
            _remove(staging)
            self.staged[rel] = staging
        return self.staged[rel]

    def params_dict(self) -> dict[str, Any]:
        return self.params.model_dump(mode="json")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def publish(ctx: StageContext) -> None:
    """Rename every staged output onto its target (each rename is atomic)."""
    for rel, staging in ctx.staged.items():
        if not staging.exists():
            raise PaperlineError(f"{ctx.paper.slug}:{ctx.stage.name} declared {rel} but did not write it")
        target = ctx.paths.root / rel
        if staging.is_dir() and target.exists():
            old = target.with_name(f"{TMP_PREFIX}{target.name}-old-{os.getpid()}")
            os.replace(target, old)
            os.replace(staging, target)
            _remove(old)
        else:
            if target.is_dir():
                _remove(target)
            os.replace(staging, target)
    ctx.staged.clear()


def clean_stale_staging(paths: Paths, stage: StageSpec) -> None:
    """Remove staging leftovers of a killed earlier run of this stage."""
    for rel in (*stage.outs, *stage.metrics, *stage.plots):
        target = paths.root / rel
        if target.parent.is_dir():
            for leftover in target.parent.glob(f"{TMP_PREFIX}{target.name}-*"):
                _remove(leftover)


def stage_params(stage: StageSpec, owner: str, profile: str, params: BaseModel) -> dict[str, Any]:
    """The values of the params keys the stage declares (as DVC would read them)."""
    tree = {"profile": profile, owner: params.model_dump(mode="json")}
    out = {}
    for key in stage.params:
        node: Any = tree
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        out[key] = node
    return out


def fingerprint(ctx: StageContext) -> str:
    """Hash of the stage's command, its dependencies' content and its params values."""
    h = hashlib.md5()
    h.update(f"paperline stage {ctx.paper.slug} {ctx.stage.name}\n".encode())
    for dep in ctx.stage.deps:
        path = ctx.paths.root / dep
        h.update(f"{dep}:{path_md5(path) if path.exists() else 'missing'}\n".encode())
    values = stage_params(ctx.stage, ctx.paper.slug, ctx.profile, ctx.params)
    h.update(json.dumps(values, sort_keys=True).encode())
    return h.hexdigest()


def _marker(ctx: StageContext) -> Path:
    return ctx.paths.markers / ctx.paper.slug / f"{ctx.stage.name}.json"


def is_fresh(ctx: StageContext, fp: str) -> bool:
    """True when the marker matches ``fp`` and every output still has its recorded hash."""
    marker = _marker(ctx)
    if not marker.is_file():
        return False
    try:
        record = read_json(marker)
    except PaperlineError:
        return False
    if record.get("fingerprint") != fp:
        return False
    for rel, md5 in record.get("outs", {}).items():
        path = ctx.paths.root / rel
        if not path.exists() or path_md5(path) != md5:
            return False
    return True


def write_marker(ctx: StageContext, fp: str, run_seconds: float) -> None:
    outs = {rel: path_md5(ctx.paths.root / rel) for rel in (*ctx.stage.outs, *ctx.stage.metrics, *ctx.stage.plots)}
    write_json(_marker(ctx), {"fingerprint": fp, "outs": outs, "run_seconds": run_seconds})


def execute(ctx: StageContext, *, force: bool = False) -> dict[str, Any]:
    """Run the stage unless fresh; publish outputs; write the marker. Returns the stage's summary."""
    fp = fingerprint(ctx)
    if not force and is_fresh(ctx, fp):
        log.info("%s:%s is up to date (skipped)", ctx.paper.slug, ctx.stage.name)
        return {"skipped": True}
    clean_stale_staging(ctx.paths, ctx.stage)
    log.info("%s:%s running", ctx.paper.slug, ctx.stage.name)
    point = f"{ctx.paper.slug}:{ctx.stage.name}"
    t0 = time.perf_counter()  # the stage's own imports count as its work, not as orchestration
    module = importlib.import_module(ctx.stage.module)
    try:
        crash_point(f"stage-start:{point}")
        summary = module.run(ctx) or {}
        run_seconds = round(time.perf_counter() - t0, 3)
        crash_point(f"stage-end:{point}")
    except BaseException:
        for staging in ctx.staged.values():
            _remove(staging)
        ctx.staged.clear()
        raise
    publish(ctx)
    write_marker(ctx, fp, run_seconds)
    crash_point(f"between:{point}")
    return {"skipped": False, "fingerprint": fp, "run_seconds": run_seconds, **summary}
