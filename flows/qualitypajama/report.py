"""Stage ``report``: claims 1-4 with verdicts, and the report with plots, tables and metrics."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from components.evaluation import scaling_claims as S
from components.inputs import load_npy, load_npz
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


MAX_DROPPED = 0.025  # refits failing the sanity checks: above half a 95% tail, the CI cannot be trusted


def trusted_samples(fits: dict, samples: dict) -> tuple[dict, list[str]]:
    """Samples of interventions whose dropped (insane) refits exceed MAX_DROPPED become NaN (their comparisons
    are then inconclusive); returns them and a flag per such intervention."""
    out, flags = {}, []
    for n, s in samples.items():
        share = fits[n].get("refits_dropped", 0) / max(len(s), 1)
        if share > MAX_DROPPED:
            flags.append(
                f"{n}: {share:.1%} of refits fail the sanity checks (> {MAX_DROPPED:.1%}): its CIs are not used"
            )
            s = np.full_like(s, np.nan)
        out[n] = s
    return out, flags


def refit_power(ctx: StageContext[Params], fits: dict, deltas) -> C.RefitPower:
    """The fit stage's simulated runs (``refit-power.npz``) as the claims' power check; with no runs, the reason
    why none were made. Each simulated intervention's refits go through the same trust rule as the real run's
    (``trusted_samples``)."""
    info = fits.get("refit_power")
    names = (info or {}).get("simulated") or []
    path = Path(ctx.input(FITS)) / "refit-power.npz"
    if not names or not path.exists():
        usable = [n for n, f in fits["fits"].items() if f.get("usable")]
        if info is None:
            why = "this run's fit stage simulated no runs (its fits.json predates the refit power check)"
        elif not info.get("n_sim"):
            why = "fit.refit_power_sims is 0: no runs were simulated from the fitted laws"
        else:
            why = (
                f"fewer than two of the laws fitted on this run are usable ({', '.join(usable) or 'none'}), so "
                "there is no pair of laws to simulate runs from"
            )
        return C.RefitPower(
            runs=[], simulated=(), deltas=tuple(deltas), n_boot=0, seed=ctx.params.seed, none_because=why
        )
    with load_npz(path) as z:
        arrays = {k: z[k] for k in z.files}
    runs = []
    for i in range(int(info["n_sim"])):
        full = {n: {"full": dict(zip(S.PARAMS, map(float, arrays[f"full-{n}"][i])))} for n in names}
        dropped = {n: {"refits_dropped": int(arrays[f"dropped-{n}"][i])} for n in names}
        samples, _ = trusted_samples(dropped, {n: arrays[f"samples-{n}"][i] for n in names})
        per_seed = {
            n: [
                None if not np.isfinite(row).all() else dict(zip(S.PARAMS, map(float, row)))
                for row in arrays[f"seeds-{n}"][i]
            ]
            for n in names
        }
        runs.append((full, samples, per_seed))
    return C.RefitPower(
        runs=runs,
        simulated=tuple(names),
        deltas=tuple(float(k) for k in deltas),
        n_boot=int(info["n_boot"]),
        seed=ctx.params.seed,
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
    samples, _ = trusted_samples(f, samples)
    seeds = len(p.grid.seeds)  # runs per N every refit draws from
    per_seed = (fits.get("per_seed") or {}).get("laws")
    power = refit_power(ctx, fits, cl.power_deltas)
    law = (fits.get("fitter_power") or {}).get("truth") or f[base]["full"]
    gaps = {
        n: C.gap_slope_part(
            rows,
            base,
            n,
            law,
            p.grid.budgets,
            delta=cl.delta_exponent,
            level=cl.level,
            note=note,
            seed=p.seed,
            n_resamples=cl.n_resamples,
            power_sims=cl.power_sims,
            power_resamples=cl.power_resamples,
            power_delta_beta=p.fit.power_delta_beta,
        )
        for n in targets
    }
    return [
        C.claim_exponents(
            f,
            samples,
            base,
            targets,
            delta=cl.delta_exponent,
            level=cl.level,
            note=note,
            n_seeds=seeds,
            gap_parts=gaps,
            per_seed=per_seed,
            power=power,
        ),
        C.claim_opposing(
            f,
            samples,
            base,
            others,
            d_exp=cl.delta_exponent,
            d_log=cl.delta_log_coefficient,
            level=cl.level,
            note=note,
            n_seeds=seeds,
            per_seed=per_seed,
            power=power,
        ),
        C.claim_reversal(
            samples,
            p.interventions,
            budgets["smallest_trained"],
            budgets["target"],
            level=cl.level,
            note=note,
            n_seeds=seeds,
        ),
        C.claim_allocation(
            f,
            samples,
            p.interventions,
            budgets["target"],
            ratio=cl.allocation_ratio,
            level=cl.level,
            note=note,
            n_seeds=seeds,
            per_seed=per_seed,
            power=power,
        ),
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
    fig = line_plot(
        series,
        fits=curves,
        xlabel="training compute C = 6ND (FLOPs)",
        ylabel="mean held-out loss (nats/token)",
        title="Loss vs compute; curves: fitted compute-optimal frontier",
        logx=True,
    )
    table = [
        {
            "intervention": n,
            **{k: _num(v) for k, v in fit["full"].items() if k in ("A", "B", "E", "alpha", "beta")},
            **{f"{k} 95% CI": _interval(v) for k, v in fit["ci"].items() if k in ("alpha", "beta", "E")},
        }
        for n, fit in fits["fits"].items()
    ]
    text = (
        "Each point is one cooldown branch of one warmup-stable-decay run (a separate-run stand-in, see the README). "
        "Fits: L = E + A/N^alpha + B/D^beta "
        "(Chinchilla convention; the paper pairs A/alpha with D, so its alpha is our beta)."
    )
    return Section(
        "Training grid and fitted laws",
        text,
        figures=[("loss_vs_compute", fig, "Loss against compute per intervention")],
        tables=[table],
    )


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
        figs.append(
            (
                f"{param}_ci",
                errorbar_plot(
                    names, vals, lo, hi, xlabel=param, title=f"{param} with 95% bootstrap CI", reference=None
                ),
                f"{param} per intervention",
            )
        )
    alloc = [
        {
            "intervention": n,
            **(
                {f"{k} @ target": _num(v) for k, v in fits["fits"][n]["allocation"]["target"].items()}
                if fits["fits"][n]["allocation"]
                else {"note": "degenerate fit (a non-positive or infinite parameter): no allocation"}
            ),
        }
        for n in names
    ]
    rank = [
        {"validation sets": k, "Spearman rho": "n/a" if v is None else f"{v:.2f}"}
        for k, v in fits["ranking"]["spearman"].items()
    ]
    return Section(
        "Exponents, compute-optimal allocation and ranking agreement",
        "Allocation at the target compute (the claims' projection budget). Spearman rho compares the interventions' "
        "projected-loss ranking between held-out validation sets.",
        figures=figs,
        tables=[alloc, rank],
    )


def _power_section(fits: dict, claims: list) -> Section:
    """The shared E's state, the fitter's power on this grid and noise, and the gap-slope test's power."""
    e = fits["shared_E"]
    fp = fits.get("fitter_power")
    sims = [
        {
            "sim": i,
            "E": _num(s["E"]),
            "E 95% CI": _interval(s["E_ci"]),
            "E state": s["E_state"],
            "beta CI width": _num(s["beta_ci_width"], ".3f"),
            "Δbeta": _num(s["delta_beta"], ".3f"),
            "Δbeta 95% CI": _interval(s["delta_beta_ci"]),
            "detected": s["detected"],
            "covers truth": s["covers_truth"],
        }
        for i, s in enumerate((fp or {}).get("sims", []))
    ]
    gap = []
    for part in (p for c in claims[:1] for p in c.parts if "/gap-slope" in p["id"]):
        pw = part["details"]["power"]
        for d_beta, r in zip(pw["planted_delta_beta"], pw["rows"]):
            gap.append(
                {
                    "comparison": part["id"],
                    "planted Δbeta": d_beta,
                    "planted slope": _num(r["planted"], ".4f"),
                    "n_sim": r["n_sim"],
                    "reproduced": f"{r['reproduced']:.2f}",
                }
            )
    refit = [
        {
            "comparison": part["id"],
            "planted (x band)": k,
            "planted effect": _num(r["planted"], ".4g"),
            "n_sim": r["n_sim"],
            "reproduced": f"{r['reproduced']:.2f}",
            "not reproduced": f"{r['not_reproduced']:.2f}",
        }
        for part in _refit_parts(claims)
        for k, r in zip(part["details"]["power"]["planted_in_deltas"], part["details"]["power"]["rows"])
    ]
    text = f"Shared E: **{e['state']}** ({e['reason']}). "
    if fp:
        t = fp["truth"]
        text += (
            f"Fitter power: {fp['n_sim']} simulated pairs of the law E = {t['E']:.3g}, A = {t['A']:.3g}, "
            f"alpha = {t['alpha']:.3g}, B = {t['B']:.3g}, beta = {t['beta']:.3g} and the same with beta + "
            f"{fp['delta_beta']:g}, on this run's grid with its noise (run {_num(fp['noise']['run'], '.4f')}, point "
            f"{_num(fp['noise']['point'], '.4f')} in log loss), {fp['refits']} refits each: median Δbeta CI width "
            f"{_num(fp['median_delta_beta_ci_width'], '.3f')}, detected in {fp['detected']} of {fp['n_sim']}. "
        )
    text += (
        "Gap-slope test (the mini-scale proxy in C1): share of simulated runs reproduced at a planted Δbeta of 0 "
        "(false positives) and of the power check's Δbeta."
    )
    rp = fits.get("refit_power") or {}
    if refit:
        text += (
            f" Refit comparisons not reproduced (C1, C2, C4): {rp.get('n_sim')} runs simulated from the fitted laws "
            f"of {', '.join(rp.get('simulated', []))} with this run's noise, each refitted ({rp.get('n_boot')} refits) "
            "and fitted per seed, its CI made as the real one (the refit CI hulled with the t-interval on the per-seed "
            "effects, 1 df with 2 seeds), moved to each planted effect (multiples of the part's band) and decided by "
            "the part's rule. The simulated laws' refits may fail the sanity checks less often than the real ones, "
            "so read these shares as upper bounds."
        )
    return Section(
        "Can this design decide? Shared E, fitter power, gap-slope power, refit power",
        text,
        tables=[t for t in (sims, gap, refit) if t],
    )


