"""daze's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(15, "daze", "Daze: reward-free backdoors implanted through malicious simulator dynamics", "15-daze.md")

L = Layout("daze", code=("common",))
MODELS, EVAL = L.out("models"), L.out("eval")
_CODE = ("components/backdoor", "components/data/validate.py")

STAGES = (
    L.stage(
        "train",
        code=_CODE,
        params=("envs", "train", "resources"),
        writes=(MODELS,),
        summary="PPO agents per (env, method, seed): clean, Daze (malicious simulator), TrojDRL-style reward "
        "poisoning; transition logs with GX reward-integrity and trigger-rate checks; MLflow child runs",
    ),
    L.stage(
        "evaluate",
        code=_CODE,
        reads=(MODELS,),
        params=("envs", "train.seeds", "eval", "resources"),
        writes=(EVAL,),
        after=("train",),
        summary="benign return and ASR on triggered states per agent, in the clean simulator and under "
        "+-20% mass/length perturbation; GX checks",
    ),
    L.report_stage(
        reads=(MODELS, EVAL),
        params=("envs", "train.seeds", "eval"),
        plots={
            "asr.csv": {"x": "asr", "y": "method", "template": "bar_horizontal"},
            "asr_perturbed.csv": {"x": "asr", "y": "condition", "template": "bar_horizontal"},
        },
        after=("evaluate",),
        summary="claims 1-4 with verdicts; ASR and benign return per method and env; ASR under "
        "perturbation; attack cost; learning curves",
    ),
)
