"""Stage ``report``: claims 1-4, the FQ-MU trade-off per method, the gradient cosine over training, vision results."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from components.io import read_jsonl
from components.reporting import Section
from components.reporting.plots import line_plot
from flows.ofmu.claims import CLAIMS, claim1, claim2, claim3, claim4, fq_of, index_items, mu_of
from flows.ofmu.params import Params
from flows.ofmu.spec import UNLEARN, VISION
from flows.runtime.report_stage import finish_report, power_section
from flows.runtime.stages import StageContext


def lm_table(p, idx, runs) -> list[dict]:
    rows = []
    for m in ["base", "retain", *p.unlearn.methods]:
        seeds = [-1] if m in ("base", "retain") else p.unlearn.seeds
        mus = [mu_of(idx, m, s) for s in seeds]
        fqs = [fq_of(idx, m, s) for s in seeds]
        f = [idx[(m, s, "forget")] for s in seeds]
        rr = [r for r in runs if r["method"] == m]
        rows.append(
            {
                "method": m,
                "MU": float(np.mean(mus)),
                "FQ (median)": float(np.median(fqs)),
                "forget prob": float(np.mean([x["prob"].mean() for x in f])),
                "forget ROUGE-L": float(np.mean([x["rouge"].mean() for x in f])),
                "forget truth ratio": float(np.mean([x["tr"].mean() for x in f])),
                "steps": rr[0]["steps"] if rr else 0,
                "grad evals": rr[0]["used"] if rr else 0,
                "seconds/run": float(np.mean([r["seconds"] for r in rr])) if rr else 0.0,
            }
        )
    return rows


def tradeoff(p, idx):
    series, csv_rows = {}, []
    for m in p.unlearn.methods:
        pts = [(np.log10(max(fq_of(idx, m, s), 1e-300)), mu_of(idx, m, s)) for s in p.unlearn.seeds]
        series[m] = ([x for x, _ in pts], [y for _, y in pts])
        csv_rows += [{"method": m, "seed": s, "log10_fq": x, "mu": y} for s, (x, y) in zip(p.unlearn.seeds, pts)]
    fig = line_plot(
        series,
        xlabel="log10 forget quality (KS p-value vs Retrain)",
        ylabel="model utility",
        title="Forget quality vs model utility (one point per seed)",
    )
    return fig, csv_rows


def cosine_curve(p, hist):
    acc: dict = defaultdict(lambda: defaultdict(list))
    for h in hist:
        acc[h["method"]][h["evals"]].append(abs(h["cos"]))
    series, csv_rows = {}, []
    for m in [x for x in ("ofmu", "ofmu-beta0", "ofmu-cos2", "graddiff", "npo", "ga") if x in acc]:
        xs = sorted(acc[m])
        ys = [float(np.mean(acc[m][x])) for x in xs]
        series[m] = (xs, ys)
        csv_rows += [{"method": m, "step": x, "abs_cos": y} for x, y in zip(xs, ys)]
    fig = line_plot(
        series,
        xlabel="gradient evaluations spent",
        ylabel="|cos(g_f, g_r)| (mean over seeds)",
        title="Forget/retain gradient cosine over unlearning",
    )
    return fig, csv_rows


def vision_table(vruns) -> list[dict]:
    acc: dict = defaultdict(list)
    for r in vruns:
        acc[(r["scenario"], r["method"])].append(r)
    out = []
    for (sc, m), rs in acc.items():
        out.append(
            {
                "scenario": sc,
                "method": m,
                **{k: float(np.mean([r[k] for r in rs])) for k in ("UA", "RA", "TA", "MIA")},
                "reached UA band": f"{sum(r['in_band'] for r in rs)}/{len(rs)}",
            }
        )
    return out


def tune_table(folder) -> list[dict]:
    """The dev sweep's settings and scores when this run tuned (``tune.jsonl``), else nothing."""
    path = folder / "tune.jsonl"
    if not path.exists():
        return []
    knobs = ("lr", "lr_inner", "alpha", "beta", "inner_steps", "rho0", "rho_growth")
    return [
        {
            "method": r["method"],
            "setting": r["setting"],
            "options": ", ".join(f"{k}={r['options'][k]:g}" for k in knobs if k in r["options"]),
            **{k: v for k, v in r.items() if k not in ("per_seed", "options", "setting", "method")},
        }
        for r in read_jsonl(path)
    ]


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    items = read_jsonl(ctx.input(f"{UNLEARN}/items.jsonl"))
    runs = read_jsonl(ctx.input(f"{UNLEARN}/runs.jsonl"))
    hist = read_jsonl(ctx.input(f"{UNLEARN}/history.jsonl"))
    vruns = read_jsonl(ctx.input(f"{VISION}/runs.jsonl"))
    vcorrect = read_jsonl(ctx.input(f"{VISION}/test_correct.jsonl"))
    idx = index_items(items)
    claims = [claim1(p, idx), claim2(p, idx), claim3(p, hist), claim4(p, vruns, vcorrect)]
    table = lm_table(p, idx, runs)
    fig_t, csv_t = tradeoff(p, idx)
    fig_c, csv_c = cosine_curve(p, hist)
    vt = vision_table(vruns)
    tunes = [t for t in (tune_table(ctx.input(UNLEARN)), tune_table(ctx.input(VISION))) if t]
    metrics = {
        "lm": {r["method"]: {"MU": r["MU"], "FQ": r["FQ (median)"]} for r in table},
        "vision": {f"{r['scenario']}/{r['method']}": {k: r[k] for k in ("UA", "RA", "TA", "MIA")} for r in vt},
        "budget": {"lm": p.unlearn.budget, "vision": p.vision.budget},
    }
    sections = [
        Section(
            "Language: forget quality vs model utility",
            f"Every method spent exactly {p.unlearn.budget} gradient evaluations (one backward pass through one "
            "batch's graph, any order). MU = harmonic mean of answer probability, ROUGE-L recall and "
            "max(0, 1 - truth ratio) on retain and WordNet world-fact questions; FQ = KS p-value of forget-set "
            "truth ratios against the Retrain model.",
            figures=[("tradeoff", fig_t, "FQ vs MU per method and seed")],
            tables=[table],
        ),
        Section(
            "Gradient cosine over training",
            "Mean |cos(g_f, g_r)| per logged step over seeds; claim 3 compares "
            "OFMU with its beta = 0 ablation over the last half.",
            figures=[("cosine", fig_c, "|cos| vs budget spent")],
        ),
        Section(
            "Vision: digits MLP",
            "UA = 1 - forget accuracy, RA/TA = retain/test accuracy, MIA = share of forget "
            "samples a loss-threshold attack calls non-members. Unlearned rows are at the first checkpoint within "
            f"+-{100 * p.claims.ua_band:.0f} points of Retrain's UA (else the end of the budget).",
            tables=[vt],
        ),
        power_section(
            claims,
            p.claims.power_resamples,
            units="questions or steps",
            note="C1's check is its MU part's (runs redrawn and their MU difference recomputed, since MU "
            "is a harmonic mean of split means); C2's is its own (the same simulator); C4's is in its "
            "scenarios' TA part records (claims.json).",
        ),
    ]
    if tunes:
        sections.append(
            Section(
                "Dev-split sweep",
                "Every tuned method ran the same number of settings at the same "
                "budget on the dev split (LM: the dev authors against a reference trained without "
                f"them; vision: {p.vision.tune_scenario}); `chosen` marks the rule's pick.",
                tables=tunes,
            )
        )
    return finish_report(
        ctx,
        CLAIMS,
        claims,
        metrics=metrics,
        sections=sections,
        plots={
            "tradeoff.csv": (csv_t, ["method", "seed", "log10_fq", "mu"]),
            "cosine.csv": (csv_c, ["method", "step", "abs_cos"]),
        },
    )
