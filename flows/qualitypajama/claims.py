"""The card's four claims, each decided by its rule from the fits computed in this run.

Comparisons are made through ``components.evaluation.scaling_claims``; this module
only says which comparisons each claim names and how sub-verdicts combine:
a claim that says "for at least one intervention/pair" is reproduced when any
comparison reproduces it, not reproduced when every comparison rejects it, and
inconclusive otherwise.

The refit CIs resample training runs, and each N holds two or more seeds' runs, so the standard rule's
small-sample interval applies (shared/papers/README.md, step 2): each comparison also gets its effect on each
seed's own law (``fits.json`` ``per_seed``), and its CI is the hull of the refit bootstrap CI and a t-interval
(k - 1 df) on those per-seed effects. A comparison that is not reproduced carries its power: runs simulated from
the fitted laws with the run's noise (``refit-power.npz``, made in the fit stage), each compared exactly as the
real run (refit CI, per-seed effects, hull), moved to each planted effect and decided by the part's own rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from components.evaluation import claims as CL
from components.evaluation import scaling_claims as S
from components.evaluation.claim_spec import ClaimSpec
from components.evaluation.power import planted_power, shifted_power
from components.evaluation.seed_ci import t_interval
from components.scaling.allocation import tokens_per_param
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


PerSeed = dict[str, list]  # intervention -> its law (a dict, or None where not usable) on each seed's runs alone
Triple = Callable[[dict, dict, "PerSeed | None"], dict]  # (full fits, samples, per-seed laws) -> one comparison


def seed_param_effects(per_seed: PerSeed | None, name: str, base: str, param: str) -> list[float] | None:
    """``param``'s difference (log for A, B, E) between ``name``'s and ``base``'s laws on each seed's runs; None
    when a seed's law is missing or not usable (no per-seed effect: no small-sample interval)."""
    if per_seed is None or name not in per_seed or base not in per_seed:
        return None
    out = []
    for la, lb in zip(per_seed[name], per_seed[base], strict=True):
        e = math.nan if la is None or lb is None else S._point(la, lb, param)
        if not math.isfinite(e):
            return None
        out.append(float(e))
    return out


def seed_allocation_effects(per_seed: PerSeed | None, a: str, b: str, c: float) -> list[float] | None:
    """log[(D/N)_a / (D/N)_b] at compute ``c`` on each seed's laws; None when a seed's law is missing or unusable."""
    if per_seed is None or a not in per_seed or b not in per_seed:
        return None
    out = []
    for la, lb in zip(per_seed[a], per_seed[b], strict=True):
        rows = [None if x is None else np.array([x[k] for k in S.PARAMS], float) for x in (la, lb)]
        if any(r is None or not S._valid(r) for r in rows):
            return None
        out.append(math.log(tokens_per_param(S._law(rows[0]), c)) - math.log(tokens_per_param(S._law(rows[1]), c)))
    return out


def hull(d: dict, n_seeds: int, level: float) -> tuple[float, float, float]:
    """(effect, low, high) of a comparison as its record states it: the refit CI widened to the hull with the
    t-interval on its per-seed effects (as ``from_ci`` with ``seed_effects``); no CI (NaN) with two or more seeds
    and no per-seed effects, or without a finite refit CI."""
    effect, lo, hi = (float("nan") if v is None else float(v) for v in (d["effect"], d["ci_low"], d["ci_high"]))
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return effect, math.nan, math.nan
    effects = d.get("seed_effects")
    if n_seeds >= 2:
        small = t_interval(effects, level) if effects is not None and len(effects) >= 2 else None
        if small is None:
            return effect, math.nan, math.nan
        lo, hi = min(lo, small[0]), max(hi, small[1])
    return effect, lo, hi


