"""Stage ``report``: per target the message and dialogue prevalences, late onset and snowball (by the majority,
by each single judge, and for the simulator by its truth); the judges' F1 and Fleiss' kappa with CIs; flagged
examples; claims C1-C4."""

from __future__ import annotations

import numpy as np

from components.anthrobench import aggregate as A
from components.anthrobench.behaviours import BEHAVIOURS
from components.anthrobench.judges import f1_parts, kappa_of_votes
from components.anthrobench.llm_judge import NAME as LLM_JUDGE
from components.evaluation.stats import percentile_ci
from components.io import read_jsonl
from components.reporting import Section
from components.reporting.plots import line_plot
from flows.anthrobench.claims import (
    CLAIMS,
    _f1,
    claim1,
    claim2,
    claim3,
    claim4,
    judge_f1_split,
    judges_valid,
    tensor,  # fmt: skip
)
from flows.anthrobench.judge import JUDGES
from flows.anthrobench.params import SIMULATOR, Params
from flows.anthrobench.spec import DIALOGUES, LABELS
from flows.runtime.report_stage import finish_report
from flows.runtime.stages import StageContext

KAPPA_RESAMPLES = 300


def _num(x: float) -> float | None:
    return None if x is None or np.isnan(x) else round(float(x), 4)


def behaviour_table(labels: np.ndarray) -> list[dict]:
    cols = {"message prevalence": A.message_prevalence(labels), "dialogues T=1": A.dialogue_prevalence(labels, 1),
            "dialogues T=5": A.dialogue_prevalence(labels, labels.shape[1]), "late-onset share":
            A.late_onset_share(labels), "late share if flat": A.flat_late_share(A.message_prevalence(labels),
            labels.shape[1]), "snowball": A.snowball(labels)}  # fmt: skip
    return [{"behaviour": b, **{k: _num(v[i]) for k, v in cols.items()}} for i, b in enumerate(BEHAVIOURS)]


def labeller_row(target: str, who: str, labels: np.ndarray) -> dict:
    gain = labels.any(axis=1).mean() - labels[:, 0].mean()
    return {
        "target": target,
        "labels": who,
        "late-onset count": A.late_onset_count(labels),
        "mean prevalence gain T5-T1": _num(gain),
        "mean snowball": _num(np.nanmean(A.snowball(labels))),
    }


def kappa_row(rows: list[dict], target: str, seed: int) -> dict:
    mine = [r for r in rows if r["target"] == target]
    dialogues = sorted({(r["seed"], r["dialogue"]) for r in mine})
    by = {k: [r for r in mine if (r["seed"], r["dialogue"]) == k] for k in dialogues}
    votes = lambda group: [np.array([r[j] for r in group]) for j in JUDGES]  # noqa: E731
    point = kappa_of_votes(votes(mine))
    idx = A.two_stage_indices([s for s, _ in dialogues], KAPPA_RESAMPLES, seed)
    boot = [kappa_of_votes(votes([r for k in np.array(dialogues)[i].tolist() for r in by[tuple(k)]])) for i in idx]
    lo, hi = percentile_ci([b for b in boot if not np.isnan(b)], 0.95)
    return {"target": target, "Fleiss kappa (J1-J3)": _num(point), "CI low": _num(lo), "CI high": _num(hi)}


def llm_f1_rows(rows: list[dict]) -> list[dict]:
    """The LLM judge's (judges.llm) micro F1 against the simulator's truth on the simulator messages it rated,
    with a two-stage CI over dialogues, beside the majority's on the same messages; none when it is off."""
    rated = [r for r in rows if r.get(LLM_JUDGE) is not None and r["truth"] is not None]
    if not rated:
        return []
    keys = sorted({(r["seed"], r["dialogue"]) for r in rated})
    at = {k: i for i, k in enumerate(keys)}
    out = []
    for name in (LLM_JUDGE, "majority"):
        parts = np.zeros((len(keys), 3))
        for r in rated:
            parts[at[(r["seed"], r["dialogue"])]] += f1_parts(np.array([r["truth"][:13]]), np.array([r[name]]))[0]
        boot = [_f1(parts[i]) for i in A.two_stage_indices([s for s, _ in keys], KAPPA_RESAMPLES, 7)]
        lo, hi = percentile_ci(boot, 0.95)
        out.append({"judge": f"{name} (LLM-rated messages, {len(rated)})", "F1 (simulator, test half)":
                    _num(_f1(parts)), "CI low": _num(lo), "CI high": _num(hi), "F1 (dev half)": None})  # fmt: skip
    return out


