"""Stage ``report``: claims 1-4, the system table per task, the pruning and index-size trade-offs, the report."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from components.io import read_json, read_jsonl
from components.reporting import Section
from components.reporting.plots import line_plot
from flows.milco.claims import CLAIMS, decide
from flows.milco.params import Params
from flows.milco.spec import EVAL, MODELS
from flows.runtime.report_stage import finish_report
from flows.runtime.stages import StageContext

METRICS = ("nDCG@10", "R@100", "MRR@10")


def system_table(systems: list[dict]) -> list[dict]:
    """Mean over seeds of each (system, task): the metrics, active dims, index bytes and latency."""
    groups = defaultdict(list)
    for s in systems:
        groups[(s["system"], s["task"])].append(s)
    out = []
    for (system, task), rs in sorted(groups.items()):
        row = {"system": system, "task": task, "seeds": len(rs)}
        for key in (*METRICS, "q_dims", "d_dims", "index_bytes", "latency_ms"):
            vals = [r[key] for r in rs if r.get(key) is not None]
            row[key] = round(float(np.mean(vals)), 4) if vals else None
        out.append(row)
    return out


def sweep_curves(sweep: list[dict]) -> tuple[list[dict], dict]:
    """Seed-averaged sweep points per (method, param) and the figure's series."""
    groups = defaultdict(list)
    for s in sweep:
        groups[(s["method"], round(s["param"], 4))].append(s)
    points = [
        {
            "method": m,
            "param": prm,
            "avg_doc_dims": float(np.mean([r["avg_doc_dims"] for r in rs])),
            "index_bytes": float(np.mean([r["index_bytes"] for r in rs])),
            "ndcg10": float(np.mean([r["nDCG@10"] for r in rs])),
            "latency_ms": float(np.mean([r["latency_ms"] for r in rs])),
        }
        for (m, prm), rs in sorted(groups.items())
    ]
    series = {}
    for m in ("mass", "topk"):
        pts = sorted((p for p in points if p["method"] == m), key=lambda p: p["avg_doc_dims"])
        series[f"{m} pruning"] = ([p["avg_doc_dims"] for p in pts], [p["ndcg10"] for p in pts])
    return points, series


def bytes_rows(points: list[dict], table: list[dict]) -> list[dict]:
    rows = [{"model": f"milco {p['method']}", "index_bytes": p["index_bytes"], "ndcg10": p["ndcg10"]} for p in points]
    for t in table:
        if t["task"] == "es-en" and t["system"] in ("dense", "use", "milco", "no_echo", "no_sap"):
            rows.append({"model": t["system"], "index_bytes": t["index_bytes"], "ndcg10": t["nDCG@10"]})
    return rows


def loss_curves(histories: dict) -> tuple[dict, dict]:
    """Seed-mean SAP loss and stage-2 loss per variant (the plateau check)."""
    sap, st2 = defaultdict(list), defaultdict(list)
    for per_seed in histories.values():
        for variant, h in per_seed.items():
            if h["sap"]:
                sap["SAP (shared by milco, no_echo)"].append(h["sap"])
            st2[variant].append([r["loss"] for r in h["stage2"]])
    mean = {
        k: (list(range(len(v[0]))), list(np.mean(np.asarray([x[: len(v[0])] for x in v]), axis=0)))
        for k, v in {**sap, **st2}.items()
        if v
    }
    return {k: v for k, v in mean.items() if k.startswith("SAP")}, {
        k: v for k, v in mean.items() if not k.startswith("SAP")
    }


PLATEAU_TOL = 0.05


