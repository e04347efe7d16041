"""Claims 1-4 of the CER-GOD card from the evaluated runs, each a record whose verdict is re-derived from its parts.

Seeds are the clusters (every compared number comes from a randomly initialised, trained model); graphs are strata
(fixed by design). Claims 1-2 are judged per graph, and each graph's verdict has the card's leakage guard as a
precondition: CER-GOD's mean AUC must beat the leakage probe's on that graph (max of the degree and feature-norm
ranks), else that graph's part is inconclusive (the injection leaks). Nothing here can be censored: every run
trains a fixed number of epochs, with no budget cap or time-out, and its metrics are GX-checked to lie in [0, 1].
"""

from __future__ import annotations

import numpy as np
from scipy.stats import fisher_exact

from components.evaluation import claims as CL
from components.evaluation.claim_spec import ClaimSpec
from components.evaluation.testability import Check

NOTE = (
    "Mini scale: a 2k-node SBM and the 2.6k-node Minnesota road graph with injected outliers, 2 CPU cores, "
    "PyGOD-default baselines re-implemented natively; the paper's benchmarks are Cora, Amazon, Enron, ..."
)
PAPER_C1 = (
    "AUC of CER-GOD vs the best baseline: Amazon 86.24 vs 79.87 (TAM), Enron 72.63 vs 68.97 (BOURNE), "
    "Cora 92.09 vs 92.62 (GADAM), CiteSeer 74.01 vs 93.91 (GADAM) (secondary, unverified)"
)
PAPER_C2 = "Email AUC 96.98 with the masking spoiler, 87.05 without it (ablation; secondary, unverified)"
AUC_DIFF = "AUC difference (cer-god - baseline)"
GAP_DIFF = "(trap - rest AUC) of cer-god minus that of cer-god-nomask"

COLLAPSE = "collapse occurs without l_div"

CLAIMS = (
    ClaimSpec(
        "C1",
        "CER-GOD's AUC is higher than DOMINANT's and GAE reconstruction's on every graph",
        metric=AUC_DIFF,
        method="cer-god",
        baseline="dominant, gae",
        rule="composite",
        unit="seeds",
        paper_value=PAPER_C1,
        scale_note=NOTE,
    ),
    ClaimSpec(
        "C2",
        "Removing the masking spoiler costs more trap AUC (outliers + their normal neighbours) than AUC "
        "on the rest of the graph",
        metric=GAP_DIFF,
        method="cer-god",
        baseline="cer-god-nomask",
        rule="composite",
        unit="seeds",
        paper_value=PAPER_C2,
        scale_note=NOTE,
    ),
    ClaimSpec(
        "C3",
        "Without the diversity loss runs collapse more often (minority cluster < 1% of nodes) and mean AUC is lower",
        metric="collapse-rate difference / AUC difference",
        method="cer-god",
        baseline="cer-god-nodiv",
        rule="composite",
        unit="(graph, seed) runs",
        scale_note=NOTE,
        # the diversity loss is a hinge against collapse: if no run collapses without it, it never acted, and
        # neither part can say anything about it (shared/papers/README.md, "not testable here")
        requires=(COLLAPSE,),
    ),
    ClaimSpec(
        "C4",
        "F1 of CER-GOD's threshold-free cluster labels is not below DOMINANT's F1 at the contamination "
        "threshold (non-inferiority margin claims.delta_f1)",
        metric="F1 difference",
        method="cer-god",
        baseline="dominant",
        rule="non-inferiority",
        unit="(graph, seed)",
        scale_note=NOTE,
    ),
)
C1, C2, C3, C4 = CLAIMS


def _vals(rows, graph, method, seeds, key="auc"):
    idx = {(r["graph"], r["method"], r["seed"]): r for r in rows}
    return [idx[(graph, method, s)][key] for s in seeds]


def leakage(rows, graphs) -> dict:
    """Per graph: the leakage probe's AUC (max of the degree and feature-norm ranks) against CER-GOD's mean AUC;
    leaky when the probe is at least as good. The two single probes are reported beside it where they ran."""

    def mean_auc(g, m):
        vals = [r["auc"] for r in rows if r["graph"] == g and r["method"] == m]
        return float(np.mean(vals)) if vals else None

    out = {}
    for g in graphs:
        probe, cg = mean_auc(g, "leakage-probe"), mean_auc(g, "cer-god")
        out[g] = {
            "leakage_probe_auc": probe,
            "degree_probe_auc": mean_auc(g, "degree-probe"),
            "featnorm_probe_auc": mean_auc(g, "featnorm-probe"),
            "cer_god_auc": cg,
            "leaky": probe >= cg,
        }
    return out


