"""The graph checks (Great Expectations suites) shared by the cer-god stages."""

from __future__ import annotations

from pathlib import Path

from components.data import validate as V
from components.graph.graph import Graph, check_graph, edge_frame, node_frame


def check_graph_gx(g: Graph, checks_dir: Path, *, label_rate: float | None, tag: str) -> None:
    """Fail fast on the graph itself, then run the GX node and edge suites (results saved under ``checks_dir``)."""
    check_graph(g)
    nodes = node_frame(g)
    suite = [
        V.columns_present(["node", "degree", "y", "x_norm"]),
        V.unique("node"),
        V.between("degree", min_value=1),
        V.in_set("y", [0, 1]),
        V.finite("x_norm"),
        V.finite("x_min"),
        V.finite("x_max"),
        V.row_count_between(g.n, g.n),
    ]
    if label_rate is not None:  # the outlier label rate equals the injected rate (to one node)
        half = 0.5 / g.n
        suite.append(V.mean_between("y", label_rate - half, label_rate + half))
    V.validate(nodes, suite, name=f"cer-god/{tag}/{g.name}/nodes", result_path=checks_dir / f"{g.name}-nodes.json")
    edges = edge_frame(g)
    V.validate(
        edges,
        [
            V.in_set("self_loop", [False]),
            V.in_set("has_reverse", [True]),
            V.between("src", 0, g.n - 1),
            V.between("dst", 0, g.n - 1),
        ],
        name=f"cer-god/{tag}/{g.name}/edges",
        result_path=checks_dir / f"{g.name}-edges.json",
    )
