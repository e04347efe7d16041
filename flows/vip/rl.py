"""Stage ``rl``: every method x seed from the same SFT model at the same rollout budget, a job of the kit's grid
stage (``flows.runtime.grid.run_grid``: ``--runner`` reaches it; a killed stage resumes from the finished runs).
Each trained policy is saved in its job folder, copied to ``models/`` and logged as an MLflow child run with its
curves (metrics in batches)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from components.inputs import check_array, load_npz
from components.io import read_jsonl, write_json, write_jsonl
from components.training.threads import set_threads
from components.vip import rl_loop
from components.vip.policy import is_tiny, load_policy, save_policy
from components.vip.strategies import Method
from flows.runtime.grid import publish, run_grid
from flows.runtime.stages import StageContext
from flows.runtime.tracking import LM_LOADER, TOKEN_IDS, Tensor, signature
from flows.vip import champion
from flows.vip.params import Params
from flows.vip.spec import DATA, RUNS, SFT


def loop_config(p) -> rl_loop.LoopConfig:
    r = p.rl
    return rl_loop.LoopConfig(
        steps=r.steps,
        q=r.q,
        budget_per_step=r.budget_per_step,
        lo=r.lo,
        hi=r.hi,
        lr=r.lr,
        beta=r.beta,
        max_new=r.max_new,
        eval_k=r.eval_k,
        n_evals=r.n_evals,
        dapo_max_rounds=r.dapo_max_rounds,
        grad_repeats=r.grad_repeats,
        gp={"window": r.gp_window, "amplitude": r.gp_amplitude, "inference": r.gp_inference},
        shadow=tuple(
            (k, f)
            for k, f in (("gp", "minilm"), ("gp", "hashed"), ("beta", "minilm"), ("global", "minilm"))
            if k != "gp" or f in p.data.features
        ),
    )


@dataclass(frozen=True)
class RunJob:
    """One (method, seed) run of the grid: the method (``model_dump``), the loop's config (``LoopConfig`` fields),
    the data rows and the SFT model and features it starts from."""

    name: str
    method: dict
    seed: int
    cfg: dict
    train: list[dict]
    heldout: list[dict]
    sft: str
    features: str
    threads: int


@dataclass
class RunResult:
    """What one run returns: its curves, step records, held-out predictions and gradient variance, and ``folder``,
    the trained policy in its job folder."""

    method: str
    seed: int
    curve: list[dict]
    steps: list[dict]
    predictions: list[dict]
    grad_var: float
    updates: int
    folder: str

    @property
    def name(self) -> str:
        return f"{self.method}-seed{self.seed}"


def run_one(job: RunJob, job_dir: Path) -> RunResult:
    """One (method, seed) run (module level: process runners pickle it); writes its model folder
    ``job_dir/model``, returned as ``folder``."""
    set_threads(job.threads)
    policy, codec, tokenizer = load_policy(job.sft)  # the SFT TinyLM, or the full profile's HF base model
    feats = load_npz(job.features)
    res = rl_loop.run(
        policy,
        Method(job.name, **job.method),
        rl_loop.LoopConfig(**job.cfg),
        job.train,
        feats,
        job.heldout,
        job.seed,
        codec=codec,
    )
    save_policy(res.pop("model"), job_dir / "model", tokenizer)
    return RunResult(**res, folder=str(job_dir / "model"))


def _log(ctx, res: RunResult, model_dir) -> str | None:
    """The run's MLflow child run (curves, step metrics, the policy folder); its run id (None untracked)."""
    if ctx.tracker is None:
        return None
    from components.vip.task import VOCAB

    sig = signature(TOKEN_IDS, Tensor("logits", "float32", (-1, -1, VOCAB)))
    with ctx.tracker.child(
        res.name, {"method": ctx.params.rl.methods[res.method].model_dump(), "seed": res.seed}
    ) as rid:
        for c in res.curve:
            ctx.tracker.log_metrics(
                {k.replace("@", "_at_"): v for k, v in c.items() if k.startswith(("mean@", "pass@"))},
                step=c["rollouts"],
                run_id=rid,
            )
        for s in res.steps:
            ctx.tracker.log_metrics(
                {"zero_var_frac": s["zero_var_frac"], "train_reward": s["reward"]}, step=s["step"], run_id=rid
            )
        ctx.tracker.log_metrics({"grad_var": res.grad_var, "updates": res.updates}, run_id=rid)
        if is_tiny(model_dir):
            ctx.tracker.log_state_dict_model(rid, model_dir, loader=LM_LOADER, signature=sig)
        else:  # a HF policy (full profile): its save_pretrained folder, loadable with transformers
            ctx.tracker.log_artifact(model_dir, artifact_path="model", run_id=rid)
    return rid