def _on(spec: ClaimSpec, graph: str) -> ClaimSpec:
    """A claim's part for one graph (a composite of that graph's comparisons, guarded by its leakage probe)."""
    return spec.part(graph, f"on {graph}", paper_value=None)


def leakage_guard(on_graph: ClaimSpec, graph: str, leak: dict, n_seeds: int) -> CL.ClaimResult:
    """The card's guard as a point record: CER-GOD's mean AUC minus the leakage probe's must be > 0."""
    guard = on_graph.part(
        "leakage-guard",
        f"on {graph}, CER-GOD's mean AUC is above the leakage probe's, max(rank "
        "degree, rank feature norm) (else the injection leaks through degree or feature norm)",
        rule="point",
        metric="mean AUC (cer-god - leakage-probe)",
        baseline="leakage-probe",
    )
    return guard.simple(
        effect=leak["cer_god_auc"] - leak["leakage_probe_auc"],
        threshold=0.0,
        n_units=n_seeds,
        n_seeds=n_seeds,
        details=dict(leak),
    )


def _per_graph(
    on_graph: ClaimSpec, graph: str, parts: list[CL.ClaimResult], leak: dict, n_seeds: int
) -> CL.ClaimResult:
    return on_graph.composite(
        parts, how="all", preconditions=[leakage_guard(on_graph, graph, leak, n_seeds)], headline=0
    )


def _auc_part(p, on_graph: ClaimSpec, rows, g, baseline, seeds) -> CL.ClaimResult:
    part = on_graph.part(
        baseline, f"on {g}, CER-GOD's AUC is higher than {baseline}'s", rule="standard", baseline=baseline
    )
    return part.standard(
        method_values=_vals(rows, g, "cer-god", seeds),
        baseline_values=_vals(rows, g, baseline, seeds),
        clusters=seeds,
        delta=p.claims.delta_auc,
        seed=p.seed,
        n_resamples=p.claims.n_resamples,
        level=p.claims.level,
    )


def claim1(p, rows, graphs, leak) -> CL.ClaimResult:
    seeds = list(p.run.seeds)
    per_graph = [
        _per_graph(
            _on(C1, g),
            g,
            [_auc_part(p, _on(C1, g), rows, g, b, seeds) for b in ("dominant", "gae")],
            leak[g],
            len(seeds),
        )
        for g in graphs
    ]
    return C1.composite(per_graph, how="all", headline=0, details={"leakage": leak})


def claim2(p, rows, graphs, leak) -> CL.ClaimResult:
    seeds, c = list(p.run.seeds), p.claims
    per_graph = []
    for g in graphs:
        gap = {
            m: np.subtract(_vals(rows, g, m, seeds, "trap_auc"), _vals(rows, g, m, seeds, "rest_auc"))
            for m in ("cer-god", "cer-god-nomask")
        }
        means = {
            f"mean_{k}": {m: float(np.mean(_vals(rows, g, m, seeds, k))) for m in ("cer-god", "cer-god-nomask")}
            for k in ("trap_auc", "rest_auc")
        }
        on_g = _on(C2, g)
        part = on_g.part(
            "diff-in-diff", f"on {g}, removing the spoiler costs more trap AUC than rest AUC", rule="standard"
        ).standard(
            method_values=gap["cer-god"],
            baseline_values=gap["cer-god-nomask"],
            clusters=seeds,
            delta=c.delta_auc,
            seed=p.seed,
            n_resamples=c.n_resamples,
            level=c.level,
            details=means,
        )
        per_graph.append(_per_graph(on_g, g, [part], leak[g], len(seeds)))
    return C2.composite(per_graph, how="all", headline=0, details={"leakage": leak})


def _units(graphs, seeds) -> tuple[list[str], list[int]]:
    """(graph, seed) units: graphs are strata, seeds the clusters (crossed: every seed runs on every graph)."""
    pairs = [(g, s) for g in graphs for s in seeds]
    return [g for g, _ in pairs], [s for _, s in pairs]


def _pooled(rows, graphs, seeds, method, key="auc") -> list[float]:
    return [v for g in graphs for v in _vals(rows, g, method, seeds, key)]


