"""ofmu's DVC stages: what each reads, which params it uses, what it writes."""

from __future__ import annotations

from flows.specs import StageSpec

D = "data/ofmu"
R = "reports/ofmu"
_CODE = ("flows/ofmu/params.py", "flows/ofmu/__init__.py", "flows/ofmu/common.py")
_UNL = ("components/unlearning",)


def _s(name: str, deps: tuple[str, ...], params: tuple[str, ...], outs: tuple[str, ...], **kw) -> StageSpec:
    return StageSpec(name=name, module=f"flows.ofmu.{name}", deps=(f"flows/ofmu/{name}.py", *_CODE, *deps),
                     params=("profile", *params), outs=outs, **kw)


STAGES = (
    _s("data", ("components/unlearning/tofu.py", "components/data/validate.py", "components/training/tokenizer.py"),
       ("ofmu.data",), (f"{D}/data",),
       summary="synthetic TOFU authors (forget/retain) + WordNet world facts, BPE tokenizer, GX checks"),
    _s("train", (f"{D}/data", *_UNL, "components/models/tiny_lm.py", "components/training"),
       ("ofmu.data", "ofmu.model"), (f"{D}/models",), after=("data",),
       summary="the base LM (all data) and the Retrain LM (retain + world facts only)"),
    _s("unlearn", (f"{D}/data", f"{D}/models", *_UNL), ("ofmu.model", "ofmu.unlearn", "ofmu.data"),
       (f"{D}/unlearn",), after=("train",),
       summary="each method at the matched gradient-evaluation budget per seed; TOFU metrics per question"),
    _s("vision", (*_UNL, "components/data/validate.py"), ("ofmu.vision",), (f"{D}/vision",),
       summary="digits MLP: base and Retrain per scenario and seed, each method, UA/RA/TA/MIA"),
    _s("report", (f"{D}/unlearn", f"{D}/vision", "flows/ofmu/claims.py", "components/evaluation",
                  "components/reporting", "flows/runtime/report_stage.py"),
       ("ofmu.claims", "ofmu.unlearn.seeds", "ofmu.vision.seeds"),
       (f"{R}/report.md", f"{R}/report.html", f"{R}/claims.json", f"{R}/figures"),
       metrics=(f"{R}/metrics.json",), plots=(f"{R}/plots/tradeoff.csv", f"{R}/plots/cosine.csv"),
       plot_axes={"tradeoff.csv": {"x": "log10_fq", "y": "mu", "template": "scatter"},
                  "cosine.csv": {"x": "step", "y": "abs_cos", "template": "linear"}},
       after=("unlearn", "vision"), summary="claims 1-4 with verdicts; FQ-MU trade-off, gradient cosine, vision table"),
)
