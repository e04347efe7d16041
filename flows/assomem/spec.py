"""assomem's DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import StageSpec

AM = "data/assomem"
_CODE = ("flows/assomem/params.py", "flows/assomem/common.py", "flows/assomem/__init__.py")


def _am(name: str, deps: tuple[str, ...], params: tuple[str, ...], outs: tuple[str, ...], **kw) -> StageSpec:
    return StageSpec(name=name, module=f"flows.assomem.{name}", deps=(f"flows/assomem/{name}.py", *_CODE, *deps),
                     params=("profile", "assomem.seed", "assomem.data", *params), outs=outs, **kw)


STAGES = (
    _am("generate", ("components/retrieval/generator.py", "components/retrieval/memory.py",
                     "components/retrieval/loaders.py", "components/retrieval/meetingqa.py",
                     "components/retrieval/sources.py", "components/data/validate.py"),
        ("assomem.method.calibration_frac",), (f"{AM}/memories",),
        summary="similarity-dense meeting memories per seed, size units (1k/3k/10k), calibration split; GX checks"),
    _am("embed", (f"{AM}/memories", "components/retrieval/embed.py"), ("assomem.embedding",),
        (f"{AM}/embeddings",), after=("generate",),
        summary="MiniLM (offline wheel) or TF-IDF embeddings of utterances, questions and clue keyphrases"),
    _am("graph", (f"{AM}/memories", f"{AM}/embeddings", "components/retrieval/assomem"), ("assomem.graph",),
        (f"{AM}/graphs",), after=("embed",),
        summary="clues per session (nearest keyphrase, merged) and the clue-utterance graph per unit"),
    _am("retrieve", (f"{AM}/memories", f"{AM}/embeddings", f"{AM}/graphs", "components/retrieval"),
        ("assomem.method", "assomem.baselines", "assomem.methods", "assomem.top_k"), (f"{AM}/runs",),
        after=("graph",),
        summary="dense, BM25, recency, topic grouping, AssoMem (CMI / equal / no-I / no-T) rankings per unit"),
    _am("evaluate", (f"{AM}/memories", f"{AM}/runs", "components/retrieval/metrics.py", "components/data/validate.py"),
        (), (f"{AM}/eval",), after=("retrieve",),
        summary="R@6, R@10, nDCG@10, MRR per question (ir_measures), utterance and session level; GX checks"),
    _am("report", (f"{AM}/eval", f"{AM}/runs", f"{AM}/graphs", "flows/assomem/claims.py", "components/reporting",
                   "components/evaluation", "flows/runtime/report_stage.py"),
        ("assomem.claims",),
        ("reports/assomem/report.md", "reports/assomem/report.html", "reports/assomem/claims.json",
         "reports/assomem/figures"),
        metrics=("reports/assomem/metrics.json",),
        plots=("reports/assomem/plots/recall_vs_size.csv",),
        plot_axes={"recall_vs_size.csv": {"x": "size", "y": "R@10", "template": "linear"}},
        after=("evaluate",),
        summary="claims 1-4 with verdicts; recall vs memory size, fusion weights per type, ablations"),
)
