"""neuraldb's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import SHARED, Layout, Paper

PAPER = Paper(19, "neuraldb", "NeuralDB: edited facts stored as a gated neural key-value database", "19-neuraldb.md")

L = Layout("neuraldb")
DATA, MODEL, EDITS = (L.out(n) for n in ("data", "model", "edits"))
SOURCES = "data/sources"  # the shared sources stage's output (the Austen filler text), read by the data stage

STAGES = (
    L.stage(
        "data",
        code=(
            "components/editing/facts.py",
            "components/editing/loaders.py",
            "components/training/tokenizer.py",
            "components/data/validate.py",
        ),
        reads=(SOURCES,),
        params=("seed", "data", "editing.m", "editing.seeds", "editing.dev_edits", "model.seq_len"),
        writes=(DATA,),
        after=(f"{SHARED}:sources",),
        summary="synthetic facts, counterfactual edit sets per seed and a dev split, Austen filler, BPE tokens "
        "(GX-checked)",
    ),
    L.stage(
        "train",
        code=("components/editing/train_lm.py", "components/models/tiny_lm.py", "components/training"),
        reads=(DATA,),
        params=("seed", "model", "training", "resources"),
        writes=(MODEL,),
        after=("data",),
        summary="train the tiny LM on the facts plus filler (MLflow child run with the model)",
    ),
    L.stage(
        "edit",
        code=(
            L.module_file("extended"),
            "components/editing",
            "components/models/tiny_lm.py",
            "components/data/validate.py",
        ),  # tiny_lm: the KV cache of greedy fluency generation
        reads=(DATA, MODEL),
        params=("seed", "model", "editing", "extended", "resources"),
        writes=(EDITS,),
        after=("train",),
        summary="MEMIT, AlphaEdit and NeuralDB at each m and seed; per-fact metrics, held-out NLL, fluency; "
        "gamma sweep",
    ),
    L.report_stage(
        reads=(EDITS,),
        params=("seed", "editing.m", "editing.seeds"),
        plots={
            "metrics_vs_m.csv": {"x": "m", "y": "efficacy", "template": "linear", "color": "method", "x_scale": "log"},
            "gamma_sweep.csv": {"x": "gamma", "y": "generalisation", "template": "linear"},
        },
        after=("edit",),
        summary="claims 1-4 with verdicts; metrics vs number of edits per method; gamma sweep; perplexity and fluency",
    ),
)
