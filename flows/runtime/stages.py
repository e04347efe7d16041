"""Running one stage: its context, staged (atomic) outputs, and the completion marker.

A stage writes each declared output into a staging path beside the target
(``.tmp-<name>-<pid>-<random>``); only when the stage returns are the staged
outputs published as one set (``flows.runtime.publish``: marker set to
``publishing``, renames, marker ``complete``). A killed stage therefore leaves
no partial output at an output path and never a mixed set that a reader trusts,
and ``paperline run`` skips a stage whose marker fingerprint (code, data and
params hashes, as DVC computes them) still matches and whose outputs are intact.
Under ``dvc repro`` DVC makes the same decision from ``dvc.lock``. Every input
and output path is checked to stay inside the checkout (``flows.runtime.paths``).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import resource
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from components.errors import PaperlineError
from components.faults import crash_point
from components.io import path_md5
from flows.registry import PaperSpec, StageSpec
from flows.runtime import progress
from flows.runtime import publish as pub
from flows.runtime.paths import allowed_roots, inside
from flows.runtime.settings import Paths
from flows.runtime.tracking import Tensor
from flows.runtime.variants import route

log = logging.getLogger("paperline")


P = TypeVar("P", bound=BaseModel)


@dataclass
class StageContext(Generic[P]):
    """What a stage's ``run(ctx)`` gets: validated params, paths, tracking, staged outputs.

    Typed by the paper's params model (``def run(ctx: StageContext[Params])``), so a
    type checker sees ``ctx.params.unlearn.seeds`` as the paper declares it.
    """

    paper: PaperSpec
    stage: StageSpec
    params: P
    profile: str
    paths: Paths
    tracker_handle: Any = None  # a Tracker, a Future of one (set up in the background), or None (no tracking)
    staged: dict[str, Path] = field(default_factory=dict)
    variant: str | None = None  # a run with overrides: its reports/<paper>/ outputs go to variants/<variant>/

    @property
    def tracker(self) -> Any:
        """The MLflow tracker (waits for its background set-up on first use), or None."""
        if self.tracker_handle is not None and hasattr(self.tracker_handle, "result"):
            self.tracker_handle = self.tracker_handle.result()
        return self.tracker_handle

    def log_model(
        self,
        name: str,
        params: dict[str, Any] | None,
        model_dir: Path | None,
        *,
        loader: str,
        inputs: Tensor,
        outputs: Tensor,
        metrics: dict[str, Any] | None = None,
        curves: dict[str, list[tuple[int, float]]] | None = None,
    ) -> str | None:
        """Log a saved model folder in its own MLflow child run: its params, metrics and curves
        (``{key: [(step, value), ...]}``), the folder as a pyfunc (``loader``: the allow-listed function that
        rebuilds it) with the signature ``inputs`` -> ``outputs``; ``model_dir`` None logs the run without a
        model. Returns the run id, or None when the run is not tracked. Pipelines call this instead of importing
        MLflow."""
        if self.tracker is None:
            return None
        return self.tracker.log_model(
            name, params, model_dir, loader=loader, inputs=inputs, outputs=outputs, metrics=metrics, curves=curves
        )

    @property
    def slug(self) -> str:
        return self.paper.slug

    def input(self, rel: str) -> Path:
        """An input path (relative to the root); it must exist, stay inside the checkout and be fully published."""
        path = inside(self.paths.root / rel, allowed_roots(self.paths.root), rel)
        if not path.exists():
            raise PaperlineError(
                f"{rel}: missing input of stage {self.paper.slug}:{self.stage.name}; run its upstream stage first"
            )
        pub.check_published(self.paths, rel, exclude=(self.paper.slug, self.stage.name))
        return path

    def target(self, rel: str) -> str:
        """Where the declared output ``rel`` is published: ``rel``, or its variant folder's path
        (``flows.runtime.variants``)."""
        return route(self.paper.slug, self.variant, rel)

    def output(self, rel: str) -> Path:
        """The staging path to write the declared output ``rel`` to (renamed into place on success)."""
        if rel not in declared_outputs(self.stage):
            raise PaperlineError(f"{self.paper.slug}:{self.stage.name} writes {rel!r}, which is not a declared output")
        real = self.target(rel)
        if real not in self.staged:
            target = inside(self.paths.root / real, allowed_roots(self.paths.root), real)
            target.parent.mkdir(parents=True, exist_ok=True)
            self.staged[real] = pub.unique_name(target)
        return self.staged[real]

    def output_dir(self, rel: str) -> Path:
        """The staging folder of the declared folder output ``rel``, created (renamed into place on success)."""
        path = self.output(rel)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def params_dict(self) -> dict[str, Any]:
        return self.params.model_dump(mode="json")


def declared_outputs(stage: StageSpec) -> tuple[str, ...]:
    return (*stage.outs, *stage.metrics, *stage.plots)


def publish(
    ctx: StageContext, fp: str | None = None, run_seconds: float | None = None, cpu_seconds: float | None = None
) -> None:
    """Publish every staged output as one set and write the stage's marker (see ``flows.runtime.publish``)."""
    record = {"fingerprint": fp, "run_seconds": run_seconds, "cpu_seconds": cpu_seconds}
    outs = [ctx.target(rel) for rel in declared_outputs(ctx.stage)]
    pub.publish_set(ctx.paths, ctx.paper.slug, ctx.stage.name, ctx.staged, record, outs)
    ctx.staged.clear()


