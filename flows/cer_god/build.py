"""Stage ``build``: the clean graphs (attributed SBM, Minnesota, or a PyGOD benchmark online), checked by GX."""

from __future__ import annotations

import logging

from components.graph.sources import attributed_sbm, minnesota, pygod_benchmark
from components.io import write_json
from flows.cer_god.common import check_graph_gx
from flows.cer_god.params import Params
from flows.cer_god.spec import CLEAN, PYGOD_CACHE
from flows.runtime.settings import online
from flows.runtime.stages import StageContext

log = logging.getLogger("paperline")


def build_graph(spec, seed: int, cache_dir):
    """One clean graph from its params entry."""
    if spec.source == "sbm":
        return attributed_sbm(
            spec.n,
            spec.communities,
            spec.p_in,
            spec.p_out,
            spec.dim,
            mean_scale=spec.mean_scale,
            seed=seed,
            name=spec.name,
        )
    if spec.source == "minnesota":
        return minnesota(spec.dim, tau=spec.tau, seed=seed, name=spec.name)
    g = pygod_benchmark(spec.dataset, cache_dir, online=online())
    g.name = spec.name
    return g


def clean_graph(p: Params, i: int, cache_dir):
    """The ``i``-th graph of ``p.graphs`` as the build stage makes it (its seed derives from ``p.seed`` and ``i``)."""
    return build_graph(p.graphs[i], p.seed * 1000 + i, cache_dir)


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    out = ctx.output_dir(CLEAN)
    summary = {}
    for i in range(len(p.graphs)):
        g = clean_graph(p, i, ctx.paths.root / PYGOD_CACHE)
        check_graph_gx(g, out / "_checks", label_rate=None, tag="clean")
        g.save(out / f"{g.name}.npz")
        summary[g.name] = {
            "nodes": g.n,
            "edges": int(g.edge_index.shape[1] // 2),
            "dim": int(g.x.shape[1]),
            "mean_degree": float(g.degree().mean()),
        }
        log.info("cer-god: built %s (%d nodes, %d edges)", g.name, g.n, summary[g.name]["edges"])
    write_json(out / "summary.json", summary)
    return summary
