"""Stage ``report``: claims 1-4 with verdicts, and the report with plots, tables and metrics."""

from __future__ import annotations

import numpy as np

from components.io import read_json, read_jsonl
from components.reporting import Section
from components.reporting.plots import bar_plot, errorbar_plot, line_plot
from components.scaling.allocation import optimal_loss
from components.scaling.sanity import fit_flags
from flows.qualitypajama import claims as C
from flows.qualitypajama.common import kind
from flows.qualitypajama.params import Params
from flows.qualitypajama.spec import CURATED, FITS, GRID, REWRITE
from flows.runtime.report_stage import finish_report
from flows.runtime.stages import StageContext


def _scale_note(rows: list[dict], budgets: dict) -> str:
    return (
        f"Mini scale: trained compute {budgets['smallest_trained']:.1e}-{budgets['largest_trained']:.1e} FLOPs "
        f"(N ≤ {max(r['N'] for r in rows):,} non-embedding params, D ≤ {max(r['D'] for r in rows):,} tokens), "
        "many orders of magnitude below the paper's 100M-8B parameters and 100M-200B tokens; "
        "a verdict here says whether the effect shows at this scale, not whether the paper is right."
    )


def evaluate_claims(ctx: StageContext[Params], fits: dict, samples: dict, rows: list[dict]) -> list:
    p = ctx.params
    cl = p.claims
    base = cl.baseline
    others = [n for n in p.interventions if n != base]
    targets = [n for n in others if kind(n) in ("minhash", "qa")] or others
    budgets = fits["budgets"]
    note = _scale_note(rows, budgets)
    f = fits["fits"]
    return [
        C.claim_exponents(f, samples, base, targets, delta=cl.delta_exponent, level=cl.level, note=note),
        C.claim_opposing(f, samples, base, others, d_exp=cl.delta_exponent, d_log=cl.delta_log_coefficient, level=cl.level, note=note),
        C.claim_reversal(samples, p.interventions, budgets["smallest_trained"], budgets["target"], level=cl.level, note=note),
        C.claim_allocation(f, samples, p.interventions, budgets["target"], ratio=cl.allocation_ratio, level=cl.level, note=note),
    ]


def _loss_section(rows: list[dict], fits: dict) -> Section:
    series, curves = {}, {}
    for name, fit in fits["fits"].items():
        sub = [r for r in rows if r["intervention"] == name]
        series[name] = ([r["flops"] for r in sub], [r["loss"] for r in sub])
        if fit["usable"]:
            c = np.geomspace(min(series[name][0]), fits["budgets"]["target"], 60)
            law = type("Law", (), fit["full"])
            curves[name] = (c.tolist(), [optimal_loss(law, x) for x in c])
    fig = line_plot(series, fits=curves, xlabel="training compute C = 6ND (FLOPs)", ylabel="mean held-out loss (nats/token)",
                    title="Loss vs compute; curves: fitted compute-optimal frontier", logx=True)
    table = [{"intervention": n, **{k: _num(v) for k, v in fit["full"].items() if k in ("A", "B", "E", "alpha", "beta")},
              **{f"{k} 95% CI": _interval(v) for k, v in fit["ci"].items() if k in ("alpha", "beta", "E")}}
             for n, fit in fits["fits"].items()]
    text = ("Each point is one cooldown branch of one warmup-stable-decay run (a separate-run stand-in, see the README). "
            "Fits: L = E + A/N^alpha + B/D^beta (Chinchilla convention; the paper pairs A/alpha with D, so its alpha is our beta).")
    return Section("Training grid and fitted laws", text, figures=[("loss_vs_compute", fig, "Loss against compute per intervention")], tables=[table])


def _num(v, fmt: str = ".4g") -> str:
    return "n/a" if v is None else format(v, fmt)


def _interval(v) -> str:
    lo, hi = v if v else (None, None)
    return "n/a" if lo is None or hi is None else f"[{lo:.3g}, {hi:.3g}]"


def _params_section(fits: dict) -> Section:
    names = list(fits["fits"])
    figs = []
    for param in ("alpha", "beta"):
        vals = [fits["fits"][n]["full"][param] for n in names]
        lo = [(fits["fits"][n]["ci"][param] or [None, None])[0] for n in names]
        hi = [(fits["fits"][n]["ci"][param] or [None, None])[1] for n in names]
        figs.append((f"{param}_ci", errorbar_plot(names, vals, lo, hi, xlabel=param, title=f"{param} with 95% bootstrap CI", reference=None), f"{param} per intervention"))
    alloc = [
        {"intervention": n, **({f"{k} @ target": _num(v) for k, v in fits["fits"][n]["allocation"]["target"].items()}
                               if fits["fits"][n]["allocation"] else {"note": "degenerate fit (a non-positive or infinite parameter): no allocation"})}
        for n in names
    ]
    rank = [{"validation sets": k, "Spearman rho": "n/a" if v is None else f"{v:.2f}"} for k, v in fits["ranking"]["spearman"].items()]
    return Section("Exponents, compute-optimal allocation and ranking agreement",
                   "Allocation at the target compute (the claims' projection budget). Spearman rho compares the interventions' "
                   "projected-loss ranking between held-out validation sets.", figures=figs, tables=[alloc, rank])


def _curation_section(curated: dict, rewrite: dict) -> Section:
    rows = [{"intervention": n, **{k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in m.items()
             if k in ("documents", "retained_bytes_frac", "precision", "recall", "f1")}} for n, m in curated.items()]
    figs = []
    for name, m in curated.items():
        if m.get("drop_reasons"):
            figs.append((f"drops_{name}", bar_plot(m["drop_reasons"], title=f"{name}: documents dropped per reason"), f"Drop reasons ({name})"))
    synth = [{"style": k.removeprefix("synthetic_"), **v} for k, v in rewrite.items() if k.startswith("synthetic_")]
    text = ("Precision/recall are scored against the injected ground truth (near-copies for dedup, junk for filters). "
            "Synthetic documents rewritten by `template` come from the deterministic non-LLM stand-in, not from an LLM.")
    return Section("Curation and rewriting", text, figures=figs, tables=[rows, synth] if synth else [rows])


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    rows = read_jsonl(ctx.input(f"{GRID}/results.jsonl"))
    fits = read_json(ctx.input(f"{FITS}/fits.json"))
    samples = {n: np.load(ctx.input(f"{FITS}/bootstrap-{n}.npy")) for n in p.interventions}
    claims = evaluate_claims(ctx, fits, samples, rows)
    flags = [flag for n, f in fits["fits"].items() for flag in fit_flags(n, f["full"])]
    curated = read_json(ctx.input(f"{CURATED}/metrics.json"))
    rewrite = read_json(ctx.input(f"{REWRITE}/summary.json"))
    metrics = {
        "fits": {n: f["full"] for n, f in fits["fits"].items()},
        "allocation_at_target": {n: (f["allocation"] or {}).get("target") for n, f in fits["fits"].items()},
        "curation": {n: {k: v for k, v in m.items() if isinstance(v, (int, float))} for n, m in curated.items()},
        "ranking_spearman": fits["ranking"]["spearman"],
    }
    sections = [_curation_section(curated, rewrite), _loss_section(rows, fits), _params_section(fits)]
    return finish_report(ctx, C.CLAIMS, claims, extra={"flags": flags}, metrics=metrics, sections=sections,
                         plots={"loss_vs_compute.csv": (rows, ["intervention", "N", "D", "flops", "loss"])})
