"""assomem's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(
    2, "assomem", "AssoMem: associative memory graph with MI-fused relevance, importance and time", "02-assomem.md"
)

L = Layout("assomem", code=("common",))
MEMORIES, EMBEDDINGS, GRAPHS, RUNS, EVAL = (L.out(n) for n in ("memories", "embeddings", "graphs", "runs", "eval"))
_P = ("seed", "data")  # every stage reads the seed and the data section

STAGES = (
    L.stage(
        "generate",
        code=(
            "components/retrieval/generator.py",
            "components/retrieval/memory.py",
            "components/retrieval/loaders.py",
            "components/retrieval/meetingqa.py",
            "components/retrieval/sources.py",
            "components/data/validate.py",
        ),
        params=(*_P, "method.calibration_frac"),
        writes=(MEMORIES,),
        summary="similarity-dense meeting memories per seed, size units (1k/3k/10k), calibration split; GX checks",
    ),
    L.stage(
        "embed",
        code=("components/retrieval/embed.py",),
        reads=(MEMORIES,),
        params=(*_P, "embedding"),
        writes=(EMBEDDINGS,),
        after=("generate",),
        summary="MiniLM (offline wheel) or TF-IDF embeddings of utterances, questions and clue keyphrases",
    ),
    L.stage(
        "graph",
        code=("components/retrieval/assomem",),
        reads=(MEMORIES, EMBEDDINGS),
        params=(*_P, "graph"),
        writes=(GRAPHS,),
        after=("embed",),
        summary="clues per session (nearest keyphrase, merged) and the clue-utterance graph per unit",
    ),
    L.stage(
        "retrieve",
        code=("components/retrieval",),
        reads=(MEMORIES, EMBEDDINGS, GRAPHS),
        params=(*_P, "method", "baselines", "methods", "top_k"),
        writes=(RUNS,),
        after=("graph",),
        summary="dense, BM25, recency, topic grouping, AssoMem (CMI / equal / no-I / no-T) rankings per unit",
    ),
    L.stage(
        "evaluate",
        code=("components/retrieval/metrics.py", "components/data/validate.py"),
        reads=(MEMORIES, RUNS),
        params=_P,
        writes=(EVAL,),
        after=("retrieve",),
        summary="R@6, R@10, nDCG@10, MRR per question (ir_measures), utterance and session level; GX checks",
    ),
    L.report_stage(
        reads=(EVAL, RUNS, GRAPHS),
        params=_P,
        plots={
            "recall_vs_size.csv": {"x": "size", "y": "R@10", "template": "linear", "color": "method", "x_scale": "log"}
        },
        after=("evaluate",),
        summary="claims 1-4 with verdicts; recall vs memory size, fusion weights per type, ablations",
    ),
)
