"""Stage ``evaluate``: AUC, AP, Recall@k, trap/rest AUC and F1 for every run; GX-checked; MLflow per method.

F1 uses CER-GOD's own pseudo-labels (no threshold) and, for every other detector, PyGOD's contamination
threshold (top ``claims.contamination`` of the scores). ``f1_contamination`` gives CER-GOD the same
threshold for reference.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from components.data import validate as V
from components.errors import DataError
from components.graph.graph import Graph
from components.graph.metrics import contamination_labels, detection_metrics, f1
from components.inputs import check_array, load_npz
from components.io import read_jsonl, write_json, write_jsonl
from flows.cer_god.params import Params
from flows.cer_god.spec import EVAL, GRAPHS, RUNS
from flows.runtime.stages import StageContext

SCORE_COLS = ("auc", "ap", "recall_at_k", "trap_auc", "rest_auc", "f1", "f1_contamination")


def evaluate_rows(runs: list[dict], scores, graphs: dict[str, Graph], contamination: float) -> list[dict]:
    out = []
    for r in runs:
        g = graphs[r["graph"]]
        s = scores[f"{r['id']}/scores"]
        labels = scores[f"{r['id']}/labels"] if r["has_labels"] else None
        m = detection_metrics(g.y, s, g.edge_index, labels=labels, contamination=contamination)
        m["f1_contamination"] = f1(g.y, contamination_labels(s, contamination))
        out.append(
            {
                "id": r["id"],
                "graph": r["graph"],
                "method": r["method"],
                "seed": r["seed"],
                **m,
                "collapsed": r.get("collapsed"),
                "minority_share": r.get("minority_share"),
            }
        )
    return out


def _track(ctx: StageContext[Params], rows: list[dict]) -> None:
    if ctx.tracker is None:
        return
    groups = defaultdict(list)
    for r in rows:
        groups[(r["graph"], r["method"])].append(r)
    for (graph, method), rs in groups.items():
        with ctx.tracker.child(
            f"{graph}/{method}", {"graph": graph, "method": method, "seeds": [r["seed"] for r in rs]}
        ) as rid:
            for r in rs:
                ctx.tracker.log_metrics({k: r[k] for k in SCORE_COLS}, step=int(r["seed"]), run_id=rid)
            ctx.tracker.log_metrics({f"mean_{k}": float(np.mean([r[k] for r in rs])) for k in SCORE_COLS}, run_id=rid)


RUN_FIELDS = {"id": str, "graph": str, "method": str, "seed": int, "has_labels": bool}


def read_runs(path, graphs: dict[str, Graph]) -> list[dict]:
    """The fit stage's ``runs.jsonl``: typed fields, unique ids, every run on a graph of this run."""
    runs = read_jsonl(path, RUN_FIELDS, unique="id")
    for i, r in enumerate(runs, 1):
        if r["graph"] not in graphs:
            raise DataError(f"{path}:{i}: graph {r['graph'][:40]!r} is not one of {sorted(graphs)}")
    return runs


def read_scores(path, runs: list[dict], graphs: dict[str, Graph]) -> dict:
    """The fit stage's ``scores.npz``: per run, finite scores (and 0/1 labels) with one value per node."""
    scores = load_npz(path)
    for r in runs:
        n = graphs[r["graph"]].n
        check_array(scores[f"{r['id']}/scores"], path, f"{r['id']}/scores", ndim=1, rows=n, finite=True)
        if r["has_labels"]:
            check_array(scores[f"{r['id']}/labels"], path, f"{r['id']}/labels", ndim=1, rows=n)
    return scores


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    graphs = {g.name: Graph.load(ctx.input(f"{GRAPHS}/{g.name}.npz")) for g in p.graphs}
    runs = read_runs(ctx.input(f"{RUNS}/runs.jsonl"), graphs)
    scores = read_scores(ctx.input(f"{RUNS}/scores.npz"), runs, graphs)
    rows = evaluate_rows(runs, scores, graphs, p.claims.contamination)
    out = ctx.output_dir(EVAL)
    import pandas as pd

    suite = [V.unique("id"), *(V.between(c, 0.0, 1.0) for c in SCORE_COLS), *(V.not_null(c) for c in SCORE_COLS)]
    V.validate(
        pd.DataFrame(rows).drop(columns=["collapsed", "minority_share"]),
        suite,
        name="cer-god/eval",
        result_path=out / "_checks" / "metrics.json",
    )
    write_jsonl(out / "metrics.jsonl", rows)
    _track(ctx, rows)
    means = defaultdict(list)
    for r in rows:
        means[f"{r['graph']}/{r['method']}"].append(r["auc"])
    summary = {k: round(float(np.mean(v)), 4) for k, v in means.items()}
    write_json(out / "summary.json", summary)
    return {"mean_auc": summary}
