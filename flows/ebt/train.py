"""Stage ``train``: per seed and width, the EBT and the Transformer++ of the same depth and width.

Each (width, seed) is one job of the kit's grid stage (``flows.runtime.grid.run_grid``: ``resources.workers``
processes, or ``--runner``; a killed stage resumes from the jobs that finished), its models written to its job
folder and copied into ``models/``. A job measures FLOPs per token of both models (torch's FlopCounterMode),
trains the Transformer++ for the EBT's number of steps (equal steps, the same batches) and, with
``training.equal_flops``, a second Transformer++ on the EBT's training FLOPs (steps x FLOP ratio, capped at
``max_flop_ratio``), then the EBT. With ``training.lr_grid`` each model first picks its learning rate on the dev
split (same grid, same ``tune_steps`` for both). One MLflow child run per trained model, its model logged with a
signature.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from components.data import validate as V
from components.inputs import load_npy
from components.io import read_json, write_json, write_jsonl
from components.training.threads import set_threads
from flows.ebt import champion
from flows.ebt.common import model_name
from flows.ebt.params import Params
from flows.ebt.spec import DATA, MODELS
from flows.runtime.grid import publish, run_grid
from flows.runtime.stages import StageContext
from flows.runtime.tracking import LM_LOADER, NEXT_TOKEN, TOKEN_IDS, signature


@dataclass(frozen=True)
class TuneJob:
    """One tuning job of the grid: a width on the first seed; ``p`` is the plain settings the models are built from."""

    p: dict
    train: str
    dev: str
    vocab: int
    width: int
    seed: int


@dataclass
class Tuned:
    """What a tuning job returns: every tried setting's dev NLL, and the chosen learning rates and alpha_0."""

    width: int
    scores: dict
    lr: dict
    step_size: float


@dataclass(frozen=True)
class TrainJob:
    """One training job of the grid: a (width, seed), its models' learning rates (``ebt``, ``tpp``) and alpha_0."""

    p: dict
    train: str
    dev: str
    vocab: int
    width: int
    seed: int
    lr: dict
    step_size: float


@dataclass
class Trained:
    """What a training job returns: its models' records, the FLOP ratios, and ``job_dir`` (where the models are)."""

    records: list[dict]
    flop_ratio: float
    infer_flops_per_token: dict
    job_dir: str


def _configs(width: int, vocab: int, p: dict, step_size: float | None = None):
    from components.ebt.energy_model import EBTConfig
    from components.models.tiny_lm import TinyLMConfig, swiglu_width

    shape = dict(
        vocab_size=vocab,
        d_model=width,
        n_layers=p["n_layers"],
        n_heads=p["n_heads"],
        d_ff=swiglu_width(width),
        max_seq_len=p["seq_len"],
    )
    e = p["ebt"]
    return (
        EBTConfig(
            **shape,
            step_size=step_size or e["step_size"],
            step_size_learnable=e["step_size_learnable"],
            infer_steps=e["mcmc_steps"],
        ),
        TinyLMConfig(**shape),
    )


def _alpha_mult(p: dict, step_size: float) -> float:
    """alpha's lr multiplier for a swept alpha_0: the configured multiplier scaled with alpha_0 (the repo's
    "3 x alpha" rule keeps their ratio)."""
    e = p["ebt"]
    return e["step_size_lr_mult"] * step_size / e["step_size"]


