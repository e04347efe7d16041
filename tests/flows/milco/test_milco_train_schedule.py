"""The train stage's fan-out plan (``flows.milco.train.run``): SAP, the first seed's learning-rate trials and the
other seeds run in three fan-outs; no job runs before what it needs (its seed's SAP checkpoint, its model's chosen
rate), every model keeps its best dev rate, and train.json lists models and trials in the fixed (seed, variant) and
(variant, rate) order whatever the phases. The jobs are stand-ins: this checks the plan, not the training."""

from __future__ import annotations

import json
from pathlib import Path

from flows.milco import train as T
from flows.milco.params import PRESETS, Params
from flows.runtime.params import resolve

BEST = {"milco": 1e-3, "no_sap": 3e-3, "no_echo": 3e-3, "dense": 1e-3}  # the stand-in dev scores' winners


class Ctx:
    def __init__(self, root: Path, params: Params) -> None:
        self.root, self.params, self.tracker = root, params, None

    def output(self, name: str) -> Path:
        return self.root / "out" / name

    def output_dir(self, name: str) -> Path:
        path = self.output(name)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def input(self, name: str) -> Path:
        return self.root / "in" / name


def fake_job(job: T.TrainJob, job_dir: Path) -> dict:
    job_dir.mkdir(parents=True)
    if job.kind == "sap":
        return {"seed": job.seed, "folder": str(job_dir), "losses": [1.0], "seconds": 0}
    (job_dir / "lr").write_text(str(job.lr))
    hist = [{"step": 0, "nce": 2.0, "loss": 2.0}]
    return {
        "seed": job.seed,
        "variant": job.variant,
        "lr": job.lr,
        "folder": str(job_dir),
        "history": hist,
        "seconds": 0.0,
        "plateau": 0.0,
        "final_loss": 2.0,
        "dev_ndcg": 0.5 + (job.lr == BEST[job.variant]) * 0.1,
    }


def test_phases_respect_dependencies_and_keep_each_models_best_rate(tmp_path, monkeypatch):
    p = resolve(Params, PRESETS, slug="milco", profile="default", overrides=())
    phases: list[list[T.TrainJob]] = []

    def fake_grid(ctx, fn, jobs, **kw):
        assert fn is T.train_job and kw["files"]
        phases.append(list(jobs))
        return [fake_job(j, tmp_path / "jobs" / f"{len(phases)}-{i}") for i, j in enumerate(jobs)]

    monkeypatch.setattr(T, "run_grid", fake_grid)
    T.run(Ctx(tmp_path, p))
    first, rest = p.train.seeds[0], p.train.seeds[1:]
    phase_of = {}
    for i, jobs in enumerate(phases):
        for j in jobs:
            phase_of[j.kind, j.seed, j.variant, j.lr] = i
    assert len(phases) == 3
    for (kind, seed, variant, lr), i in phase_of.items():
        if kind == "stage2" and variant in T.SAP_VARIANTS:
            assert phase_of["sap", seed, None, None] < i, (seed, variant)
        if kind == "stage2" and seed != first:  # after every trial of its model on the first seed
            assert lr == BEST[variant]
            assert all(phase_of["stage2", first, variant, x] < i for x in p.train.lr_grid), (seed, variant)
    assert len(phase_of) == len(p.train.seeds) * (1 + len(p.train.variants)) + len(p.train.variants) * (
        len(p.train.lr_grid) - 1
    )
    out = tmp_path / "out" / T.MODELS
    doc = json.loads((out / "train.json").read_text())
    assert doc["chosen_lr"] == {v: BEST[v] for v in p.train.variants}
    assert [(r["variant"], r["lr"]) for r in doc["sweep"]] == [
        (v, x) for v in p.train.variants for x in p.train.lr_grid
    ]
    for s in p.train.seeds:
        assert list(doc[f"seed_{s}"]) == list(p.train.variants)
        for v in p.train.variants:  # the first seed's final model is its winning trial, copied into place
            assert float((out / f"seed_{s}" / v / "lr").read_text()) == BEST[v]
    assert not (out / f"seed_{first}" / "_sweep").exists() and rest
