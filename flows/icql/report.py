"""Stage ``report``: claims 1-4, scores with CIs per method and task, Q quality, retrieval ablation.

External datasets (``data.external``) add one score table (method x dataset), no claims.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from components.evaluation.seed_ci import paired_bootstrap_ci
from components.inputs import check_array, load_npz
from components.io import read_json, read_json_records, read_jsonl
from components.reporting import Section
from components.reporting.plots import errorbar_plot, line_plot
from components.training.curves import plateau
from flows.icql.claims import CLAIMS, all_claims
from flows.icql.common import read_runs
from flows.icql.params import Params
from flows.icql.report_external import external_outputs
from flows.icql.spec import DATASETS, EVAL, MODELS
from flows.runtime.report_stage import finish_report, power_section
from flows.runtime.stages import StageContext

VERSIONS = (
    "Paper-scale reference (secondary, unverified): the user's abstract says ICQL improves Kitchen by up to "
    "29.46% and Gym/Adroit by up to 6%; the arXiv v1 abstract and the ICLR camera-ready listing say 16.4% "
    "on Kitchen, 8.6% / 8.8% on MuJoCo and 6.3% on Adroit. D4RL means (5 seeds): MuJoCo ICQL 80.6 vs CQL "
    "74.0 / IQL 72.4; Adroit 35.3 vs IQL 33.2; Kitchen 66.8 vs DT 55.8 / IQL 52.8; retrieval ablation on "
    "kitchen-complete: random 70.0 vs state-similar 79.3."
)


PLATEAU_WINDOW = 0.2  # share of the curve points in each of the two windows compared
EPISODE_FIELDS = {"run": str, "method": str, "task": int, "seed": int, "episode": int, "subtasks": int, "score": float}


def read_q(path) -> dict:
    """The evaluate stage's Q-value file: 1-D finite arrays (rows, G, episode and one per run), one length."""
    qdata = load_npz(path, keys=("rows", "G", "episode"))
    for name, arr in qdata.items():
        check_array(arr, path, name, ndim=1, rows=len(qdata["G"]), finite=True)
    return qdata


PLATEAU_POINTS = 5.0  # plateaued: |mean dev score, last window - previous window| <= this many score points


def learning_curves(models, runs_meta: list[dict]) -> tuple[dict, list[dict]]:
    """Dev-score curves, mean over seeds, per (task, method), and the plateau check of each.

    Plateau check on the curve (mean over seeds): the change of the mean dev score between the last two
    ``PLATEAU_WINDOW`` shares of the curve points, in score points (plateaued if within ``PLATEAU_POINTS``), and
    ``curves.plateau`` (relative change) of the critic's TD loss (``q_loss``) or, without a critic, the actor loss.
    """
    groups: dict = defaultdict(list)
    for r in runs_meta:
        groups[(r["task"], r["method"])].append(read_json_records(models / r["name"] / "history.json", {"step": int}))
    series, rows = {}, []
    for (task, method), hists in sorted(groups.items()):
        n = min(len(h) for h in hists)
        steps = [h["step"] for h in hists[0][:n]]
        dev = [
            float(np.mean([h[i]["dev_score"] for h in hists])) if "dev_score" in hists[0][i] else np.nan
            for i in range(n)
        ]
        loss_key = "q_loss" if "q_loss" in hists[0][-1] else "actor_loss"
        loss = [
            float(np.mean([h[i][loss_key] for h in hists if loss_key in h[i]]))
            for i in range(n)
            if all(loss_key in h[i] for h in hists)
        ]
        w = max(1, int(n * PLATEAU_WINDOW))
        row = {
            "task": f"{task} subtask(s)",
            "method": method,
            "steps": steps[-1] if steps else 0,
            "dev score, last window": None,
            "change (points)": None,
            "plateaued": None,
            "loss": loss_key,
            "loss plateau (relative)": plateau(loss, PLATEAU_WINDOW),
        }
        if n >= 2 * w and not np.isnan(dev).any():
            last, prev = float(np.mean(dev[-w:])), float(np.mean(dev[-2 * w : -w]))
            row.update(
                {
                    "dev score, last window": last,
                    "change (points)": last - prev,
                    "plateaued": bool(abs(last - prev) <= PLATEAU_POINTS),
                }
            )
            series[f"{method} (t{task})"] = (steps, dev)
        rows.append(row)
    return series, rows


def score_table(p, episodes: list[dict], runs: list[dict]) -> list[dict]:
    """Mean normalised score per (task, method) with a two-stage bootstrap CI (seeds, then episodes)."""
    groups: dict = defaultdict(list)
    for e in episodes:
        groups[(e["task"], e["method"])].append(e)
    q: dict = defaultdict(list)
    for r in runs:
        if "q_spearman" in r:
            q[(r["task"], r["method"])].append((r["q_spearman"], r["q_mae"]))
    rows = []
    for (task, method), es in sorted(groups.items()):
        vals = [e["score"] for e in es]
        pt, lo, hi = paired_bootstrap_ci(
            vals, clusters=[e["seed"] for e in es], n_resamples=p.claims.n_resamples, level=p.claims.level, seed=p.seed
        )
        qs = q.get((task, method))
        rows.append(
            {
                "task": f"{task} subtask(s)",
                "method": method,
                "score": pt,
                "ci_low": lo,
                "ci_high": hi,
                "subtasks done": float(np.mean([e["subtasks"] for e in es])),
                "episodes": len(es),
                "spearman(Q, G)": float(np.mean([a for a, _ in qs])) if qs else None,
                "mean |Q - G|": float(np.mean([b for _, b in qs])) if qs else None,
            }
        )
    return rows


