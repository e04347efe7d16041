"""The card's four claims, each decided by its rule from the fits computed in this run.

Comparisons are made through ``components.evaluation.scaling_claims``; this module
only says which comparisons each claim names and how sub-verdicts combine:
a claim that says "for at least one intervention/pair" is reproduced when any
comparison reproduces it, not reproduced when every comparison rejects it, and
inconclusive otherwise.
"""

from __future__ import annotations

import math

import numpy as np

from components.evaluation import claims as CL
from components.evaluation import scaling_claims as S
from components.evaluation.claim_spec import ClaimSpec
from components.evaluation.power import planted_power
from components.scaling.gap_slope import run_slopes, slope_of_term_change

REFITS = "bootstrap refits"
RUN_UNIT = "run (seed within N)"  # what the bootstraps resample
SHARED = ("E",)  # one E for all interventions: its difference is 0 by construction, not compared

# Per run: the baseline (claims.baseline), the headline comparison's metric/method (chosen on the fits), the
# scale note (from the trained grid) and, for C3 and C4, the statement with the run's budgets and ratio.
CLAIMS = (
    ClaimSpec(
        "C1",
        "Exponents move: for MinHash dedup or the QA mix vs raw, the CI of Δalpha or Δbeta excludes 0 "
        "(at mini scale also by the paired gap-slope test, the labelled proxy for Δbeta).",
        metric="Δalpha or Δbeta (intervention − baseline)",
        method="minhash or qa mix",
        baseline="raw",
        rule="composite",
        unit=REFITS,
        cluster_unit=None,
        direction=None,
    ),
    ClaimSpec(
        "C2",
        "Opposing forces: for at least one intervention one scaling-law component improves while another "
        "worsens (both CIs exclude 0).",
        metric="components improved and worsened vs baseline",
        method="interventions",
        baseline="raw",
        rule="composite",
        unit=REFITS,
        cluster_unit=None,
        direction=None,
    ),
    ClaimSpec(
        "C3",
        "Rank reversal: two interventions' loss order at the smallest trained compute differs from their "
        "order projected at the target compute.",
        metric="P(reversal)",
        method="intervention pair",
        baseline=None,
        rule="composite",
        unit="bootstrap draws",
        cluster_unit=None,
        direction=None,
    ),
    ClaimSpec(
        "C4",
        "Different allocation: the compute-optimal D/N of two interventions differs by at least the "
        "claims.allocation_ratio (CI of the log ratio above its log).",
        metric="log[(D/N)_a / (D/N)_b] at the target compute",
        method="intervention pair",
        baseline=None,
        rule="composite",
        unit=REFITS,
        cluster_unit=None,
        direction=None,
    ),
)
C1, C2, C3, C4 = CLAIMS


def _decisive(subs: list[CL.ClaimResult], verdict: str) -> CL.ClaimResult:
    """The comparison that stands for the claim: one with the claim's verdict, furthest from 0 in CI widths."""
    same = [s for s in subs if s.verdict == verdict] or subs

    def strength(s: CL.ClaimResult) -> float:
        if not _finite(s.effect, s.ci_low, s.ci_high):
            return -math.inf
        z = abs(s.effect) / max(s.ci_high - s.ci_low, 1e-12)
        return z if math.isfinite(z) else -math.inf

    return max(same, key=strength)


def _finite(*xs: float | None) -> bool:
    return all(x is not None and math.isfinite(x) for x in xs)


def _part(spec: ClaimSpec, d: dict, *, n_units: int, n_seeds: int, note: str, level: float, **kw) -> CL.ClaimResult:
    """One comparison of fitted parameters (a part declared by ``spec``): its refit-bootstrap CI under a CI rule.

    The refits resample training runs (seeds within N), so ``n_seeds`` is the seeds each N holds: with one the
    verdict is decided for that one trained model (the rule as of 2026-12-04). No per-seed effects are passed (a
    law is not fitted per seed), so with 2 or more the record says the small-sample interval is missing.
    """
    return spec.from_ci(
        effect=d["effect"],
        ci_low=d["ci_low"],
        ci_high=d["ci_high"],
        n_units=n_units,
        n_seeds=n_seeds,
        ci_level=level,
        scale_note=note,
        **kw,
    )