def claim3(p, rows, graphs) -> CL.ClaimResult:
    seeds, c = list(p.run.collapse_seeds), p.claims
    runs = {m: [r for r in rows if r["method"] == m and r["seed"] in seeds] for m in ("cer-god", "cer-god-nodiv")}
    k = {m: sum(bool(r["collapsed"]) for r in rs) for m, rs in runs.items()}
    n = {m: len(rs) for m, rs in runs.items()}
    engaged = Check(
        COLLAPSE,
        k["cer-god-nodiv"] > 0,
        f"{k['cer-god-nodiv']} of {n['cer-god-nodiv']} runs without l_div collapsed",
    )
    _, pval = fisher_exact(
        [[k["cer-god-nodiv"], n["cer-god-nodiv"] - k["cer-god-nodiv"]], [k["cer-god"], n["cer-god"] - k["cer-god"]]],
        alternative="greater",
    )
    rate = {m: k[m] / n[m] for m in k}
    rate_spec = C3.part(
        "collapse-rate",
        "without l_div runs collapse more often (minority cluster < 1% of nodes)",
        rule="p-value",
        metric="collapse-rate difference (without - with l_div)",
        method="cer-god-nodiv",
        baseline="cer-god",
        unit="(graph, seed) runs per arm",
    )
    # ClaimSpec.simple leaves direction and cluster_unit unset for a p-value rule; this record has always kept both
    rate_part = rate_spec.simple(
        testability=[engaged],
        effect=rate["cer-god-nodiv"] - rate["cer-god"],
        direction="greater",
        cluster_unit="seed",
        n_units=n["cer-god"],
        n_seeds=len(seeds),
        details={
            "p_value": float(pval),
            "alpha": c.fisher_alpha,
            "test": "Fisher exact, one-sided (greater)",
            "collapsed_with_div": k["cer-god"],
            "collapsed_without_div": k["cer-god-nodiv"],
            "runs_with_div": n["cer-god"],
            "runs_without_div": n["cer-god-nodiv"],
            "rate_with_div": rate["cer-god"],
            "rate_without_div": rate["cer-god-nodiv"],
        },
    )
    strata, clusters = _units(graphs, seeds)
    auc_part = C3.part(
        "auc",
        "without l_div mean AUC is lower",
        rule="standard",
        metric="AUC difference (cer-god - cer-god-nodiv)",
        unit="(graph, seed)",
    ).standard(
        method_values=_pooled(rows, graphs, seeds, "cer-god"),
        baseline_values=_pooled(rows, graphs, seeds, "cer-god-nodiv"),
        clusters=clusters,
        strata=strata,
        delta=c.delta_auc,
        seed=p.seed,
        n_resamples=c.n_resamples,
        level=c.level,
        testability=[engaged],
    )
    return C3.composite([rate_part, auc_part], how="all", headline=1)


def claim4(p, rows, graphs) -> CL.ClaimResult:
    seeds, c = list(p.run.seeds), p.claims
    strata, clusters = _units(graphs, seeds)
    r = C4.standard(
        statement=f"F1 of CER-GOD's threshold-free cluster labels is not below DOMINANT's F1 at contamination "
        f"{c.contamination} (non-inferiority margin {c.delta_f1})",
        method_values=_pooled(rows, graphs, seeds, "cer-god", "f1"),
        baseline_values=_pooled(rows, graphs, seeds, "dominant", "f1"),
        clusters=clusters,
        strata=strata,
        margin=c.delta_f1,
        seed=p.seed,
        n_resamples=c.n_resamples,
        level=c.level,
        details={
            "card_reading": {
                "note": "the card only fails the claim when the CI lies entirely below 0; the non-inferiority rule "
                f"against -{c.delta_f1} is stricter on both sides, so 'inconclusive' is possible"
            }
        },
    )
    r.details["card_reading"]["ci_entirely_below_0"] = bool(r.ci_high is not None and r.ci_high < 0)
    return r


def all_claims(p, rows) -> tuple[list[CL.ClaimResult], dict]:
    graphs = [g.name for g in p.graphs]
    leak = leakage(rows, graphs)
    return [
        claim1(p, rows, graphs, leak),
        claim2(p, rows, graphs, leak),
        claim3(p, rows, graphs),
        claim4(p, rows, graphs),
    ], leak
