"""Stage ``train``: per seed (one grid job each), the SFT policy (the RFT stand-in), the two PRMs on the same
backbone and data, their step-score accuracy on held-out steps, and the RL arms from the same SFT policy with
the same budget: outcome-scalar GRPO, GRPO with the score-only PRM's process rewards, and CDRA (Pers-GenPRM's
process rewards). Held-out pairs are judged exactly; every model is saved and logged."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from components.cdra import cdpa as C
from components.cdra import prm as P
from components.cdra import task as T
from components.data import validate as V
from components.errors import DataError
from components.io import read_jsonl, write_json, write_jsonl
from components.models.tiny_lm import save_model
from components.training.qa_lm import train_lm
from components.training.threads import set_threads
from flows.cdra import champion
from flows.cdra.params import Params
from flows.cdra.spec import DATA, RUNS
from flows.runtime.grid import publish, run_grid
from flows.runtime.stages import StageContext
from flows.runtime.tracking import LM_LOADER, NEXT_TOKEN, TOKEN_IDS

log = logging.getLogger(__name__)
RL_ARMS = ("grpo_outcome", "prm_score_only", "cdra")


@dataclass(frozen=True)
class SeedJob:
    seed: int
    params: dict
    train: list[dict]
    heldout: list[dict]
    threads: int


@dataclass
class SeedResult:
    seed: int
    eval_rows: list[dict]  # one per (arm, held-out pair)
    prm_rows: list[dict]  # one per held-out step
    step_rows: list[dict]  # one per (arm, RL step)
    curve_rows: list[dict]  # held-out evaluations during RL
    info: dict


def _train_prm(items, pp: dict, seed: int):
    model = P.new_backbone(pp["d_model"], pp["n_layers"], seed)
    losses = train_lm(model, items, steps=pp["steps"], batch_size=pp["batch_size"], lr=pp["lr"], seed=seed)
    return model, losses


def train_seed(job: SeedJob, job_dir: Path) -> SeedResult:
    """Everything one seed trains (module level: process runners pickle it)."""
    set_threads(job.threads)
    torch.manual_seed(job.seed)
    p, s = job.params, job.seed
    train = [T.pair_of(r) for r in job.train]
    held = [T.pair_of(r) for r in job.heldout]
    rng = np.random.default_rng(s)
    order = rng.permutation(len(train))
    pol = p["policy"]
    sft_pairs = [train[i] for i in order[: pol["n_sft"]]]
    t0 = time.process_time()
    policy, sft_losses = C.sft_policy(
        sft_pairs,
        noise=pol["noise"],
        d_model=pol["d_model"],
        n_layers=pol["n_layers"],
        steps=pol["sft_steps"],
        batch=pol["batch_size"],
        lr=pol["lr"],
        seed=s,
    )
    save_model(policy, job_dir / "sft")
    # PRM data: two sampled responses of the SFT policy per training pair (the errors it really makes), labelled
    # by the rule critic; held-out steps: one response per held-out pair, never trained on.
    pp = p["prm"]
    prm_pairs = [train[i] for i in order[: pp["n_responses"]]]
    q_train = C.policy_steps(policy, prm_pairs, seed=s + 100, k=2)
    q_held = C.policy_steps(policy, held, seed=s + 200, k=1)
    prms, prm_info = {}, {}
    for kind in P.KINDS:
        model, losses = _train_prm(P.sft_items(q_train, kind), pp, s + 7)
        save_model(model, job_dir / kind)
        prms[kind] = model
        prm_info[kind] = {"final_loss": float(np.mean(losses[-20:]))}
    gold = P.rule_scores(q_held)
    pred = {kind: P.prm_scores(prms[kind], q_held) for kind in P.KINDS}
    prm_rows = [
        {"seed": s, "i": i, "step": q.step, "pair": q.pair.id, "gold": g, **{k: pred[k][i] for k in P.KINDS}}
        for i, (q, g) in enumerate(zip(q_held, gold))
    ]
    rl = p["rl"]
    cfg = C.ArmConfig(
        steps=rl["steps"],
        prompts_per_step=rl["prompts_per_step"],
        group_size=rl["group_size"],
        lr=rl["lr"],
        beta=rl["beta"],
    )
    scorers = {"prm_score_only": P.model_scorer(prms["score_only"]), "cdra": P.model_scorer(prms["genprm"])}
    eval_rows = [{"seed": s, "arm": "sft", **r} for r in C.evaluate(policy, held)]
    step_rows, curve_rows, seconds = [], [], {}
    for arm in RL_ARMS:
        model, hist = C.rl_train(
            policy, train, arm, cfg, seed=s + 1, scorer=scorers.get(arm), eval_pairs=held, eval_every=rl["eval_every"]
        )
        save_model(model, job_dir / arm)
        eval_rows += [{"seed": s, "arm": arm, **r} for r in C.evaluate(model, held)]
        step_rows += [
            {
                "seed": s,
                "arm": arm,
                "step": i,
                "reward": hist.reward[i],
                "kl": hist.kl[i],
                "zero_process": hist.zero_spread_process[i],
                "zero_outcome": hist.zero_spread_outcome[i],
            }
            for i in range(len(hist.reward))
        ]
        curve_rows += [{"seed": s, "arm": arm, **c} for c in hist.curve]
        seconds[arm] = hist.seconds
    info = {
        "seed": s,
        "sft_final_loss": float(np.mean(sft_losses[-20:])),
        "prm": prm_info,
        "prm_train_steps": len(q_train),
        "rl_seconds": seconds,
        "cpu_seconds": time.process_time() - t0,
        "job_dir": str(job_dir),
    }
    return SeedResult(s, eval_rows, prm_rows, step_rows, curve_rows, info)


def _log(ctx: StageContext[Params], results: list[SeedResult], out: Path) -> dict:
    """One MLflow child run per trained model (policy, PRMs, arms) with its held-out metrics; their run ids."""
    ids = {}
    for r in results:
        for name in ("sft", *P.KINDS, *RL_ARMS):
            folder = out / "models" / str(r.seed) / name
            if not folder.is_dir():
                continue
            metrics = {}
            arm_rows = [e for e in r.eval_rows if e["arm"] == name]
            if arm_rows:
                metrics = {f"heldout_{k}": v for k, v in C.summary(arm_rows).items()}
            elif name in P.KINDS:
                metrics = {"step_accuracy": float(np.mean([row[name] == row["gold"] for row in r.prm_rows]))}
            ids[(name, r.seed)] = ctx.log_model(
                f"{name}-seed{r.seed}",
                {"model": name, "seed": r.seed},
                folder,
                loader=LM_LOADER,
                inputs=TOKEN_IDS,
                outputs=NEXT_TOKEN,
                metrics=metrics,
            )
    return ids


def output_checks(name: str, p: Params, heldout_ids: list[str]) -> list[V.Expect]:
    """GX suites of the stage's tables: every (seed, arm) judged on every held-out pair, PRM scores in {-1, 0, 1}
    on held-out pairs only, finite RL statistics, each arm's steps as configured."""
    arms = ("sft", *RL_ARMS)
    seeds = V.in_set("seed", p.data.seeds)
    if name == "eval":
        n = len(p.data.seeds) * len(arms) * len(heldout_ids)
        judged = [V.in_set(k, [True, False]) for k in C.METRICS]
        return [V.row_count_between(n, n), seeds, V.in_set("arm", arms), V.in_set("id", heldout_ids), *judged]
    if name == "prm_steps":
        scores = [V.in_set(k, [-1, 0, 1]) for k in ("gold", *P.KINDS)]
        return [V.row_count_between(1, None), seeds, V.in_set("pair", heldout_ids), *scores]
    n = len(p.data.seeds) * len(RL_ARMS) * p.rl.steps
    stats = [V.finite(k) for k in ("reward", "kl", "zero_process", "zero_outcome")]
    spread = [V.between(k, 0, 1) for k in ("zero_process", "zero_outcome")]
    return [V.row_count_between(n, n), seeds, V.in_set("arm", RL_ARMS), *stats, *spread]


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    train = read_jsonl(ctx.input(f"{DATA}/train.jsonl"))
    held = read_jsonl(ctx.input(f"{DATA}/heldout.jsonl"))
    if not train or not held:
        raise DataError(f"{DATA}: the train or held-out pairs are empty; rerun the data stage")
    params = {"policy": p.policy.model_dump(), "prm": p.prm.model_dump(), "rl": p.rl.model_dump()}
    jobs = [SeedJob(s, params, train, held, p.resources.threads) for s in p.data.seeds]
    results = run_grid(
        ctx,
        train_seed,
        jobs,
        desc="cdra seeds",
        workers=p.resources.workers,
        files=True,
        progress=p.progress,
        result=SeedResult,
    )
    out = ctx.output_dir(RUNS)
    tables = {
        "eval": [r for res in results for r in res.eval_rows],
        "prm_steps": [r for res in results for r in res.prm_rows],
        "rl_steps": [r for res in results for r in res.step_rows],
    }
    for name, rows in tables.items():  # before anything is published: a failing table leaves no half-written run
        suite = output_checks(name, p, [h["id"] for h in held])
        V.validate(rows, suite, name=f"cdra {name}", result_path=out / "_checks" / f"{name}.json")
    for res in results:
        publish(res.info.pop("job_dir"), out / "models" / str(res.seed))
    for name, rows in tables.items():
        write_jsonl(out / f"{name}.jsonl", rows)
    write_jsonl(out / "curves.jsonl", [r for res in results for r in res.curve_rows])
    write_json(out / "info.json", {"seeds": [res.info for res in results]})
    run_ids = _log(ctx, results, out)
    arm, seed = champion.choose(p)  # CDRA's policy of the first seed, re-evaluated as the final evaluation does
    folder = out / "models" / str(seed) / arm
    return {
        "seeds": len(results),
        "eval_rows": sum(len(r.eval_rows) for r in results),
        "champion": champion.candidate(p, run_ids.get((arm, seed)), folder, ctx.paths.root),
    }
