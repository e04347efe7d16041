"""Stage ``report``: claims 1-4, accuracy against cumulative rollouts per method (mean over seeds with a 95%
band across seeds), allocation histograms, the SFT competence table and the secondary metrics."""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from components.io import read_json, read_json_records, read_jsonl
from components.reporting import Section
from components.reporting.plots import new_figure
from flows.runtime.report_stage import finish_report, power_section
from flows.runtime.stages import StageContext
from flows.vip import claims as K
from flows.vip.params import Params
from flows.vip.spec import RUNS, SFT


def _band(vals: np.ndarray) -> tuple[float, float, float]:
    m = float(np.mean(vals))
    if len(vals) < 2:
        return m, m, m
    half = 1.96 * float(np.std(vals, ddof=1)) / np.sqrt(len(vals))
    return m, m - half, m + half


def accuracy_rows(curves, methods, seeds):
    rows = []
    for name in methods:
        pts = sorted({c["rollouts"] for c in curves if c["method"] == name})
        for x in pts:
            v = np.array([c["mean@k"] for c in curves if c["method"] == name and c["rollouts"] == x])
            if len(v) == len(seeds):
                m, lo, hi = _band(v)
                rows.append({"method": name, "rollouts": x, "mean_at_k": m, "lo": lo, "hi": hi})
    return rows


def accuracy_figure(rows):
    fig = new_figure()
    ax = fig.add_subplot(1, 1, 1)
    for name in dict.fromkeys(r["method"] for r in rows):
        rs = [r for r in rows if r["method"] == name]
        x = [r["rollouts"] for r in rs]
        ax.plot(x, [r["mean_at_k"] for r in rs], marker="o", label=name)
        ax.fill_between(x, [r["lo"] for r in rs], [r["hi"] for r in rs], alpha=0.2)
    ax.set_xlabel("cumulative rollouts")
    ax.set_ylabel("held-out mean@k")
    ax.set_title("Accuracy against rollouts (band: 95% across seeds)")
    ax.legend()
    return fig


def allocation_rows(steps, methods):
    rows = []
    for name in methods:
        sizes = [n for s in steps if s["method"] == name for n in s["sizes"]]
        for n, c in zip(*np.unique(sizes, return_counts=True)):
            rows.append({"method": name, "n": int(n), "count": int(c)})
    return rows


def allocation_figure(rows):
    names = list(dict.fromkeys(r["method"] for r in rows))
    fig = new_figure(6.4, 2.2 * len(names))
    for i, name in enumerate(names):
        ax = fig.add_subplot(len(names), 1, i + 1)
        rs = [r for r in rows if r["method"] == name]
        ax.bar([r["n"] for r in rs], [r["count"] for r in rs])
        ax.set_title(f"{name}: rollouts per prompt")
        ax.set_ylabel("prompt visits")
    ax.set_xlabel("group size n_i")
    return fig


def method_metrics(curves, steps, summary, methods, k):
    out = []
    for name in methods:
        last = [
            max((c for c in curves if c["method"] == name and c["seed"] == s["seed"]), key=lambda c: c["rollouts"])
            for s in summary
            if s["method"] == name
        ]
        st = [s for s in steps if s["method"] == name]
        out.append(
            {
                "method": name,
                **{
                    key: float(np.mean([c[key] for c in last])) for key in last[0] if key.startswith(("mean@", "pass@"))
                },
                "zero_var_frac": float(np.mean([s["zero_var_frac"] for s in st])),
                "grad_var": float(np.mean([s["grad_var"] for s in summary if s["method"] == name])),
                "updates": float(np.mean([s["updates"] for s in summary if s["method"] == name])),
            }
        )
    return out