def gap_slope_part(
    rows,
    baseline,
    name,
    law,
    budgets,
    *,
    delta,
    level,
    note,
    seed,
    n_resamples,
    power_sims,
    power_resamples,
    power_delta_beta,
) -> CL.ClaimResult:
    """The paired gap-slope test for ``name`` vs ``baseline`` (``components.scaling.gap_slope``), with its power.

    Per run, the slope of the loss gap against log D; runs (seeds within N) are the bootstrap units. The
    no-effect band is the slope a Δbeta of ``delta`` gives under ``law`` (the baseline's law) on these budgets;
    the power is the share of "reproduced" over ``power_sims`` simulated runs with a planted Δbeta of 0 (the
    false-positive rate) and ``power_delta_beta``.
    """
    g = run_slopes(rows, baseline, name)
    band = abs(slope_of_term_change(law["B"], law["beta"], delta, budgets))
    spec = C1.part(
        f"{name}/gap-slope",
        "mini-scale proxy: the loss gap's slope against log D within a run is not 0 (the D term differs: beta, or B)",
        rule="ci-excludes",
        direction="two-sided",
        cluster_unit=RUN_UNIT,
        unit="runs",
        metric=f"gap slope d[L({name}) − L({baseline})]/dlog D (mini-scale proxy for Δbeta)",
        method=name,
    )

    def decide(v, c, s):
        return spec.standard(
            method_values=v,
            baseline_values=None,
            clusters=c,
            strata=s,
            delta=band,
            seed=seed,
            n_resamples=power_resamples,
            level=level,
            baseline=baseline,
        ).verdict

    planted = [0.0, power_delta_beta]
    slopes = [slope_of_term_change(law["B"], law["beta"], d, budgets) for d in planted]
    rows_p = (
        planted_power(
            g["values"],
            clusters=g["runs"],
            strata=g["strata"],
            planted=slopes,
            decide=decide,
            n_sim=power_sims,
            seed=seed,
        )
        if power_sims
        else []
    )
    power = {
        "planted_delta_beta": planted,
        "planted_slope": slopes,
        "n_sim": power_sims,
        "n_resamples": power_resamples,
        "rows": [r.to_dict() for r in rows_p],
        "how": "the run's per-run slopes with their mean removed and the slope of a planted Δbeta added "
        "(B and beta of the baseline law), runs redrawn within N, each decided by this rule",
    }
    return spec.standard(
        method_values=g["values"],
        baseline_values=None,
        clusters=g["runs"],
        strata=g["strata"],
        delta=band,
        seed=seed,
        n_resamples=n_resamples,
        level=level,
        baseline=baseline,
        scale_note=note,
        details={
            "runs": g["runs"],
            "slopes": g["values"].tolist(),
            "band_delta_beta": delta,
            "law": law,
            "power": power,
        },
    )


def claim_exponents(
    fits, samples, baseline, targets, *, delta, level, note, n_seeds: int = 1, gap_parts: dict | None = None
) -> CL.ClaimResult:
    subs = []
    for name in targets:
        deltas = S.param_deltas(
            samples[name], samples[baseline], fits[name]["full"], fits[baseline]["full"], level=level
        )
        for exp in ("alpha", "beta"):
            spec = C1.part(
                f"{name}/{exp}",
                "",
                rule="ci-excludes",
                direction="two-sided",
                cluster_unit=RUN_UNIT,
                metric=f"Δ{exp} ({name} − {baseline})",
                method=name,
            )
            subs.append(
                _part(
                    spec,
                    deltas[exp],
                    baseline=baseline,
                    delta=delta,
                    n_units=len(samples[baseline]),
                    n_seeds=n_seeds,
                    note=note,
                    level=level,
                )
            )
        if gap_parts and name in gap_parts:
            subs.append(gap_parts[name])
    verdict = CL.combine_any(s.verdict for s in subs)
    pick = _decisive(subs, verdict)
    return C1.composite(
        subs,
        how="any",
        headline=subs.index(pick),
        metric=pick.metric,
        method=pick.method,
        baseline=baseline,
        ci_level=level,
        scale_note=note,
    )


def _change_parts(
    name: str, baseline: str, deltas: dict, direction_of: str, *, d_exp, d_log, n_units, n_seeds, note, level
) -> list[CL.ClaimResult]:
    """Per component, "it moved the ``direction_of`` way (improved / worsened)" under the standard rule."""
    out = []
    for k, d in deltas.items():
        if k in SHARED:
            continue
        better = "greater" if S.IMPROVES[k] > 0 else "less"
        direction = better if direction_of == "improved" else ("less" if better == "greater" else "greater")
        spec = C2.part(
            f"{name}/{k}/{direction_of}",
            "",
            rule="standard",
            direction=direction,
            cluster_unit=RUN_UNIT,
            metric=f"Δ{k} ({name} − {baseline})",
            method=name,
        )
        out.append(
            _part(
                spec,
                d,
                baseline=baseline,
                delta=d_log if k in S.LOG_PARAMS else d_exp,
                n_units=n_units,
                n_seeds=n_seeds,
                note=note,
                level=level,
            )
        )
    return out