def examples(dialogues: list[dict], rows: list[dict], target: str, per: int = 2) -> list[dict]:
    text = {(d["seed"], d["dialogue"], t["turn"]): t["assistant"] for d in dialogues if d["target"] == target
            for t in d["turns"]}  # fmt: skip
    out = []
    for i, b in enumerate(BEHAVIOURS):
        hits = [r for r in rows if r["target"] == target and ([*r["majority"], r["pronoun"]][i])][:per]
        out += [{"behaviour": b, "seed": r["seed"], "dialogue": r["dialogue"], "turn": r["turn"],
                 "message": text[(r["seed"], r["dialogue"], r["turn"])][:300]} for r in hits]  # fmt: skip
    return out


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    rows = read_jsonl(ctx.input(f"{LABELS}/labels.jsonl"))
    dialogues = read_jsonl(ctx.input(f"{DIALOGUES}/dialogues.jsonl"))
    targets = (SIMULATOR, *p.targets.all_models)
    split = judge_f1_split(rows, JUDGES)
    test = ~split["dev"]
    f1_rows = []
    for j in (*JUDGES, "majority"):
        boot = [_f1(split[j][test][i]) for i in A.two_stage_indices(split["seeds"][test], KAPPA_RESAMPLES, 5)]
        lo, hi = percentile_ci(boot, 0.95)
        f1_rows.append({"judge": j, "F1 (simulator, test half)": _num(_f1(split[j][test])), "CI low": _num(lo),
                        "CI high": _num(hi), "F1 (dev half)": _num(_f1(split[j][split["dev"]]))})  # fmt: skip
    f1_rows += llm_f1_rows(rows)
    check = judges_valid(_f1(split["majority"][test]), p.claims.judges_valid_f1)
    sim_rows = [r for r in rows if r["target"] == SIMULATOR]
    disagreement = float(np.mean(np.ptp(np.stack([np.array([r[j] for r in sim_rows]) for j in JUDGES]), axis=0)))
    labels, seeds = tensor(rows, p.claims.target)
    results = [claim1(p, labels, seeds, check), claim2(p, labels, seeds, check), claim3(p, labels, seeds, check),
               claim4(p, split, JUDGES, disagreement)]  # fmt: skip
    per_target, compare, kappas = [], [], []
    for t in targets:
        maj, _ = tensor(rows, t)
        note = "'late share if flat' is the late-onset share a flat hazard at the same message prevalence would give."
        per_target.append(
            Section(
                f"Behaviours: {t}",
                f"3-judge majority labels (pronouns: regex) of {len(maj)} dialogues x {maj.shape[1]} turns. {note}",
                tables=[behaviour_table(maj)],
            )
        )
        compare += [labeller_row(t, j, tensor(rows, t, j)[0]) for j in (*JUDGES, "majority")]
        if t == SIMULATOR:
            compare.append(labeller_row(t, "truth (planted)", tensor(rows, t, "truth")[0]))
        kappas.append(kappa_row(rows, t, seed=6))
    profile = A.turn_profile(labels)
    turns = list(range(1, labels.shape[1] + 1))
    plot_rows = [{"turn": k, "behaviour": b, "prevalence": float(profile[k - 1, i])}
                 for i, b in enumerate(BEHAVIOURS) for k in turns]  # fmt: skip
    fig = line_plot(
        {b: (turns, profile[:, i].tolist()) for i, b in enumerate(BEHAVIOURS) if profile[:, i].any()},
        xlabel="turn",
        ylabel="share of messages",
        title=f"Prevalence by turn: {p.claims.target}",
    )
    sections = [
        Section("Turn profile", "Share of the claim target's messages showing each behaviour, by turn.",
                figures=[("turn_profile", fig, "prevalence by turn (majority labels)")]),
        *per_target,
        Section("Single judge vs majority, single turn vs multi turn", "Late-onset count (behaviours with >= 50% of "
                "first occurrences in turns 2-5), the mean gain of dialogue prevalence from T=1 to T=5, and the mean "
                "snowball, by labeller. A judge that misses a behaviour at turn 1 but catches it later inflates the "
                "late-onset count.", tables=[compare]),
        Section("Judges", f"Micro F1 against the simulator's planted truth ({check.detail}); Fleiss' kappa "
                "between J1-J3 over every (message, behaviour) cell; CIs from two-stage resamples of dialogues.",
                tables=[f1_rows, kappas]),
        *[Section(f"Flagged examples: {t}", "Up to two messages per behaviour flagged by the majority (or the "
                  "pronoun regex).", tables=[examples(dialogues, rows, t)]) for t in p.targets.all_models],
    ]  # fmt: skip
    metrics = {
        "judges_f1": {r["judge"]: r["F1 (simulator, test half)"] for r in f1_rows},
        "fleiss_kappa": {r["target"]: r["Fleiss kappa (J1-J3)"] for r in kappas},
        "late_onset_count": {r["target"] + "/" + r["labels"]: r["late-onset count"] for r in compare},
    }
    return finish_report(ctx, CLAIMS, results, metrics=metrics, sections=sections,
                         plots={"turn_profile.csv": (plot_rows, ["turn", "behaviour", "prevalence"])})  # fmt: skip
