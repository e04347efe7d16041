"""Stage ``rl``: GRPO from the GoT-SFT decoder, one run per (reward kind, seed), each scored on the test prompts.

Kinds: ``full`` (GoT-R1: R_PI * (R_sem + R_spa) / 2 * R_RI), ``pi`` (outcome only), ``ri`` (R_RI only, the
paper's collapse ablation). Every run has the same prompts per step, group size and steps. Jobs fan out through
the kit's grid (cached per job, so a killed stage resumes from the runs that finished).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from components.data import validate as V
from components.got_r1 import model as M
from components.got_r1 import train as T
from components.got_r1.tokens import Vocab, chain_text
from components.io import write_jsonl
from components.training.threads import set_threads
from flows.got_r1 import champion
from flows.got_r1.common import load_prompts, log
from flows.got_r1.params import Params
from flows.got_r1.sft import LOADER
from flows.got_r1.spec import DATA, RUNS, SFT
from flows.runtime.grid import run_grid
from flows.runtime.stages import StageContext
from flows.runtime.tracking import TOKEN_IDS, Tensor


@dataclass(frozen=True)
class Job:
    kind: str
    seed: int
    sft_dir: str
    image_size: int
    settings: dict
    rl_prompts: list
    test_prompts: list
    threads: int


@dataclass
class JobResult:
    kind: str
    seed: int
    curve: list
    rows: list
    summary: dict
    model_dir: str


def run_job(job: Job, job_dir: Path) -> JobResult:
    set_threads(job.threads)
    vocab = Vocab(job.image_size)
    model = M.load_model(job.sft_dir)
    st = T.GRPOSettings(kind=job.kind, **job.settings)
    curve = T.grpo(model, vocab, job.rl_prompts, st, seed=job.seed)
    outputs = T.generate(model, vocab, job.test_prompts, with_chain=True)
    scored = T.score_outputs(job.test_prompts, outputs, with_chain=True)
    rows = [
        {
            **r,
            "id": s["id"],
            "method": f"grpo-{job.kind}",
            "seed": job.seed,
            "chain": chain_text(o["objects"]),
            "image": o["image"].tolist(),
        }
        for s, o, r in zip(job.test_prompts, outputs, scored)
    ]
    M.save_model(model, Path(job_dir) / "model")
    return JobResult(job.kind, job.seed, curve, rows, T.summary(scored), str(Path(job_dir) / "model"))


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    r = p.rl
    settings = {
        "hps": r.hps,
        "steps": r.steps,
        "prompts_per_step": r.prompts_per_step,
        "group": r.group,
        "lr": r.lr,
        "beta": r.beta,
        "temperature": r.temperature,
    }
    prompts = ctx.input(f"{DATA}/prompts.jsonl")
    rl, test = load_prompts(prompts, "rl"), load_prompts(prompts, "test")
    sft_dir = str(ctx.input(f"{SFT}/got-sft"))
    jobs = [
        Job(k, s, sft_dir, p.data.image_size, settings, rl, test, p.resources.threads)
        for k in r.methods
        for s in r.seeds
    ]
    results = run_grid(
        ctx,
        run_job,
        jobs,
        desc="got-r1 grpo",
        result=JobResult,
        workers=p.resources.workers,
        files=True,
        progress=p.progress,
    )
    out = ctx.output_dir(RUNS)
    vocab = Vocab(p.data.image_size)
    curves, rows, run_ids = [], [], {}
    for res in results:
        curves += [{**c, "method": f"grpo-{res.kind}", "seed": res.seed} for c in res.curve]
        rows += res.rows
        name = f"grpo-{res.kind}-seed{res.seed}"
        shutil.copytree(res.model_dir, out / "models" / name)
        run_ids[name] = ctx.log_model(
            name,
            {"kind": res.kind, "seed": res.seed, **settings},
            out / "models" / name,
            loader=LOADER,
            inputs=TOKEN_IDS,
            outputs=Tensor("logits", "float32", (-1, -1, len(vocab))),
            metrics=res.summary,
            curves={"reward": [(c["step"], c["reward"]) for c in res.curve]},
        )
        log.info("got-r1 %s: test overall %.3f", name, res.summary["overall"])
    write_jsonl(out / "curves.jsonl", curves)
    V.validate(
        [{k: r.get(k) for k in ("id", "method", "seed", "correct", "score", "image_valid")} for r in rows],
        [V.not_null("id"), V.between("correct", 0, 1), V.between("score", 0, 1), V.between("image_valid", 0, 1)],
        name="runs_eval",
        result_path=out / "_checks" / "eval.json",
        id_column=None,
    )
    write_jsonl(out / "eval.jsonl", rows)
    best = champion.name_of(*champion.choose(p))  # GoT-R1's decoder of the first seed, re-evaluated as above
    return {
        **{f"grpo-{res.kind}-{res.seed}": res.summary["overall"] for res in results},
        "champion": champion.candidate(p, run_ids.get(best), out / "models" / best, ctx.paths.root),
    }