def claim_opposing(fits, samples, baseline, others, *, d_exp, d_log, level, note, n_seeds: int = 1) -> CL.ClaimResult:
    subs = []
    for name in others:
        deltas = S.param_deltas(
            samples[name], samples[baseline], fits[name]["full"], fits[baseline]["full"], level=level
        )
        kw = dict(d_exp=d_exp, d_log=d_log, n_units=len(samples[baseline]), n_seeds=n_seeds, note=note, level=level)
        sides = [
            C2.part(f"{name}/{side}", f"some component {side}", metric="components", method=name).composite(
                _change_parts(name, baseline, deltas, side, **kw),
                how="any",
                headline=None,
                baseline=baseline,
                scale_note=note,
            )
            for side in ("improved", "worsened")
        ]
        subs.append(
            C2.part(
                name, f"{name}: one component improves while another worsens", metric="components", method=name
            ).composite(
                sides,
                how="all",
                headline=None,
                baseline=baseline,
                scale_note=note,
                details={"classes": {k: S.classify(v, k) for k, v in deltas.items() if k not in SHARED}},
            )
        )
    hits = [s.method for s in subs if s.verdict == CL.REPRODUCED]
    return C2.composite(
        subs,
        how="any",
        headline=None,
        method=", ".join(hits) or ", ".join(others),
        baseline=baseline,
        scale_note=note,
        details={
            "delta_exponents": d_exp,
            "delta_log_coefficients": d_log,
            "not_compared": "E (one E shared by all interventions)",
        },
    )


def claim_reversal(samples, names, c_small, c_big, *, level, note, n_seeds: int = 1) -> CL.ClaimResult:
    subs = []
    for a, b in S.pairs(names):
        r = S.reversal_probability(samples[a], samples[b], c_small, c_big)
        pair = {k: v for k, v in r.items() if k != "p"}
        if math.isfinite(r["p"]):
            subs.append(
                C3.part(f"{a}/{b}", "", rule="probability", cluster_unit=RUN_UNIT).simple(
                    effect=r["p"],
                    method=a,
                    baseline=b,
                    n_units=int(r["draws"]),
                    n_seeds=n_seeds,
                    details=pair,
                    scale_note=note,
                )
            )
        else:  # no usable paired refits: the pair cannot be judged (inconclusive, not "no reversal")
            check = C3.part(f"{a}/{b}/defined", "", rule="check").simple(
                effect=None,
                method=a,
                baseline=b,
                n_units=int(r["draws"]),
                scale_note=note,
                details={**pair, "passed": False, "what": "a reversal probability is defined"},
            )
            subs.append(
                C3.part(f"{a}/{b}", "", rule="composite").composite(
                    [check], how="all", preconditions=[check], headline=None, method=a, baseline=b, scale_note=note
                )
            )
    pick = max(subs, key=lambda s: s.effect if s.effect is not None else -1.0)
    return C3.composite(
        subs,
        statement="Rank reversal: two interventions' loss order at the smallest trained compute differs from "
        f"their order projected at the target compute (between {c_small:.2e} and {c_big:.2e} FLOPs).",
        how="any",
        headline=subs.index(pick),
        method=pick.method,
        baseline=pick.baseline,
        ci_level=None,
        scale_note=note,
        details={"note": "the pair with the highest reversal probability is shown"},
    )


def claim_allocation(fits, samples, names, c_target, *, ratio, level, note, n_seeds: int = 1) -> CL.ClaimResult:
    log_r = math.log(ratio)
    subs = []
    for a, b in S.pairs(names):
        r = S.log_allocation_ratio(samples[a], samples[b], fits[a]["full"], fits[b]["full"], c_target, level=level)
        if r["effect"] < 0:  # orient so the larger D/N is first
            a, b, r = b, a, {**r, "effect": -r["effect"], "ci_low": -r["ci_high"], "ci_high": -r["ci_low"]}
        spec = C4.part(
            f"{a}/{b}",
            "",
            rule="ci-excludes",
            direction="two-sided",
            cluster_unit=RUN_UNIT,
            metric=f"log[(D/N)_{a} / (D/N)_{b}] at {c_target:.2e} FLOPs",
            method=a,
            baseline=b,
        )
        subs.append(
            _part(
                spec,
                r,
                threshold=log_r,
                delta=log_r,
                n_units=int(r["draws"]),
                n_seeds=n_seeds,
                note=note,
                level=level,
                details={"ratio": float(np.exp(r["effect"])) if _finite(r["effect"]) else None},
            )
        )
    verdict = CL.combine_any(s.verdict for s in subs)
    pick = _decisive(subs, verdict)
    return C4.composite(
        subs,
        statement=f"Different allocation: the compute-optimal D/N of two interventions differs by ≥{ratio:g}× "
        f"(CI of the log ratio above log {ratio:g}).",
        how="any",
        headline=subs.index(pick),
        metric=pick.metric,
        method=pick.method,
        baseline=pick.baseline,
        ci_level=level,
        scale_note=note,
    )
