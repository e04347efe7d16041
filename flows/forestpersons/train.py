"""Stage ``train``: one tiny CenterNet per training domain and seed, jobs of the kit's grid stage
(``flows.runtime.grid.run_grid``: ``--runner process:N``, ``dask`` or ``ray`` reach it; a killed stage resumes from
the models that finished), each written to its job folder and copied into ``models/``.

Training sets: ``urban_train`` and ``aerial_train`` (generate) and ``forest_train`` (split). Each model is saved as
``models/<domain>-s<seed>/`` (config.json + model.safetensors) with ``history.json``; ``runs.jsonl`` has one row
per model, with its plateau measure (``components.training.curves.plateau`` over the per-step loss) and its AP on
the forest dev split (``split/forest_val``) after every epoch: a learning curve, nothing is selected on it in the run.
MLflow: a child run per model with its loss and dev-AP curves and the model (signature) logged.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path

from components.detection import centernet as CN
from components.io import read_json, write_json, write_jsonl
from components.training.curves import plateau  # relative change of the mean loss over the last 20% of steps
from flows.forestpersons import champion
from flows.forestpersons.common import fit, load_set, log_model
from flows.forestpersons.params import DOMAINS, Params
from flows.forestpersons.spec import MODELS, SCENES, SPLIT
from flows.runtime.grid import publish, run_grid
from flows.runtime.stages import StageContext

log = logging.getLogger("paperline")


@dataclass(frozen=True)
class TrainJob:
    """One detector of the grid: its (domain, seed), training set, dev split and the params (``model_dump``)."""

    name: str
    domain: str
    seed: int
    run_seed: int
    folder: str
    set: str
    dev_folder: str
    params: dict


@dataclass
class TrainedModel:
    """What one job returns: the model's ``runs.jsonl`` row and ``job_dir``, its job folder (the stage publishes it)."""

    name: str
    domain: str
    seed: int
    images: int
    epochs: int
    final_loss: float
    loss: list[float]
    plateau: float
    dev_ap: list[float]
    seconds: float
    steps_per_s: float
    n_params: int
    job_dir: str

    def row(self) -> dict:
        """The ``runs.jsonl`` row: every field but ``job_dir``."""
        return {k: v for k, v in dataclasses.asdict(self).items() if k != "job_dir"}


def train_one(job: TrainJob, job_dir: Path) -> TrainedModel:
    """Train and save one (domain, seed) model under ``job_dir``; module level so process runners can pickle it."""
    from flows.forestpersons.params import Params as P

    p = P.model_validate(job.params)
    images, doc = load_set(Path(job.folder), job.set)
    model, hist = fit(images, doc, p, job.run_seed, dev=load_set(Path(job.dev_folder), "forest_val"))
    out = Path(job_dir) / job.name
    CN.save_model(model, out)
    write_json(
        out / "history.json",
        {
            "loss": hist["loss"],
            "step_loss": hist["step_loss"],
            "dev_ap": hist["monitor"],
            "steps": hist["steps"],
            "images": int(len(images)),
        },
    )
    return TrainedModel(
        name=job.name,
        domain=job.domain,
        seed=job.seed,
        images=int(len(images)),
        epochs=p.train.epochs,
        final_loss=hist["loss"][-1],
        loss=hist["loss"],
        plateau=plateau(hist["step_loss"]),
        dev_ap=hist["monitor"],
        seconds=round(hist["seconds"], 3),
        steps_per_s=round(hist["steps_per_s"], 3),
        n_params=CN.n_params(model),
        job_dir=str(job_dir),
    )


def jobs(ctx: StageContext[Params]) -> list[TrainJob]:
    p = ctx.params
    folders = {
        "urban": (ctx.input(SCENES), "urban_train"),
        "aerial": (ctx.input(SCENES), "aerial_train"),
        "forest": (ctx.input(SPLIT), "forest_train"),
    }
    plain = p.model_dump(mode="json")
    return [
        TrainJob(
            name=f"{d}-s{s}",
            domain=d,
            seed=s,
            run_seed=7919 * DOMAINS.index(d) + s,
            folder=str(folders[d][0]),
            set=folders[d][1],
            dev_folder=str(ctx.input(SPLIT)),
            params=plain,
        )
        for d in DOMAINS
        for s in p.train.seeds[d]
    ]


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    out = ctx.output_dir(MODELS)
    todo = jobs(ctx)
    log.info("forestpersons: %d detectors on %d worker(s)", len(todo), p.resources.workers)
    results = run_grid(
        ctx,
        train_one,
        todo,
        desc="forestpersons detectors",
        workers=p.resources.workers,
        files=True,
        progress=p.progress,
        result=TrainedModel,
    )
    for res in results:  # each model's folder, copied from its job folder into the output
        publish(res.job_dir, out / res.name, part=res.name)
    rows = [res.row() for res in results]
    run_ids = {}
    for row in rows:
        hist = read_json(out / row["name"] / "history.json")
        run_ids[row["name"]] = log_model(
            ctx,
            row["name"],
            {"domain": row["domain"], "seed": row["seed"], **p.train.model_dump(exclude={"seeds"})},
            {
                "loss": hist["loss"],
                "dev_ap": hist["dev_ap"],
                "plateau": row["plateau"],
                "images_seen": row["images"] * row["epochs"],
                "seconds": row["seconds"],
            },
            out / row["name"],
        )
    write_jsonl(out / "runs.jsonl", rows)
    summary = {"models": len(rows), "seconds": round(sum(r["seconds"] for r in rows), 1)}
    _, name = champion.choose(p)  # the forest-trained detector of the first forest seed
    summary["champion"] = champion.candidate(p, run_ids.get(name), name, out / name, SPLIT, ctx.paths.root)
    return summary