@dataclass(frozen=True)
class RefitPower:
    """Runs simulated from the fitted laws (the fit stage's ``refit-power.npz``): per run, every simulated
    intervention's full law, its sane refits (NaN rows dropped; an intervention over the trusted share of
    dropped refits has all NaN, as in the real run) and its per-seed laws."""

    runs: list[tuple[dict, dict, PerSeed]]  # (full fits as {"full": law}, samples, per-seed laws)
    simulated: tuple[str, ...]
    deltas: tuple[float, ...]
    n_boot: int
    seed: int
    how: str = ""
    none_because: str = ""  # why no runs were simulated (``runs`` empty): said in every part not reproduced

    def attach(self, result: CL.ClaimResult, triple: Triple, *, names: tuple[str, ...]) -> CL.ClaimResult:
        """``result`` with the power of its rule over the simulated runs (``shifted_power``), unless reproduced;
        a reason instead where its laws were not simulated or it has no point effect."""
        if result.verdict == CL.REPRODUCED:
            return result
        if not self.runs:
            why = self.none_because or "no runs were simulated"
            return replace(result, details={**result.details, "power_not_applicable": why})
        missing = [n for n in names if n not in self.simulated]
        if missing or result.effect is None or not math.isfinite(result.effect):
            why = (
                f"the law fitted on this run for {', '.join(missing)} is not usable, so there is no law to simulate "
                "its runs from"
                if missing
                else "the full fits give no point effect to move to a planted one"
            )
            return replace(result, details={**result.details, "power_not_applicable": why})
        stored = result.to_dict()
        sims = iter([hull(triple(*run), result.n_seeds, result.ci_level or 0.95) for run in self.runs])

        def decide(effect: float, low: float, high: float) -> str:
            if not all(math.isfinite(x) for x in (effect, low, high)):
                return CL.INCONCLUSIVE  # the simulated run, like the real one, gives no CI here
            return CL.derive_verdict({**stored, "effect": effect, "ci_low": low, "ci_high": high})

        side = -1.0 if result.direction == "less" else 1.0
        rows = shifted_power(
            lambda _rng: next(sims),
            observed=result.effect,
            planted=[side * k * (result.delta or 0.0) for k in self.deltas],
            decide=decide,
            n_sim=len(self.runs),
            seed=self.seed,
        )
        power = {
            "planted_in_deltas": list(self.deltas),
            "n_sim": len(self.runs),
            "n_resamples": self.n_boot,
            "rows": [r.to_dict() for r in rows],
            "how": "runs simulated from the fitted laws with the run's noise, each refitted, bootstrapped over runs "
            f"({self.n_boot} refits) and fitted per seed, compared as the real run (refit CI hulled with the "
            "t-interval on the per-seed effects), moved so the expected effect is the planted one (a location "
            "shift) and decided by this part's rule" + (f"; {self.how}" if self.how else ""),
        }
        return replace(result, details={**result.details, "power": power})


def _part(
    spec: ClaimSpec,
    d: dict,
    *,
    n_units: int,
    n_seeds: int,
    note: str,
    level: float,
    details: dict | None = None,
    **kw,
) -> CL.ClaimResult:
    """One comparison of fitted parameters (a part declared by ``spec``): its refit-bootstrap CI under a CI rule.

    The refits resample training runs (seeds within N), so ``n_seeds`` is the seeds each N holds: with one the
    verdict is decided for that one trained model (the rule as of 2026-12-04). With two or more, ``d["seed_effects"]``
    (the comparison on each seed's own law) gives the small-sample interval: the CI is the hull of the refit CI
    and their t-interval. Without them (a seed's law not usable) no CI is given, so the part is inconclusive.
    """
    details = dict(details or {})
    lo, hi = d["ci_low"], d["ci_high"]
    effects = d.get("seed_effects")
    finite = _finite(lo, hi)
    if n_seeds >= 2 and effects is None and finite:
        details.update(
            interval="none: a seed's own law is not usable, so the comparison has no per-seed effects for the "
            "small-sample interval the rule asks beside the refit CI (that CI alone is too narrow with few seeds); "
            "no CI is given",
            bootstrap_ci=[lo, hi],
        )
        lo = hi = None
    return spec.from_ci(
        effect=d["effect"],
        ci_low=lo,
        ci_high=hi,
        n_units=n_units,
        n_seeds=n_seeds,
        ci_level=level,
        scale_note=note,
        seed_effects=effects if n_seeds >= 2 else None,
        details=details,
        **kw,
    )


def param_triple(name: str, base: str, param: str, level: float) -> Triple:
    """The comparison of ``param`` (``name`` − ``base``) on one run: full-fit point, refit CI, per-seed effects."""

    def triple(fits: dict, samples: dict, per_seed: PerSeed | None) -> dict:
        d = S.param_deltas(samples[name], samples[base], fits[name]["full"], fits[base]["full"], level=level)[param]
        return {**d, "seed_effects": seed_param_effects(per_seed, name, base, param)}

    return triple


def allocation_triple(a: str, b: str, c: float, level: float) -> Triple:
    """log[(D/N)_a / (D/N)_b] at ``c`` on one run: full-fit point, refit CI, per-seed effects."""

    def triple(fits: dict, samples: dict, per_seed: PerSeed | None) -> dict:
        r = S.log_allocation_ratio(samples[a], samples[b], fits[a]["full"], fits[b]["full"], c, level=level)
        return {**r, "seed_effects": seed_allocation_effects(per_seed, a, b, c)}

    return triple


