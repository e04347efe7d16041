"""implicit-planning's claims (card claims 1-4), declared once and decided from the generations of the run.

Units are paired: the same (seed, family pair, test prompt, sample) under two conditions, which share their
sampling random numbers. Seeds are the top-level unit (the bootstrap draws seeds, then units within them): in the
control models a seed is a trained model and a sampling seed; in SmolLM2 it is a sampling seed.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from components.evaluation import claims as CL
from components.evaluation.claim_spec import ClaimSpec
from components.evaluation.testability import Check

SCALE_135M = (
    "SmolLM2-135M is below the paper's stated regime (implicit planning 'from 1B parameters'): a null here is "
    "consistent with the paper, not evidence against it."
)
CONTROL_NOTE = (
    "synthetic control language and a 4-layer d=128 transformer: a check of the method, not of the paper's LMs"
)
ENGAGED = "steering engaged"
REAL_RUN = "real model run"
UNITS = "generations (seed x pair x test prompt x sample), paired across conditions"

CLAIMS = (
    ClaimSpec(
        "C1",
        "Forward planning in the control models: steering at the end of line 1 moves the rhyme to RF2; "
        "the article follows the steered word in the positive control but not in the negative control",
        metric="RF2 rate / article-agreement rate",
        method="steered",
        baseline="unsteered",
        unit=UNITS,
        scale_note=CONTROL_NOTE,
        rule="composite",
        direction=None,
    ),
    ClaimSpec(
        "C2",
        "Forward planning in SmolLM2-135M: with the layer chosen on training prompts, the steered RF2 "
        "rate on test prompts beats the unsteered rate",
        metric="RF2 rhyme rate (CMU dict)",
        method="steered",
        baseline="unsteered",
        unit=UNITS,
        scale_note=SCALE_135M,
        bounds=(0.0, 1.0),
        requires=(REAL_RUN, ENGAGED),
    ),
    ClaimSpec(
        "C3",
        "Backward planning: the share of pre-rhyme positions with KL(steered || unsteered) > 1 is higher "
        "under steering than under the equal-norm random vector (control model and SmolLM2)",
        metric="share of pre-rhyme positions with KL > 1",
        method="steered",
        baseline="random (equal norm)",
        unit=UNITS,
        scale_note=SCALE_135M,
        rule="composite",
        direction=None,
    ),
    ClaimSpec(
        "C4",
        "QA: steering towards the other-article noun raises the article-flip rate above the random-vector "
        "rate (SmolLM2)",
        metric="article-flip rate",
        method="steered",
        baseline="random (equal norm)",
        unit="answers (seed x noun-pair direction x sample), paired",
        scale_note=SCALE_135M,
        bounds=(0.0, 1.0),
        requires=(REAL_RUN, ENGAGED),
    ),
)
C1, C2, C3, C4 = CLAIMS
C1_RHYME = C1.part(
    "rhyme",
    "Positive control: steered RF2 rate above unsteered",
    rule="standard",
    direction="greater",
    metric="RF2 rhyme rate",
    bounds=(0.0, 1.0),
    requires=(ENGAGED,),
)
C1_ART_POS = C1.part(
    "article-positive",
    "Positive control: the article agrees with RF2's article more often under steering than unsteered",
    rule="standard",
    direction="greater",
    metric="share of lines with RF2's article",
    bounds=(0.0, 1.0),
)
C1_ART_NEG = C1.part(
    "article-negative",
    "Negative control: steering does not raise the RF2-article share by more "
    "than the margin (unsteered - steered is non-inferior at -margin)",
    metric="share of lines with RF2's article (unsteered - steered)",
    rule="non-inferiority",
    direction="greater",
    method="unsteered",
    baseline="steered",
)
C3_CONTROL = C3.part(
    "control",
    "Positive control: KL>1 share steered above random",
    rule="standard",
    direction="greater",
    requires=(ENGAGED,),
)
C3_REAL = C3.part(
    "smollm2",
    "SmolLM2: KL>1 share steered above random",
    rule="standard",
    direction="greater",
    requires=(REAL_RUN, ENGAGED),
)


def _paired(rows: list[dict], model: str, a: str, b: str, value, keys=("seed", "rf1", "rf2", "prompt", "sample")):
    """(values under condition a, values under b, seeds) for units present and defined in both."""
    by = {}
    for r in rows:
        if r["model"] == model and r["condition"] in (a, b):
            by.setdefault(tuple(r[k] for k in keys), {})[r["condition"]] = r
    xs, ys, seeds, dropped = [], [], [], 0
    for key, d in sorted(by.items(), key=lambda kv: str(kv[0])):
        if a not in d or b not in d:
            continue
        va, vb = value(d[a]), value(d[b])
        if (
            va is None
            or vb is None
            or (isinstance(va, float) and math.isnan(va))
            or (isinstance(vb, float) and math.isnan(vb))
        ):
            dropped += 1
            continue
        xs.append(float(va))
        ys.append(float(vb))
        seeds.append(key[0])
    return np.asarray(xs), np.asarray(ys), seeds, dropped


def engaged(rows: list[dict], model: str, threshold: float) -> Check:
    """Testability precondition "mechanism engaged": the steering vector moved the model's next-token
    distributions between the steered position and the rhyme word (mean over steered generations of the largest
    KL(steered || unsteered) there, ``kl_pos``, at least ``threshold`` nats). A vector that moves nothing cannot
    test planning: the claim is then "not testable here", not "not reproduced". The KL at the steered position
    itself is reported beside it (the hook engages there or nowhere)."""
    steered = [r for r in rows if r["model"] == model and r["condition"] == "steered"]
    vals = [r["kl_pos"] for r in steered if not math.isnan(r.get("kl_pos", math.nan))]
    at = [r["kl_at_pos"] for r in steered if not math.isnan(r.get("kl_at_pos", math.nan))]
    m = float(np.mean(vals)) if vals else 0.0
    m_at = float(np.mean(at)) if at else 0.0
    return Check(
        ENGAGED,
        m >= threshold,
        f"mean largest KL(steered || unsteered) from the steered position to the rhyme word: {m:.4f} nats over "
        f"{len(vals)} generations (needs >= {threshold}); at the steered position itself {m_at:.4f}",
    )


def declared(real: bool) -> tuple[ClaimSpec, ...]:
    """The declarations this run decides: without the real model (smoke), C2 and C4 become failed checks."""
    if real:
        return CLAIMS
    return tuple(dataclasses.replace(c, rule="check", direction=None) if c.id in ("C2", "C4") else c for c in CLAIMS)


def _not_run(spec: ClaimSpec, why: str) -> CL.ClaimResult:
    checks = [Check(REAL_RUN, False, why)] + [Check(r, False, why) for r in spec.requires if r != REAL_RUN]
    return spec.simple(rule="check", effect=None, n_units=0, details={"passed": False}, testability=checks)


def _std(spec: ClaimSpec, p, x, y, seeds, dropped, checks=(), **kw) -> CL.ClaimResult:
    c = p.claims
    return spec.standard(
        method_values=x,
        baseline_values=y,
        clusters=seeds,
        delta=c.delta,
        seed=1,
        n_resamples=c.n_resamples,
        level=c.level,
        testability=checks,
        details={
            "dropped_undefined": dropped,
            "method_mean": float(np.mean(x)) if len(x) else None,
            "baseline_mean": float(np.mean(y)) if len(y) else None,
        },
        **kw,
    )


def claim1(p, rows: list[dict], article_of) -> CL.ClaimResult:
    pos, neg = "control-positive", "control-negative"
    rhyme = _std(
        C1_RHYME,
        p,
        *_paired(rows, pos, "steered", "unsteered", lambda r: r["rf2_hit"]),
        checks=[engaged(rows, pos, p.claims.engaged_kl)],
    )

    def art(r):
        return None if r["article"] is None else int(r["article"] == article_of(r["rf2"]))

    art_pos = _std(C1_ART_POS, p, *_paired(rows, pos, "steered", "unsteered", art))
    xs, ys, seeds, dropped = _paired(rows, neg, "unsteered", "steered", art)
    c = p.claims
    art_neg = C1_ART_NEG.standard(
        method_values=xs,
        baseline_values=ys,
        clusters=seeds,
        margin=c.article_margin,
        seed=1,
        n_resamples=c.n_resamples,
        level=c.level,
        details={"dropped_undefined": dropped},
    )
    return C1.composite([rhyme, art_pos, art_neg])


def claim2(p, real_rows: list[dict]) -> CL.ClaimResult:
    if not real_rows:
        return _not_run(C2, "data.real is off (smoke): SmolLM2 was not run")
    x, y, seeds, dropped = _paired(real_rows, "smollm2", "steered", "unsteered", lambda r: r["rf2_hit"])
    return _std(
        C2,
        p,
        x,
        y,
        seeds,
        dropped,
        checks=[
            Check(REAL_RUN, True, f"{len(x)} paired generations"),
            engaged(real_rows, "smollm2", p.claims.engaged_kl),
        ],
    )


def claim3(p, rows: list[dict], real_rows: list[dict]) -> CL.ClaimResult:
    ctl = _std(
        C3_CONTROL,
        p,
        *_paired(rows, "control-positive", "steered", "random", lambda r: r["kl_share"]),
        checks=[engaged(rows, "control-positive", p.claims.engaged_kl)],
    )
    if not real_rows:
        real = _not_run(C3_REAL, "data.real is off (smoke): SmolLM2 was not run")
    else:
        real = _std(
            C3_REAL,
            p,
            *_paired(real_rows, "smollm2", "steered", "random", lambda r: r["kl_share"]),
            checks=[
                Check(REAL_RUN, True, "SmolLM2 generations present"),
                engaged(real_rows, "smollm2", p.claims.engaged_kl),
            ],
        )
    return C3.composite([ctl, real])


def claim4(p, qa_rows: list[dict]) -> CL.ClaimResult:
    if not qa_rows:
        return _not_run(C4, "data.real is off (smoke): SmolLM2 was not run")
    qa_rows = [r for r in qa_rows if r.get("model", "smollm2") == "smollm2"]  # Gemma3's rows (behind a flag): no claim
    rows = [{**r, "model": "qa", "rf1": r["src"], "rf2": r["tgt"], "prompt": 0} for r in qa_rows]
    x, y, seeds, dropped = _paired(rows, "qa", "steered", "random", lambda r: r["flip"])
    changed = float(np.mean([a != b for a, b in zip(x, y, strict=True)])) if len(x) else 0.0
    return _std(
        C4,
        p,
        x,
        y,
        seeds,
        dropped,
        checks=[
            Check(REAL_RUN, True, f"{len(x)} paired answers"),
            Check(ENGAGED, changed > 0, f"share of paired answers whose flip differs between arms: {changed:.3f}"),
        ],
    )