def sections(p, rows: list[dict], runs_meta: list[dict], data_meta: dict, claims, curves=({}, [])) -> list[Section]:
    names = [f"{r['method']} ({r['task']})" for r in rows]
    fig = errorbar_plot(
        names,
        [r["score"] for r in rows],
        [r["ci_low"] for r in rows],
        [r["ci_high"] for r in rows],
        xlabel="normalised score (0 = random, 100 = scripted expert)",
        title="kitchen-lite: normalised score, 95% CI",
        reference=0.0,
    )
    abl = [r for r in rows if r["method"].startswith("icql")]
    speed: dict = defaultdict(list)
    for r in runs_meta:
        speed[r["method"]].append(r["steps_per_s"])
    return [
        Section(
            "Normalised scores",
            f"Mean over {len(p.train.seeds)} seed(s) x {p.eval.episodes} evaluation "
            "episodes; CI: two-stage bootstrap (seeds with replacement, then episodes within each drawn seed; with "
            "one seed it covers episodes of that one trained model only). Policies act without retrieval.",
            figures=[("scores", fig, "normalised score per method and task")],
            tables=[
                [
                    {k: r[k] for k in ("task", "method", "score", "ci_low", "ci_high", "subtasks done", "episodes")}
                    for r in rows
                ]
            ],
        ),
        Section(
            "Q quality",
            f"Spearman and mean absolute error of Q-hat against discounted Monte-Carlo returns G on "
            f"{p.eval.q_episodes} dataset trajectories (mean over seeds; BC has no critic).",
            tables=[
                [
                    {k: r[k] for k in ("task", "method", "spearman(Q, G)", "mean |Q - G|")}
                    for r in rows
                    if r["spearman(Q, G)"] is not None
                ]
            ],
        ),
        Section(
            "Learning curves and plateau check",
            f"Dev score (mean normalised score of {p.train.dev_episodes} rollouts from reset seeds "
            f"{p.train.dev_seed}.., disjoint from the test seeds) "
            f"every {max(1, p.train.steps // p.train.curve_points)} "
            f"of {p.train.steps} steps (batch {p.train.batch_size}), mean over seeds. Plateaued: the mean dev score "
            f"of the last {PLATEAU_WINDOW:.0%} of the curve is within {PLATEAU_POINTS:g} points of the previous "
            f"{PLATEAU_WINDOW:.0%}'s; the loss column is `curves.plateau` (relative change of the mean loss).",
            figures=[
                (
                    "learning_curves",
                    line_plot(
                        curves[0],
                        xlabel="gradient step",
                        ylabel="dev score",
                        title="kitchen-lite learning curves (mean over seeds)",
                    ),
                    "dev normalised score during training",
                )
            ]
            if curves[0]
            else [],
            tables=[curves[1]] if curves[1] else [],
        ),
        power_section(
            claims,
            p.claims.power_resamples,
            units="episodes",
            note="C4 (a Spearman difference over trajectories) carries none.",
        ),
        Section(
            "Retrieval ablation",
            f"ICQL with the k = {p.retrieval.k} nearest dataset states vs k random "
            "dataset transitions as context (claim C3).",
            tables=[abl] if abl else [],
        ),
        Section(
            "Datasets and references",
            "Behaviour return = mean episode return of the scripted mixed data; "
            "random / expert = the normalised score's anchors.",
            tables=[
                [
                    {
                        "task": k,
                        "transitions": m["transitions"],
                        "behaviour return": m["behaviour_return"],
                        "random": m["references"]["random"],
                        "expert": m["references"]["expert"],
                    }
                    for k, m in data_meta.items()
                ]
            ],
        ),
        Section(
            "Training speed",
            "Gradient steps per second per method (mean over runs; shared CPU).",
            tables=[[{"method": m, "steps/s": float(np.mean(v))} for m, v in speed.items()]],
        ),
        Section("Paper-scale reference", VERSIONS),
    ]


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    ev = ctx.input(EVAL)
    episodes = read_jsonl(ev / "episodes.jsonl", EPISODE_FIELDS)
    runs = read_jsonl(ev / "runs.jsonl", {"run": str, "task": int, "method": str}, unique="run")
    qfile = ev / "q_t4.npz"
    qdata = read_q(qfile) if qfile.exists() else None
    claims = all_claims(p, episodes, qdata)
    rows = score_table(p, episodes, runs)
    runs_meta = read_runs(ctx.input(MODELS))
    curves = learning_curves(ctx.input(MODELS), runs_meta)
    data_meta = read_json(ctx.input(DATASETS) / "summary.json", kind=dict)
    metrics = {
        "scores": {f"t{r['task'].split()[0]}/{r['method']}": r["score"] for r in rows},
        "plateau": {
            f"t{r['task'].split()[0]}/{r['method']}": {"change": r["change (points)"], "plateaued": r["plateaued"]}
            for r in curves[1]
        },
        "q_spearman": {
            f"t{r['task'].split()[0]}/{r['method']}": r["spearman(Q, G)"]
            for r in rows
            if r["spearman(Q, G)"] is not None
        },
    }
    ext_sections, ext_metrics = external_outputs(p, ev, ctx.input(DATASETS))
    metrics.update(ext_metrics)
    secs = sections(p, rows, runs_meta, data_meta, claims, curves)
    plot_rows = [{**r, "group": f"t{r['task'].split()[0]}/{r['method']}"} for r in rows]
    return finish_report(
        ctx,
        CLAIMS,
        claims,
        metrics=metrics,
        sections=secs[:-1] + ext_sections + secs[-1:],
        plots={"scores.csv": (plot_rows, ["group", "score", "ci_low", "ci_high"])},
    )