def predictor_metrics(preds, max_seen):
    rows = [r for r in preds if r["method"] == "vip" and r["seen_before"] <= max_seen]
    keys = sorted(k for k in (rows[0] if rows else {}) if k.startswith("p_"))
    obs = np.array([r["observed"] for r in rows])
    out = []
    for key in keys:
        ph = np.array([r[key] for r in rows])
        rho = spearmanr(ph, obs).statistic if np.ptp(ph) > 0 else float("nan")
        out.append(
            {
                "predictor": key[2:],
                "spearman": float(rho),
                "brier": float(np.mean((ph - obs) ** 2)),
                "visits": len(rows),
            }
        )
    return out


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    run = {"method": str, "seed": int}
    curves = read_jsonl(ctx.input(f"{RUNS}/curves.jsonl"), {**run, "rollouts": int, "mean@k": float})
    steps = read_jsonl(ctx.input(f"{RUNS}/steps.jsonl"), {**run, "step": int, "zero_var_frac": float})
    preds = read_jsonl(
        ctx.input(f"{RUNS}/predictions.jsonl"), {**run, "prompt": int, "seen_before": int, "n": int, "observed": float}
    )
    summary = read_json_records(ctx.input(f"{RUNS}/summary.json"), run)
    sft = read_json(ctx.input(f"{SFT}/sft.json"), {"competence": dict})
    seeds, methods, k = list(p.rl.seeds), list(p.rl.methods), p.rl.eval_k
    budget = p.rl.steps * p.rl.budget_per_step
    results = [K.claim1(p, curves, seeds, k), K.claim2(p, steps, seeds), K.claim3(p, preds, seeds)]
    if "dapo" in methods:
        results.append(K.claim4(p, curves, seeds, budget))
    else:
        results.append(
            K.C4.from_ci(
                effect=None,
                ci_low=None,
                ci_high=None,
                n_units=0,
                n_seeds=len(seeds),
                delta=p.claims.delta_rollouts,
                details={"reason": "dapo is not among this profile's methods"},
            )
        )
    acc = accuracy_rows(curves, methods, seeds)
    alloc = allocation_rows(steps, methods)
    mm = method_metrics(curves, steps, summary, methods, k)
    pm = predictor_metrics(preds, p.claims.max_seen)
    comp = sft["competence"]
    sft_table = [{"tier": t, "success": v} for t, v in comp["per_tier"].items()] + [
        {"tier": "overall", "success": comp["overall"]}
    ]
    sections = [
        Section(
            "SFT policy",
            f"Held-out success of the SFT policy ({k} samples per prompt): overall "
            f"{comp['overall']:.3f} (card's target 0.30-0.60), spread across tiers {comp['tier_spread']:.3f}.",
            tables=[sft_table],
        ),
        Section(
            "Accuracy against rollouts",
            f"Every method spends the same budget of {budget} rollouts per seed.",
            figures=[("accuracy", accuracy_figure(acc), "held-out mean@k against cumulative rollouts")],
            tables=[mm],
        ),
        Section(
            "Allocations",
            "Group sizes chosen per prompt visit over all steps and seeds.",
            figures=[("allocation", allocation_figure(alloc), "histogram of n_i per method")],
        ),
        Section(
            "Predictors",
            f"Prompt visits in the VIP runs with at most {p.claims.max_seen} earlier visits: "
            "Spearman and Brier of each predictor's p against the observed success share.",
            tables=[pm],
        ),
        power_section(
            results,
            p.claims.power_resamples,
            units="held-out prompts (C1) or steps (C2)",
            note="C3 (a Spearman CI and a Brier difference) and C4 (censored crossings per seed) carry none.",
        ),
    ]
    metrics = {
        "sft": {"overall": comp["overall"], "tier_spread": comp["tier_spread"]},
        "methods": {r["method"]: {kk: v for kk, v in r.items() if kk != "method"} for r in mm},
        "predictors": {r["predictor"]: {"spearman": r["spearman"], "brier": r["brier"]} for r in pm},
    }
    return finish_report(
        ctx,
        K.CLAIMS,
        results,
        metrics=metrics,
        sections=sections,
        plots={
            "accuracy.csv": (acc, ["method", "rollouts", "mean_at_k", "lo", "hi"]),
            "allocation.csv": (alloc, ["method", "n", "count"]),
        },
    )