def _fit_ebt(cfg, tokens, seed: int, steps: int, lr: float, p: dict):
    from components.ebt.energy_model import EnergyTransformer
    from components.ebt.training import train_ebt
    from components.ebt.tricks import Tricks

    e, t = p["ebt"], p["training"]
    model = EnergyTransformer(cfg, seed=seed)
    tricks = Tricks(
        step_size_scale=e["step_size_scale"],
        random_steps=e["random_steps"],
        random_steps_min=e["random_steps_min"],
        langevin_noise=e["langevin_noise"],
        replay_buffer=e["replay_buffer"],
        replay_size=e["replay_size"],
        replay_share=e["replay_share"],
    )
    res = train_ebt(
        model,
        tokens,
        steps=steps,
        batch_size=t["batch_size"],
        seq_len=p["seq_len"],
        peak_lr=lr,
        mcmc_steps=e["mcmc_steps"],
        tricks=tricks,
        warmup_frac=t["warmup_frac"],
        cooldown_frac=t["cooldown_frac"],
        weight_decay=t["weight_decay"],
        grad_clip=t["grad_clip"],
        alpha_lr_mult=_alpha_mult(p, cfg.step_size),
        init_scale=e["init_scale"],
        detach=e["detach_between_steps"],
        truncate=e["truncate"],
        seed=seed,
        num_threads=p["threads"],
        progress=p["progress"],
    )
    return model, res


def _fit_tpp(cfg, tokens, dev, seed: int, steps: int, lr: float, p: dict):
    from components.models.tiny_lm import TinyLM
    from components.training.lm_trainer import train_with_cooldowns

    t = p["training"]
    model = TinyLM(cfg, seed=seed)
    res = train_with_cooldowns(
        model,
        tokens,
        budgets=[steps * t["batch_size"] * p["seq_len"]],
        val_sets={"dev": dev},
        batch_size=t["batch_size"],
        seq_len=p["seq_len"],
        peak_lr=lr,
        warmup_frac=t["warmup_frac"],
        cooldown_frac=t["cooldown_frac"],
        weight_decay=t["weight_decay"],
        grad_clip=t["grad_clip"],
        seed=seed,
        eval_tokens=p["dev_windows"] * (p["seq_len"] + 1),
        num_threads=p["threads"],
        progress=p["progress"],
    )
    return model, res


def _ebt_dev_nll(model, dev, p: dict) -> float:
    from components.ebt.inference import think_curve, windows_of

    w = windows_of(dev, p["seq_len"], p["dev_windows"])
    nll, _ = think_curve(model, w, max_steps=p["ebt"]["mcmc_steps"], seed=0)
    return float(nll[:, -1].mean())


def tune(job: TuneJob) -> Tuned:
    """Each model's learning rate from ``lr_grid`` (and the EBT's alpha_0 from ``energy.step_size_grid``) by dev
    NLL after ``tune_steps`` steps; both models get the same lr grid and steps. An empty grid means the
    configured value alone."""
    p = job.p
    t, e = p["training"], p["ebt"]
    tokens, dev = load_npy(job.train, mmap_mode="r"), load_npy(job.dev)
    scores: dict[str, dict] = {"ebt": {}, "tpp": {}}
    _, tcfg = _configs(job.width, job.vocab, p)
    for lr in t["lr_grid"] or [t["lr"]]:
        for alpha in e["step_size_grid"] or [e["step_size"]]:
            ecfg, _ = _configs(job.width, job.vocab, p, step_size=alpha)
            m, _ = _fit_ebt(ecfg, tokens, job.seed, t["tune_steps"], lr, p)
            scores["ebt"][(lr, alpha)] = _ebt_dev_nll(m, dev, p)
        if t["lr_grid"]:
            _, r = _fit_tpp(tcfg, tokens, dev, job.seed, t["tune_steps"], lr, p)
            scores["tpp"][lr] = r.points[-1]["val_loss"]["dev"]
    best_lr, best_alpha = min(scores["ebt"], key=scores["ebt"].get)
    return Tuned(
        width=job.width,
        scores={
            "ebt": [{"lr": a, "step_size": b, "dev_nll": v} for (a, b), v in scores["ebt"].items()],
            "tpp": [{"lr": a, "dev_nll": v} for a, v in scores["tpp"].items()],
        },
        lr={"ebt": best_lr, "tpp": min(scores["tpp"], key=scores["tpp"].get) if scores["tpp"] else t["lr"]},
        step_size=best_alpha,
    )


