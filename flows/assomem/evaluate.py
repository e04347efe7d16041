"""Stage ``evaluate``: Recall@6/10, nDCG@10 and MRR per question via ir_measures, at utterance and session level.

Writes ``data/assomem/eval/metrics.jsonl`` (one row per unit, method and question;
session-level columns are prefixed ``S-``) and its GX results.
"""

from __future__ import annotations

from collections import defaultdict

from components.data import validate as V
from components.io import read_jsonl, write_json, write_jsonl
from components.retrieval import metrics as M
from flows.assomem.common import load_base, load_units, unit_view
from flows.assomem.params import Params
from flows.assomem.spec import EVAL, MEMORIES, RUNS
from flows.runtime.stages import StageContext

METRIC_COLUMNS = ("R@6", "R@10", "nDCG@10", "MRR")


def score_group(rows: list[dict], mem) -> list[dict]:
    """Metric rows for the rankings of one (unit, method)."""
    session_of = dict(zip(mem.ids, mem.sessions))
    gold = {q["id"]: q["gold"] for q in mem.questions}
    utt = M.per_query({r["qid"]: gold[r["qid"]] for r in rows}, {r["qid"]: r["ranked"] for r in rows})
    s_gold = {r["qid"]: sorted({session_of[g] for g in gold[r["qid"]]}) for r in rows}
    ses = M.per_query(s_gold, {r["qid"]: M.to_sessions(r["ranked"], session_of) for r in rows})
    out = []
    for r in rows:
        base = {k: r[k] for k in ("unit", "seed", "size", "method", "qid", "type", "split", "orig_type") if k in r}
        out.append({**base, **utt[r["qid"]], **{f"S-{k}": v for k, v in ses[r["qid"]].items()}})
    return out


SUITE = [
    V.columns_present(["unit", "method", "qid", *METRIC_COLUMNS]),
    *[V.between(c, 0.0, 1.0) for c in METRIC_COLUMNS],
    *[V.between(f"S-{c}", 0.0, 1.0) for c in METRIC_COLUMNS],
    *[V.not_null(c) for c in METRIC_COLUMNS],
]


def run(ctx: StageContext[Params]) -> dict:
    mem_dir = ctx.input(MEMORIES)
    rankings = read_jsonl(ctx.input(f"{RUNS}/rankings.jsonl"))
    groups = defaultdict(list)
    for r in rankings:
        groups[(r["unit"], r["method"])].append(r)
    units = {u["unit"]: u for u in load_units(mem_dir)}
    bases, rows = {}, []
    for (unit, _method), grp in sorted(groups.items()):
        u = units[unit]
        if u["base"] not in bases:
            bases = {u["base"]: load_base(mem_dir, u["base"])}
        _, mem = unit_view(bases[u["base"]], u)
        rows += score_group(grp, mem)
    out = ctx.output_dir(EVAL)
    V.validate(rows, SUITE, name="assomem/metrics", result_path=out / "_checks" / "metrics.json", id_column="qid")
    write_jsonl(out / "metrics.jsonl", rows)
    write_json(out / "summary.json", {"rows": len(rows)})
    return {"rows": len(rows)}
