"""Stage ``report``: claims 1-4, accuracy against label fraction per method (95% CIs: seeds, then test images),
ERF maps per method at the low and high fractions, the results table and the sweep."""

from __future__ import annotations

import numpy as np

from components.evaluation.seed_ci import paired_bootstrap_ci
from components.inputs import load_npz
from components.io import read_jsonl
from components.reporting import Section
from components.reporting.plots import PALETTE, new_figure
from flows.dka.claims import CLAIMS, claim1, claim2, claim3, claim4, index_runs, table
from flows.dka.params import Params
from flows.dka.spec import ADAPT
from flows.runtime.report_stage import finish_report
from flows.runtime.stages import StageContext


def accuracy_curve(p, runs):
    """Per (method, fraction): mean accuracy and its CI from the two-stage bootstrap of per-item correctness."""
    rows = []
    for m in p.adapt.methods:
        for r in p.adapt.regimes:
            rs = [x for x in runs if x["method"] == m and x["fraction"] == r.fraction]
            if not rs:
                continue
            vals = [v for x in rs for v in x["correct"]]
            labs = [x["seed"] for x in rs for _ in x["correct"]]
            pt, lo, hi = paired_bootstrap_ci(
                vals,
                clusters=labs if len(rs) > 1 else None,
                seed=7,
                n_resamples=min(2000, p.claims.n_resamples),
                level=p.claims.level,
            )
            rows.append({"method": m, "fraction": r.fraction, "acc": pt, "ci_low": lo, "ci_high": hi, "seeds": len(rs)})
    fig = new_figure(6.8, 4.2)
    ax = fig.add_subplot()
    for i, m in enumerate(p.adapt.methods):
        pts = [x for x in rows if x["method"] == m]
        if not pts:
            continue
        xs = np.array([x["fraction"] for x in pts]) * (1 + 0.03 * (i - 4))  # dodge
        ys = np.array([x["acc"] for x in pts])
        err = np.array([[x["acc"] - x["ci_low"] for x in pts], [x["ci_high"] - x["acc"] for x in pts]])
        ax.errorbar(
            xs, ys, yerr=np.clip(err, 0, None), fmt="o-", capsize=3, color=PALETTE[i % 10], label=m, markersize=4
        )
    ax.set_xscale("log")
    ax.set_xlabel("label fraction of the training pool")
    ax.set_ylabel("test accuracy")
    ax.axhline(0.25, color="#888", linestyle=":", linewidth=0.8)
    ax.set_title("Accuracy vs label fraction (95% CI over seeds, then images)")
    ax.legend(fontsize=7, ncol=2)
    return fig, rows