def clean_stale_staging(ctx: StageContext) -> None:
    """Remove staging leftovers of killed earlier runs of this stage (never a live process's)."""
    pub.clean_stale_staging(ctx.paths, [ctx.target(rel) for rel in declared_outputs(ctx.stage)])


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
    if any(ctx.target(rel) != rel for rel in declared_outputs(ctx.stage)):  # its outputs go elsewhere: not the same run
        h.update(f"variant:{ctx.variant}\n".encode())
    return h.hexdigest()


def is_fresh(ctx: StageContext, fp: str) -> bool:
    """True when the marker is complete, matches ``fp`` and every output still has its recorded hash."""
    record = pub.read_marker(ctx.paths, ctx.paper.slug, ctx.stage.name)
    if not pub.is_complete(record) or record.get("fingerprint") != fp:
        return False
    for rel, md5 in record.get("outs", {}).items():
        path = ctx.paths.root / rel
        if not path.exists() or path_md5(path) != md5:
            return False
    return True


def cpu_time() -> float:
    """User + system CPU seconds of this process and its finished children (a stage's process pools)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def pause_point(name: str) -> None:
    """Test seam for race tests: at ``PAPERLINE_PAUSE_AT=<point>`` write ``<PAPERLINE_PAUSE_FILE>.reached``
    and wait until ``PAPERLINE_PAUSE_FILE`` exists. Unset, it costs one dict lookup."""
    if os.environ.get("PAPERLINE_PAUSE_AT") != name:
        return
    go = Path(os.environ["PAPERLINE_PAUSE_FILE"])
    Path(f"{go}.reached").write_text(f"{os.getpid()}\n")
    while not go.exists():
        time.sleep(0.05)


def _power_plan(ctx: StageContext):
    claims = getattr(ctx.params, "claims", None)
    return claims.power_plan() if hasattr(claims, "power_plan") else None


def execute(ctx: StageContext, *, force: bool = False) -> dict[str, Any]:
    """Run the stage unless fresh; publish outputs; write the marker. Returns the stage's summary."""
    for dep in ctx.stage.deps:  # an upstream stage interrupted while publishing: refuse its outputs
        pub.check_published(ctx.paths, dep, exclude=(ctx.paper.slug, ctx.stage.name))
    fp = fingerprint(ctx)
    if not force and is_fresh(ctx, fp):
        log.info("%s:%s is up to date (skipped)", ctx.paper.slug, ctx.stage.name)
        return {"skipped": True}
    clean_stale_staging(ctx)
    point = f"{ctx.paper.slug}:{ctx.stage.name}"
    expected = progress.expected_seconds(ctx.paths, ctx.paper.slug, ctx.stage.name, ctx.profile)
    log.info("%s running%s", point, progress.usual(expected))
    t0, c0 = time.perf_counter(), cpu_time()  # the stage's own imports count as its work, not as orchestration
    module = importlib.import_module(ctx.stage.module)
    from components.evaluation.planted import planning  # loads numpy and scipy: only when a stage runs

    try:
        crash_point(f"stage-start:{point}")
        shown = bool(getattr(ctx.params, "progress", True))
        with progress.StageClock(point, expected, enabled=shown), planning(_power_plan(ctx)):
            summary = module.run(ctx) or {}  # every claim decided in the stage gets its power check (planning)
        run_seconds, cpu_seconds = round(time.perf_counter() - t0, 3), round(cpu_time() - c0, 3)
        crash_point(f"stage-end:{point}")
        pause_point(f"stage-end:{point}")
    except BaseException:
        for staging in ctx.staged.values():
            pub.remove(staging)
        ctx.staged.clear()
        raise
    publish(ctx, fp, run_seconds, cpu_seconds)
    progress.record(ctx.paths, ctx.paper.slug, ctx.stage.name, ctx.profile, run_seconds)
    crash_point(f"between:{point}")
    return {"skipped": False, "fingerprint": fp, "run_seconds": run_seconds, **summary}
