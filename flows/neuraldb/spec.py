"""neuraldb's DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import SHARED, StageSpec

ND = "data/neuraldb"
_CODE = ("flows/neuraldb/params.py", "flows/neuraldb/__init__.py")
REPORT = "reports/neuraldb"

STAGES = (
    StageSpec(
        name="data",
        module="flows.neuraldb.data",
        deps=("flows/neuraldb/data.py", *_CODE, "data/sources", "components/editing/facts.py",
              "components/editing/loaders.py", "components/training/tokenizer.py", "components/data/validate.py"),
        params=("profile", "neuraldb.seed", "neuraldb.data", "neuraldb.editing.m", "neuraldb.editing.seeds",
                "neuraldb.editing.dev_edits", "neuraldb.model.seq_len"),
        outs=(f"{ND}/data",),
        after=(f"{SHARED}:sources",),
        summary="synthetic facts, counterfactual edit sets per seed and a dev split, Austen filler, BPE tokens (GX-checked)",
    ),
    StageSpec(
        name="train",
        module="flows.neuraldb.train",
        deps=("flows/neuraldb/train.py", *_CODE, f"{ND}/data", "components/editing/train_lm.py",
              "components/models/tiny_lm.py", "components/training"),
        params=("profile", "neuraldb.seed", "neuraldb.model", "neuraldb.training"),
        outs=(f"{ND}/model",),
        after=("data",),
        summary="train the tiny LM on the facts plus filler (MLflow child run with the model)",
    ),
    StageSpec(
        name="edit",
        module="flows.neuraldb.edit",
        deps=("flows/neuraldb/edit.py", "flows/neuraldb/extended.py", *_CODE, f"{ND}/data", f"{ND}/model",
              "components/editing", "components/data/validate.py"),
        params=("profile", "neuraldb.seed", "neuraldb.model", "neuraldb.editing", "neuraldb.extended"),
        outs=(f"{ND}/edits",),
        after=("train",),
        summary="MEMIT, AlphaEdit and NeuralDB at each m and seed; per-fact metrics, held-out NLL, fluency; gamma sweep",
    ),
    StageSpec(
        name="report",
        module="flows.neuraldb.report",
        deps=("flows/neuraldb/report.py", "flows/neuraldb/claims.py", *_CODE, f"{ND}/edits", "components/reporting",
              "components/evaluation",
              "flows/runtime/report_stage.py"),
        params=("profile", "neuraldb.seed", "neuraldb.editing.m", "neuraldb.editing.seeds", "neuraldb.claims"),
        outs=(f"{REPORT}/report.md", f"{REPORT}/report.html", f"{REPORT}/claims.json", f"{REPORT}/figures"),
        metrics=(f"{REPORT}/metrics.json",),
        plots=(f"{REPORT}/plots/metrics_vs_m.csv", f"{REPORT}/plots/gamma_sweep.csv"),
        plot_axes={"metrics_vs_m.csv": {"x": "m", "y": "efficacy", "template": "linear"},
                   "gamma_sweep.csv": {"x": "gamma", "y": "generalisation", "template": "linear"}},
        after=("edit",),
        summary="claims 1-4 with verdicts; metrics vs number of edits per method; gamma sweep; perplexity and fluency",
    ),
)