def erf_figure(p, maps, runs):
    lo, hi = p.claims.low_fraction, p.claims.high_fraction
    panels = [
        (m, f) for f in (lo, hi) for m in p.adapt.methods if any(r["method"] == m and r["fraction"] == f for r in runs)
    ]
    cols = min(5, len(panels))
    rows = -(-len(panels) // cols)
    fig = new_figure(2.0 * cols, 2.1 * rows)
    for i, (m, f) in enumerate(panels):
        ax = fig.add_subplot(rows, cols, i + 1)
        ms = [maps[k] for k in maps.files if k.startswith(f"{m}|{f:g}|")]
        ax.imshow(np.mean(ms, 0), cmap="magma", vmin=0, vmax=1)
        ax.set_title(f"{m} @ {f:g}", fontsize=8)
        ax.axis("off")
    return fig


def loss_figure(p, runs):
    """Training-loss curves of every run (one panel per fraction, one colour per method; thin line per seed)."""
    fracs = [r.fraction for r in p.adapt.regimes]
    fig = new_figure(3.2 * len(fracs), 3.0)
    for j, f in enumerate(fracs):
        ax = fig.add_subplot(1, len(fracs), j + 1)
        for i, m in enumerate(p.adapt.methods):
            rs = [x for x in runs if x["method"] == m and x["fraction"] == f]
            for k, x in enumerate(rs):
                every = max(1, x["steps"] // 50)
                ax.plot(
                    np.arange(len(x["losses"])) * every,
                    x["losses"],
                    color=PALETTE[i % 10],
                    linewidth=0.7,
                    alpha=0.7,
                    label=m if k == 0 else None,
                )
        ax.set_title(f"fraction {f:g}", fontsize=9)
        ax.set_xlabel("step")
        if j == 0:
            ax.set_ylabel("training loss")
            ax.legend(fontsize=6, ncol=2)
    return fig


def learnability(tab, chance: float) -> list[dict]:
    """Is the task learnable at this scale? Mean test accuracy per method at each fraction against chance."""
    return [
        {
            "fraction": r["fraction"],
            "method": r["method"],
            "acc": r["acc"],
            "minus chance": r["acc"] - chance,
            "plateau (rel. change of the last 20% of the loss)": r["plateau"],
        }
        for r in tab
    ]


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    runs = read_jsonl(ctx.input(f"{ADAPT}/runs.jsonl"))
    sweep = read_jsonl(ctx.input(f"{ADAPT}/sweep.jsonl"))
    maps = load_npz(ctx.input(f"{ADAPT}/erf_maps.npz"))
    idx = index_runs(runs)
    claims = [claim1(p, idx), claim2(p, idx), claim3(p, idx), claim4(p, idx)]
    tab = table(runs)
    fig_acc, acc_rows = accuracy_curve(p, runs)
    fig_erf = erf_figure(p, maps, runs)
    erf_rows = [
        {"method": f"{r['method']}@{r['fraction']:g}", "erf_area": r[f"ERF t={p.claims.thresholds[0]:g}"]}
        for r in tab
        if f"ERF t={p.claims.thresholds[0]:g}" in r
    ]
    chance = 1.0 / int(runs[0].get("n_classes", 4))  # balanced test set (4 labels in runs made before it was kept)
    fig_loss = loss_figure(p, runs)
    sweep_tab = [
        {"method": r["method"], "lr adapter": r["lr_adapter"], "lr head": r["lr_head"], "dev acc": r["acc"]}
        for r in sweep
    ]
    metrics = {
        "acc": {f"{r['method']}@{r['fraction']:g}": r["acc"] for r in tab},
        "macro_f1": {f"{r['method']}@{r['fraction']:g}": r["macro-F1"] for r in tab},
        "auc": {f"{r['method']}@{r['fraction']:g}": r["AUC"] for r in tab},
        "delta_acc_vs_linear": {
            f"{r['method']}@{r['fraction']:g}": r["acc"]
            - next((x["acc"] for x in tab if x["method"] == "linear" and x["fraction"] == r["fraction"]), np.nan)
            for r in tab
        },
        "plateau": {f"{r['method']}@{r['fraction']:g}": r["plateau"] for r in tab},
        "chance": chance,
        "trainable": {r["method"]: r["trainable"] for r in tab},
    }
    sections = [
        Section(
            "Accuracy against label fraction",
            "Test accuracy per method; the fixed test set comes from axial "
            "slices no training image was drawn from. The dotted line is chance (4 balanced labels).",
            figures=[("accuracy", fig_acc, "accuracy vs label fraction, 95% CI")],
            tables=[tab],
        ),
        Section(
            "Effective receptive field",
            "Mean normalised |d centre token / d pixel| over the ERF probe images and seeds (Luo et al. 2016).",
            figures=[("erf", fig_erf, "ERF maps per method and fraction")],
        ),
        Section(
            "Training loss and learnability",
            "Training loss of every run (the plateau column: relative "
            "change of the mean loss between the last two fifths of the steps; small = flat). The learnability "
            f"table is each method's mean test accuracy against chance ({chance:.2f}): the claims can only "
            "speak for the paper where the methods learn the task at all.",
            figures=[("loss", fig_loss, "training loss per run")],
            tables=[learnability(tab, chance)],
        ),
        Section(
            "Learning-rate sweep",
            "Dev accuracy at the low fraction for each (adapter, head) learning rate "
            "pair; the best pair of each method is used at every fraction.",
            tables=[sweep_tab],
        ),
    ]
    return finish_report(
        ctx,
        CLAIMS,
        claims,
        metrics=metrics,
        sections=sections,
        plots={
            "accuracy.csv": (acc_rows, ["method", "fraction", "acc", "ci_low", "ci_high"]),
            "erf.csv": (erf_rows, ["method", "erf_area"]),
        },
    )
