"""Stage ``inject``: contextual, structural and trap outliers into every clean graph; GX checks the label rate."""

from __future__ import annotations

from components.graph.graph import Graph
from components.graph.inject import inject
from components.graph.inject_matched import inject_matched
from components.io import write_json
from flows.cer_god.common import check_graph_gx
from flows.cer_god.params import Params
from flows.cer_god.spec import CLEAN, GRAPHS
from flows.runtime.stages import StageContext


def injected(g: Graph, p: Params, i: int) -> Graph:
    """Outliers injected into the clean ``i``-th graph of ``p.graphs`` (its ``injection`` kind: standard or
    degree- and norm-matched), with the seed the inject stage uses."""
    inj = p.injection
    how = inject_matched if p.graphs[i].injection == "matched" else inject
    return how(
        g,
        contextual_rate=inj.contextual_rate,
        structural_rate=inj.structural_rate,
        trap_rate=inj.trap_rate,
        clique_size=inj.clique_size,
        k=inj.k,
        trap_degree=inj.trap_degree,
        seed=p.seed * 1000 + i + 1,
    )  # >= 1: PyGOD's generators ignore seed 0


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    out = ctx.output_dir(GRAPHS)
    summary = {}
    for i, spec in enumerate(p.graphs):
        g = Graph.load(ctx.input(f"{CLEAN}/{spec.name}.npz"))
        if spec.inject:
            g = injected(g, p, i)
            rate = sum(v for k, v in g.meta["counts"].items() if k != "cliques") / g.n
        else:
            rate = float(g.y.mean())
        check_graph_gx(g, out / "_checks", label_rate=rate, tag="injected")
        g.save(out / f"{g.name}.npz")
        summary[g.name] = {
            "nodes": g.n,
            "outliers": int(g.y.sum()),
            "rate": rate,
            "counts": {k: int((g.kind == v).sum()) for k, v in (("contextual", 1), ("structural", 2), ("trap", 3))},
        }
    write_json(out / "summary.json", summary)
    return summary