def train_job(job: TrainJob, job_dir: Path) -> Trained:
    """Train the EBT and its Transformer++ baselines for one (width, seed); write the models into ``job_dir``;
    return records (and ``job_dir``, where the stage copies the models from)."""

    from components.ebt import flops as FL
    from components.ebt.energy_model import save_model as save_ebt
    from components.models.tiny_lm import TinyLM
    from components.models.tiny_lm import save_model as save_tpp
    from components.training.lm_trainer import sample_batch

    p, seed, width = job.p, job.seed, job.width
    set_threads(p["threads"])
    tokens, dev = load_npy(job.train, mmap_mode="r"), load_npy(job.dev)
    ecfg, tcfg = _configs(width, job.vocab, p, step_size=job.step_size)
    steps, tps = p["training"]["steps"], p["training"]["batch_size"] * p["seq_len"]
    x, y = sample_batch(tokens, step=0, seed=seed, batch_size=p["training"]["batch_size"], seq_len=p["seq_len"])
    from components.ebt.energy_model import EnergyTransformer

    f_ebt = FL.ebt_train_flops(
        EnergyTransformer(ecfg), x, y, steps=p["ebt"]["mcmc_steps"], detach=p["ebt"]["detach_between_steps"]
    )
    f_tpp = FL.lm_train_flops(TinyLM(tcfg), x, y)
    ratio = min(f_ebt / f_tpp, p["training"]["max_flop_ratio"])
    infer = {
        "tpp": FL.lm_infer_flops(TinyLM(tcfg), x),
        **{f"ebt_m{m}": FL.ebt_infer_flops(EnergyTransformer(ecfg), x, steps=m) for m in p["think_steps"]},
    }
    out = Path(job_dir)
    records = []
    runs = [("tpp", steps), *([("tppflops", int(round(steps * ratio)))] if p["training"]["equal_flops"] else [])]
    for kind, n in runs:
        model, res = _fit_tpp(tcfg, tokens, dev, seed, n, job.lr["tpp"], p)
        name = model_name(kind, width, seed)
        save_tpp(model, out / name)
        records.append(
            {
                "name": name,
                "kind": kind,
                "width": width,
                "seed": seed,
                "steps": n,
                "lr": job.lr["tpp"],
                "tokens": n * tps,
                "train_flops_per_token": f_tpp,
                "train_flops": f_tpp * n * tps,
                "dev_nll": res.points[-1]["val_loss"]["dev"],
                "seconds": res.train_seconds,
                "history": [{"step": h["step"], "loss": h["loss"]} for h in res.history],
            }
        )
    model, res = _fit_ebt(ecfg, tokens, seed, steps, job.lr["ebt"], p)
    name = model_name("ebt", width, seed)
    save_ebt(model, out / name)
    records.append(
        {
            "name": name,
            "kind": "ebt",
            "width": width,
            "seed": seed,
            "steps": steps,
            "lr": job.lr["ebt"],
            "tokens": steps * tps,
            "train_flops_per_token": f_ebt,
            "train_flops": f_ebt * steps * tps,
            "dev_nll": _ebt_dev_nll(model, dev, p),
            "seconds": res.seconds,
            "alpha": float(model.alpha.item()),
            "alpha0": ecfg.step_size,
            "history": res.history,
        }
    )
    return Trained(records=records, flop_ratio=f_ebt / f_tpp, infer_flops_per_token=infer, job_dir=str(job_dir))


