"""vip's folders and DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import Layout, Paper

PAPER = Paper(14, "vip", "VIP: variance-informed predictive rollout allocation for group RL", "14-vip.md")

L = Layout("vip", code=("common",))
DATA, SFT, RUNS = L.out("data"), L.out("sft"), L.out("runs")
_VIP = ("components/vip", "components/rl_text", "components/models")  # the policy: TinyLM or a HF causal LM

STAGES = (
    L.stage(
        "data",
        code=(
            "components/vip/task.py",
            "components/vip/features.py",
            "components/vip/dapo_format.py",
            "components/data/validate.py",
        ),
        params=("data",),
        writes=(DATA,),
        summary="arithmetic prompts in tiers (SFT / RL train / held-out), MiniLM + hashed features, GX checks",
    ),
    L.stage(
        "sft",
        code=(
            "components/vip/task.py",
            "components/vip/evaluation.py",
            "components/vip/codec.py",
            "components/vip/policy.py",
            "components/rl_text/sampling.py",
            "components/models",
            "components/training/qa_lm.py",
        ),
        reads=(DATA,),
        params=("data", "model", "rl.eval_k", "rl.max_new", "resources"),
        writes=(SFT,),
        after=("data",),
        summary="the char-level tiny LM SFT'd to partial competence; per-tier success checked",
    ),
    L.stage(
        "rl",
        code=_VIP,
        reads=(DATA, SFT),
        params=("rl", "resources"),
        writes=(RUNS,),
        after=("sft",),
        summary="every method x seed at the same rollout budget: curves, per-step logs, predictions",
    ),
    L.report_stage(
        reads=(DATA, SFT, RUNS),
        params=("rl.seeds", "claims"),
        plots={
            "accuracy.csv": {"x": "rollouts", "y": "mean_at_k", "template": "linear", "color": "method"},
            "allocation.csv": {"x": "n", "y": "count", "template": "bar", "color": "method"},
        },
        after=("rl",),
        summary="claims 1-4 with verdicts; accuracy vs rollouts, allocation histograms",
    ),
)
