"""ebt's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import SHARED, Layout, Paper

PAPER = Paper(5, "ebt", "Energy-Based Transformers: System 2 thinking from unsupervised learning", "05-ebt.md")

L = Layout("ebt", code=("common",))
DATA, MODELS, EVAL = L.out("data"), L.out("models"), L.out("eval")

STAGES = (
    L.stage(
        "data",
        code=(
            "components/ebt/chars.py",
            "components/ebt/tokens.py",
            "components/data/validate.py",
            "components/data/corpus/hf.py",
        ),
        reads=("data/sources",),
        params=("data", "model.seq_len"),
        writes=(DATA,),
        after=(f"{SHARED}:sources",),
        summary="char-level Austen (5 novels train + dev, Persuasion test), Shakespeare/KJV/Linux docs OOD; "
        "GX: no evaluation window occurs in the training text",
    ),
    L.stage(
        "train",
        code=("components/ebt", "components/models/tiny_lm.py", "components/training"),
        reads=(DATA,),
        params=("data", "model", "training", "energy", "resources"),
        writes=(MODELS,),
        after=("data",),
        summary="per seed and width: EBT (second-order inner optimisation) and Transformer++ at equal steps "
        "and at equal FLOPs; FLOPs per token measured",
    ),
    L.stage(
        "evaluate",
        code=("components/ebt",),
        reads=(DATA, MODELS),
        params=("model", "training", "energy", "eval", "resources"),
        writes=(EVAL,),
        after=("train",),
        summary="per set: EBT perplexity after each inference step, best-of-N minimum-energy selection, "
        "Transformer++ perplexity on the same windows",
    ),
    L.report_stage(
        reads=(EVAL, MODELS, DATA),
        params=("data", "model", "training", "energy", "eval"),
        plots={
            "thinking.csv": {"x": "steps", "y": "ppl", "template": "linear", "color": "set"},
            "best_of_n.csv": {"x": "n", "y": "ppl", "template": "linear", "color": "set"},
        },
        after=("evaluate",),
        summary="claims 1-4 with verdicts; perplexity vs inference steps per set",
    ),
)