def _with_power(result: CL.ClaimResult, power: RefitPower | None, triple: Triple, names) -> CL.ClaimResult:
    if power is None or result.verdict == CL.REPRODUCED:
        return result
    return power.attach(result, triple, names=tuple(names))


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
    fits,
    samples,
    baseline,
    targets,
    *,
    delta,
    level,
    note,
    n_seeds: int = 1,
    gap_parts: dict | None = None,
    per_seed: PerSeed | None = None,
    power: RefitPower | None = None,
) -> CL.ClaimResult:
    subs = []
    for name in targets:
        for exp in ("alpha", "beta"):
            triple = param_triple(name, baseline, exp, level)
            spec = C1.part(
                f"{name}/{exp}",
                "",
                rule="ci-excludes",
                direction="two-sided",
                cluster_unit=RUN_UNIT,
                metric=f"Δ{exp} ({name} − {baseline})",
                method=name,
            )
            part = _part(
                spec,
                triple(fits, samples, per_seed),
                baseline=baseline,
                delta=delta,
                n_units=len(samples[baseline]),
                n_seeds=n_seeds,
                note=note,
                level=level,
            )
            subs.append(_with_power(part, power, triple, (name, baseline)))
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
    name: str,
    baseline: str,
    run: tuple[dict, dict, PerSeed | None],
    direction_of: str,
    *,
    d_exp,
    d_log,
    n_units,
    n_seeds,
    note,
    level,
    power: RefitPower | None = None,
) -> list[CL.ClaimResult]:
    """Per component, "it moved the ``direction_of`` way (improved / worsened)" under the standard rule."""
    out = []
    for k in S.PARAMS:
        if k in SHARED:
            continue
        triple = param_triple(name, baseline, k, level)
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
        part = _part(
            spec,
            triple(*run),
            baseline=baseline,
            delta=d_log if k in S.LOG_PARAMS else d_exp,
            n_units=n_units,
            n_seeds=n_seeds,
            note=note,
            level=level,
        )
        out.append(_with_power(part, power, triple, (name, baseline)))
    return out


def claim_opposing(
    fits,
    samples,
    baseline,
    others,
    *,
    d_exp,
    d_log,
    level,
    note,
    n_seeds: int = 1,
    per_seed: PerSeed | None = None,
    power: RefitPower | None = None,
) -> CL.ClaimResult:
    subs = []
    for name in others:
        deltas = S.param_deltas(
            samples[name], samples[baseline], fits[name]["full"], fits[baseline]["full"], level=level
        )
        kw = dict(
            d_exp=d_exp,
            d_log=d_log,
            n_units=len(samples[baseline]),
            n_seeds=n_seeds,
            note=note,
            level=level,
            power=power,
        )
        sides = [
            C2.part(f"{name}/{side}", f"some component {side}", metric="components", method=name).composite(
                _change_parts(name, baseline, (fits, samples, per_seed), side, **kw),
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


REVERSAL_NO_POWER = (
    "no planted effect: the share of refit draws whose loss order flips between the two budgets is not an effect "
    "that can be moved by a planted size (the location shift the power checks use); planting a reversal means "
    "choosing a pair of laws that cross in the projected range, which the card does not give"
)


def claim_reversal(samples, names, c_small, c_big, *, level, note, n_seeds: int = 1) -> CL.ClaimResult:
    subs = []
    for a, b in S.pairs(names):
        r = S.reversal_probability(samples[a], samples[b], c_small, c_big)
        pair = {k: v for k, v in r.items() if k != "p"}
        if math.isfinite(r["p"]):
            part = C3.part(f"{a}/{b}", "", rule="probability", cluster_unit=RUN_UNIT).simple(
                effect=r["p"],
                method=a,
                baseline=b,
                n_units=int(r["draws"]),
                n_seeds=n_seeds,
                details=pair,
                scale_note=note,
            )
            if part.verdict != CL.REPRODUCED:
                part.details["power_not_applicable"] = REVERSAL_NO_POWER
            subs.append(part)
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


def claim_allocation(
    fits,
    samples,
    names,
    c_target,
    *,
    ratio,
    level,
    note,
    n_seeds: int = 1,
    per_seed: PerSeed | None = None,
    power: RefitPower | None = None,
) -> CL.ClaimResult:
    log_r = math.log(ratio)
    subs = []
    for a, b in S.pairs(names):
        r = allocation_triple(a, b, c_target, level)(fits, samples, per_seed)
        if r["effect"] < 0:  # orient so the larger D/N is first (the power's simulated runs keep this order)
            a, b = b, a
        triple = allocation_triple(a, b, c_target, level)
        r = triple(fits, samples, per_seed)
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
        part = _part(
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
        subs.append(_with_power(part, power, triple, (a, b)))
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
