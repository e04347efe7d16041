"""milco's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(
    12, "milco", "MILCO: multilingual learned sparse retrieval through an English lexical pivot", "12-milco.md"
)

L = Layout("milco", code=("common",))
DATA, EMBED, MODELS, EVAL = L.out("data"), L.out("embed"), L.out("models"), L.out("eval")
_SR = "components/sparse_retrieval"

STAGES = (
    L.stage(
        "data",
        code=(f"{_SR}/parallel.py", f"{_SR}/lexicon.py", f"{_SR}/external.py", "components/data/validate.py"),
        params=("data", "full"),
        writes=(DATA,),
        summary="LibreOffice EN-ES paragraphs aligned by HTML id + SWORD verses; splits, queries, entity flags, "
        "shared BPE, English lexical space; GX checks (no SAP/benchmark id overlap, qrels resolve)",
    ),
    L.stage(
        "embed",
        code=(f"{_SR}/baselines.py", "components/data/validate.py"),
        reads=(DATA,),
        params=("data", "train.kl_weight"),
        writes=(EMBED,),
        after=("data",),
        summary="USE-multilingual embeddings of the stage-2 training texts (KL teacher) and benchmark texts",
    ),
    L.stage(
        "train",
        code=(_SR, "components/training/curves.py"),
        reads=(DATA, EMBED),
        params=("model", "train", "resources"),
        writes=(MODELS,),
        after=("embed",),
        summary="per seed: SAP against the lexical teacher, then stage 2 for MILCO, "
        "MILCO without SAP, without LexEcho, and the dense bi-encoder",
    ),
    L.stage(
        "evaluate",
        code=(_SR,),
        reads=(DATA, EMBED, MODELS),
        params=("model", "train", "eval", "resources"),
        writes=(EVAL,),
        after=("train",),
        summary="inverted index per model: nDCG@10/R@100/MRR@10, active dims, index bytes, latency, grounding; "
        "mass vs top-k pruning; BM25 and USE baselines",
    ),
    L.report_stage(
        reads=(EVAL, MODELS),
        params=("train.seeds", "eval"),
        plots={
            "pruning.csv": {"x": "avg_doc_dims", "y": "ndcg10", "template": "scatter", "color": "method"},
            "bytes.csv": {"x": "index_bytes", "y": "ndcg10", "template": "scatter", "color": "model"},
        },
        after=("evaluate",),
        summary="claims 1-4 with verdicts; pruning and index-size trade-offs",
    ),
)