def _refit_parts(claims: list):
    """Every leaf comparison (C1-C4) that carries a refit power check, in claim order."""
    stack = [c.to_dict() if hasattr(c, "to_dict") else c for c in claims][::-1]
    while stack:
        c = stack.pop()
        if not isinstance(c, dict):
            continue
        if c.get("rule") == "composite":
            stack.extend(c["parts"][::-1])
        elif "planted_in_deltas" in ((c.get("details") or {}).get("power") or {}):
            yield c


def _curation_section(curated: dict, rewrite: dict) -> Section:
    rows = [
        {
            "intervention": n,
            **{
                k: (f"{v:.3f}" if isinstance(v, float) else v)
                for k, v in m.items()
                if k in ("documents", "retained_bytes_frac", "precision", "recall", "f1")
            },
        }
        for n, m in curated.items()
    ]
    figs = []
    for name, m in curated.items():
        if m.get("drop_reasons"):
            figs.append(
                (
                    f"drops_{name}",
                    bar_plot(m["drop_reasons"], title=f"{name}: documents dropped per reason"),
                    f"Drop reasons ({name})",
                )
            )
    synth = [{"style": k.removeprefix("synthetic_"), **v} for k, v in rewrite.items() if k.startswith("synthetic_")]
    text = (
        "Precision/recall are scored against the injected ground truth (near-copies for dedup, junk for filters). "
        "Synthetic documents rewritten by `template` come from the deterministic non-LLM stand-in, not from an LLM."
    )
    styles = {k.removeprefix("synthetic_"): v for k, v in rewrite.items() if k.startswith("synthetic_")}
    if styles and all(set(v) == {"template"} for v in styles.values()):
        text += (
            " **Every synthetic document in this run is from the template stand-in**: the QA arms are "
            "template-QA data, a stand-in for the paper's LLM rewrites."
        )
    return Section("Curation and rewriting", text, figures=figs, tables=[rows, synth] if synth else [rows])


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    rows = read_jsonl(ctx.input(f"{GRID}/results.jsonl"))
    fits = read_json(ctx.input(f"{FITS}/fits.json"))
    samples = {n: load_npy(ctx.input(f"{FITS}/bootstrap-{n}.npy")) for n in p.interventions}
    claims = evaluate_claims(ctx, fits, samples, rows)
    flags = [flag for n, f in fits["fits"].items() for flag in fit_flags(n, f["full"], check_e=False)]
    flags += trusted_samples(fits["fits"], samples)[1]
    shared = fits["shared_E"]
    if shared["state"] != "identified":
        flags.append(f"shared E not identified: {shared['reason']}")
    curated = read_json(ctx.input(f"{CURATED}/metrics.json"))
    rewrite = read_json(ctx.input(f"{REWRITE}/summary.json"))
    metrics = {
        "fits": {n: f["full"] for n, f in fits["fits"].items()},
        "allocation_at_target": {n: (f["allocation"] or {}).get("target") for n, f in fits["fits"].items()},
        "curation": {n: {k: v for k, v in m.items() if isinstance(v, (int, float))} for n, m in curated.items()},
        "ranking_spearman": fits["ranking"]["spearman"],
    }
    metrics["shared_E"] = {k: shared[k] for k in ("state", "E", "ci")}
    metrics["fitter_power"] = {k: v for k, v in (fits.get("fitter_power") or {}).items() if k != "sims"}
    sections = [
        _curation_section(curated, rewrite),
        _loss_section(rows, fits),
        _params_section(fits),
        _power_section(fits, claims),
    ]
    return finish_report(
        ctx,
        C.CLAIMS,
        claims,
        extra={"flags": flags},
        metrics=metrics,
        sections=sections,
        plots={"loss_vs_compute.csv": (rows, ["intervention", "N", "D", "flops", "loss"])},
    )