def _log(ctx: StageContext[Params], rec: dict, out: Path, params: dict) -> str | None:
    """The model's MLflow child run (curves, metrics, the model folder); its run id (None untracked)."""
    if ctx.tracker is None:
        return None
    sig = signature(TOKEN_IDS, NEXT_TOKEN)
    loader = "components.ebt.predictor:load_predictor" if rec["kind"] == "ebt" else LM_LOADER
    summary = {k: v for k, v in rec.items() if k not in ("history", "name")}
    with ctx.tracker.child(rec["name"], {**params, **summary}) as run_id:
        for h in rec["history"]:
            ctx.tracker.log_metrics(
                {k: v for k, v in h.items() if k not in ("step",)}, step=int(h["step"]), run_id=run_id
            )
        ctx.tracker.log_metrics({"dev_nll": rec["dev_nll"], "train_flops": rec["train_flops"]}, run_id=run_id)
        ctx.tracker.log_state_dict_model(run_id, out / rec["name"], loader=loader, signature=sig)
    return run_id


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    data = ctx.input(DATA)
    summary = read_json(data / "summary.json")
    out = ctx.output_dir(MODELS)
    plain = {
        "n_layers": p.model.n_layers,
        "n_heads": p.model.n_heads,
        "seq_len": p.model.seq_len,
        "training": p.training.model_dump(),
        "ebt": p.energy.model_dump(),
        "threads": p.resources.threads,
        "progress": p.progress,
        "dev_windows": 64,
        "think_steps": p.eval.think_steps,
    }
    base = {
        "p": plain,
        "train": str(data / "train.npy"),
        "dev": str(data / "dev.npy"),
        "vocab": summary["vocab_size"],
    }
    lrs = {w: {"ebt": p.training.lr, "tpp": p.training.lr} for w in p.model.widths}
    alphas = {w: p.energy.step_size for w in p.model.widths}
    tuning = []
    if p.training.lr_grid or p.energy.step_size_grid:  # once per width on the first seed, on the dev split
        tuning = run_grid(
            ctx,
            tune,
            [TuneJob(**base, width=w, seed=p.training.seeds[0]) for w in p.model.widths],
            desc="ebt tune",
            workers=p.resources.workers,
            progress=p.progress,
            result=Tuned,
        )
        lrs = {t.width: t.lr for t in tuning}
        alphas = {t.width: t.step_size for t in tuning}
    jobs = [
        TrainJob(**base, width=w, seed=s, lr=lrs[w], step_size=alphas[w])
        for w in p.model.widths
        for s in p.training.seeds
    ]
    results = run_grid(
        ctx,
        train_job,
        jobs,
        desc="ebt train",
        workers=p.resources.workers,
        files=True,
        progress=p.progress,
        result=Trained,
    )
    for res in results:  # each model's folder, copied from its job folder into the output
        for rec in res.records:
            publish(res.job_dir, out / rec["name"], part=rec["name"])
    records = [r for res in results for r in res.records]
    rows = [{k: v for k, v in r.items() if k != "history"} for r in records]
    V.validate(
        rows,
        [
            V.unique("name"),
            V.finite("dev_nll"),
            V.between("dev_nll", 0.0, 50.0),
            V.between("train_flops", min_value=1.0),
        ],
        name="ebt/models",
        result_path=out / "_checks" / "models.json",
    )
    curves = [
        {"name": r["name"], "kind": r["kind"], "width": r["width"], "seed": r["seed"], **h}
        for r in records
        for h in r["history"]
    ]
    write_jsonl(out / "models.jsonl", rows)
    write_jsonl(out / "curves.jsonl", curves)
    write_json(
        out / "tuning.json",
        {
            "lr": {str(k): v for k, v in lrs.items()},
            "step_size": {str(k): v for k, v in alphas.items()},
            "runs": [dataclasses.asdict(t) for t in tuning],
        },
    )
    write_json(
        out / "flops.json",
        {
            f"d{j.width}-s{j.seed}": {
                "train_ratio": r.flop_ratio,
                "infer_per_token": r.infer_flops_per_token,
            }
            for j, r in zip(jobs, results)
        },
    )
    run_ids = {rec["name"]: _log(ctx, rec, out, {"profile": ctx.profile}) for rec in records}
    summary = {"models": len(records), "flop_ratio": float(np.mean([r.flop_ratio for r in results]))}
    width, seed = champion.choose(p)  # the EBT of the first width and seed, re-evaluated as the evaluate stage does
    name = model_name("ebt", width, seed)
    summary["champion"] = champion.candidate(p, run_ids.get(name), name, out / name, ctx.paths.root, seed)
    return summary