def training_table(train: dict, batch: int) -> list[dict]:
    """Per final model: its learning rate, dev nDCG@10, the stage-2 InfoNCE at the first and last steps (against
    ln(batch), the value of a flat in-batch softmax), the plateau measure, the active document dims."""
    rows = []
    for seed, per in sorted((k, v) for k, v in train.items() if k.startswith("seed_")):
        for variant, r in sorted(per.items()):
            rows.append(
                {
                    "seed": int(seed.split("_")[1]),
                    "variant": variant,
                    "lr": r["lr"],
                    "dev_ndcg": round(r["dev_ndcg"], 4),
                    "nce_first": round(r["nce_first"], 3),
                    "nce_last10": round(r["nce_last10"], 3),
                    "plateau": round(r["plateau"], 4),
                    "plateaued": bool(r["plateau"] < PLATEAU_TOL),
                    "d_len": r["d_len"],
                    "collapsed": bool(r["nce_last10"] > np.log(batch) - 0.01),
                }
            )
    return rows


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    rows = read_jsonl(ctx.input(f"{EVAL}/per_query.jsonl"))
    ground = read_jsonl(ctx.input(f"{EVAL}/grounding.jsonl"), allow_empty=True)
    sweep = read_jsonl(ctx.input(f"{EVAL}/sweep.jsonl"), allow_empty=True)
    table = system_table(read_json(ctx.input(f"{EVAL}/systems.json")))
    points, series = sweep_curves(sweep)
    fig1 = line_plot(
        series,
        fits=series,
        xlabel="average active dimensions per document",
        ylabel="nDCG@10 (ES->EN)",
        title="MILCO pruning: mass vs top-k",
    )
    brows = bytes_rows(points, table)
    by_model = defaultdict(list)
    for r in brows:
        by_model[
            "milco pruned (mass)"
            if r["model"] == "milco mass"
            else "milco pruned (top-k)"
            if r["model"] == "milco topk"
            else "dense"
            if r["model"] in ("dense", "use")
            else "sparse (unpruned)"
        ].append(r)
    fig2 = line_plot(
        {k: ([r["index_bytes"] for r in v], [r["ndcg10"] for r in v]) for k, v in by_model.items()},
        xlabel="index bytes",
        ylabel="nDCG@10 (ES->EN)",
        logx=True,
        title="Index size: sparse vs dense",
    )
    entity = [
        {"system": s, "entity": e, "queries": len(v), "nDCG@10": round(float(np.mean(v)), 4)}
        for s in ("milco", "no_echo", "no_sap")
        for e in (True, False)
        if (v := [r["nDCG@10"] for r in rows if r["system"] == s and r["task"] == "es-en" and r["entity"] == e])
    ]
    gtab = [
        {"system": s, "grounding": round(float(np.mean([g["grounding"] for g in ground if g["system"] == s])), 4)}
        for s in sorted({g["system"] for g in ground})
    ]
    sections = [
        Section(
            "Systems",
            "Mean over seeds per task (ES->EN and ES->ES LibreOffice help, ES->EN Bible). Index bytes: "
            "postings x 6 B for sparse indexes, n x d x 4 B for the faiss flat index; latency: median single-thread "
            "ms per query.",
            tables=[table],
        ),
        Section(
            "Entities and grounding",
            "nDCG@10 on entity and other ES->EN queries; grounding = share of a "
            "Spanish document's top-10 pivot terms found in its English translation.",
            tables=[entity, gtab],
        ),
        Section(
            "Pruning",
            "MILCO's documents pruned by mass (smallest prefix holding a share of the weight) and top-k.",
            figures=[
                ("pruning", fig1, "nDCG@10 against active dimensions per document"),
                ("bytes", fig2, "nDCG@10 against index bytes"),
            ],
            tables=[points],
        ),
    ]
    train = read_json(ctx.input(f"{MODELS}/train.json"))
    sap_curve, st2_curve = loss_curves(train["histories"])
    runs = training_table(train, p.train.batch)
    sections.append(
        Section(
            "Training",
            "Seed-mean training losses: SAP (masked MSE to the lexical teacher), then "
            "stage 2 (InfoNCE + KL + FLOPS) per model. Dev sweep: every model tried the same "
            f"stage-2 learning rates on seed {p.train.seeds[0]} and kept its best by dev nDCG@10 "
            "(ES->EN). Plateau: relative change of the mean stage-2 loss between the last two "
            f"fifths of training (plateaued when < {PLATEAU_TOL:g}); collapse: the InfoNCE of the "
            "last 10 steps still at ln(batch).",
            tables=[train.get("sweep") or [{"note": "one learning rate: no sweep"}], runs],
            figures=[
                (
                    "sap_loss",
                    line_plot(sap_curve, xlabel="step", ylabel="SAP loss", title="Sparse Alignment Pretraining"),
                    "SAP loss",
                ),
                (
                    "stage2_loss",
                    line_plot(st2_curve, xlabel="step", ylabel="stage-2 loss", title="Stage 2"),
                    "stage-2 loss per model",
                ),
            ],
        )
    )
    results = decide(p, rows, ground)
    metrics = {
        "systems": {f"{t['system']}/{t['task']}": {m: t[m] for m in METRICS} for t in table},
        "grounding": {g["system"]: g["grounding"] for g in gtab},
        "chosen_lr": train.get("chosen_lr"),
        "training": {
            f"{r['variant']}/seed_{r['seed']}": {
                k: r[k] for k in ("plateau", "plateaued", "collapsed", "nce_first", "nce_last10", "d_len")
            }
            for r in runs
        },
    }
    return finish_report(
        ctx,
        CLAIMS,
        results,
        metrics=metrics,
        sections=sections,
        plots={
            "pruning.csv": (points, ["method", "param", "avg_doc_dims", "ndcg10"]),
            "bytes.csv": (brows, ["model", "index_bytes", "ndcg10"]),
        },
    )