# a prompt of train.jsonl / heldout.jsonl as the RL loop reads it
TASK_FIELDS = {"id": str, "tier": str, "prompt": str, "target": str}


def check_inputs(sft: Path, features: Path, n_train: int) -> None:
    """Before any run starts: the SFT policy folder loads, and every feature matrix of ``features.npz`` is finite
    with one row per training prompt (a corrupt file is one DataError naming it, not one per worker)."""
    load_policy(sft)
    feats = load_npz(features, finite=True)
    for name, arr in feats.items():
        check_array(arr, features, name, ndim=2, rows=n_train)


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    out = ctx.output_dir(RUNS)
    train = read_jsonl(ctx.input(f"{DATA}/train.jsonl"), TASK_FIELDS, unique="id")
    held = read_jsonl(ctx.input(f"{DATA}/heldout.jsonl"), TASK_FIELDS, unique="id")
    check_inputs(ctx.input(f"{SFT}/model"), ctx.input(f"{DATA}/features.npz"), len(train))
    cfg = dataclasses.asdict(loop_config(p))
    jobs = [
        RunJob(
            name=name,
            method=m.model_dump(),
            seed=s,
            cfg=cfg,
            train=train,
            heldout=held,
            sft=str(ctx.input(f"{SFT}/model")),
            features=str(ctx.input(f"{DATA}/features.npz")),
            threads=p.resources.threads,
        )
        for s in p.rl.seeds
        for name, m in p.rl.methods.items()
    ]
    results = run_grid(
        ctx,
        run_one,
        jobs,
        desc="vip runs",
        workers=p.resources.workers,
        files=True,
        progress=p.progress,
        result=RunResult,
    )
    curves, steps, preds, summary, run_ids = [], [], [], [], {}
    for res in results:
        model_dir = publish(res.folder, out / "models" / res.name)
        key = {"method": res.method, "seed": res.seed}
        curves += [{**key, **c} for c in res.curve]
        steps += [{**key, **s} for s in res.steps]
        preds += [{**key, **r} for r in res.predictions]
        summary.append(
            {
                **key,
                "grad_var": res.grad_var,
                "updates": res.updates,
                "final_mean_at_k": res.curve[-1]["mean@k"],
            }
        )
        run_ids[(res.method, res.seed)] = _log(ctx, res, model_dir)
    write_jsonl(out / "curves.jsonl", curves)
    write_jsonl(out / "steps.jsonl", steps)
    write_jsonl(out / "predictions.jsonl", preds)
    write_json(out / "summary.json", summary)
    method, seed = champion.choose(p)  # VIP's policy of the first seed, re-evaluated as the final evaluation does
    name = f"{method}-seed{seed}"
    return {
        "runs": len(results),
        "final_mean_at_k": {f"{r['method']}-{r['seed']}": round(r["final_mean_at_k"], 4) for r in summary},
        "champion": (
            champion.candidate(p, run_ids.get((method, seed)), name, out / "models" / name, ctx.paths.root, seed)
            if is_tiny(out / "models" / name)
            else None
        ),
    }  # a HF policy has no champion evaluator
