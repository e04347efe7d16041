"""daze's claims (card 15), declared once (``CLAIMS``) and decided from the numbers computed in the run.

Seeds are the top-level resampling unit (two-stage bootstrap: seeds, then triggered states or episodes within
them). Every env-level part carries the precondition that the clean agents learned the task (their benign
return reaches ``claims.learned`` of the maximum): an attack result on an agent that never learned says nothing.
"""

from __future__ import annotations

import numpy as np

from components.backdoor.victim import task_for
from components.evaluation import claims as CL
from components.evaluation.claim_spec import ClaimSpec
from components.evaluation.stats import percentile_ci

NOTE = (
    "Mini scale: PPO for tens of thousands of steps on CartPole-v1 and InvertedPendulum-v5 (the paper: "
    "MuJoCo locomotion, Atari and robots at millions of steps)."
)
_SEEDS = "triggered states x seeds (two-stage: seeds, then states)"

CLAIMS = (
    ClaimSpec(
        "C1",
        "Daze plants the backdoor without touching rewards: mean ASR >= 0.9 and the lower 95% bound "
        ">= 0.8 on every env, and every reward logged in Daze training is the clean reward",
        metric="attack success rate",
        method="daze",
        baseline=None,
        rule="composite",
        unit=_SEEDS,
        paper_value="ASR 92.4% HalfCheetah, 94.1% Hopper",
        scale_note=NOTE,
    ),
    ClaimSpec(
        "C2",
        "Stealth: BR(Daze) / BR(clean) >= 0.95 on every env (CI of the ratio above 0.90)",
        metric="benign return ratio",
        method="daze",
        baseline="clean",
        rule="composite",
        unit="episodes x seeds (two-stage, seeds paired by index)",
        paper_value="1627.8 / 1736.3 HalfCheetah",
        scale_note=NOTE,
    ),
    ClaimSpec(
        "C3",
        "In continuous control Daze beats TrojDRL-style reward poisoning at equal beta: ASR(Daze) - ASR(TrojDRL) > 0",
        metric="ASR difference",
        method="daze",
        baseline="trojdrl",
        unit=_SEEDS + "; paired by seed index and draw",
        paper_value="92.4% vs 20.3% (HalfCheetah)",
        scale_note=NOTE,
    ),
    ClaimSpec(
        "C4",
        "Transfer proxy: Daze's ASR stays >= 0.8 (lower 95% bound) under +-20% mass and length "
        "perturbation; a proxy for the paper's hardware transfer, not hardware",
        metric="ASR under perturbation",
        method="daze",
        baseline=None,
        rule="composite",
        unit=_SEEDS,
        paper_value="92.3% on a real robot",
        scale_note=NOTE + " Perturbed simulators stand in for real hardware.",
    ),
)
C1, C2, C3, C4 = CLAIMS


def _by_seed(rows: list[dict], key: str) -> dict[int, np.ndarray]:
    seeds = sorted({r["seed"] for r in rows})
    return {s: np.array([r[key] for r in rows if r["seed"] == s], float) for s in seeds}


def learned_guard(spec: ClaimSpec, env: str, episodes: list[dict], share: float) -> CL.ClaimResult:
    """Precondition: the clean agents' mean benign return reaches ``share`` of the task's maximum return."""
    rets = [e["return"] for e in episodes if e["env"] == env and e["method"] == "clean" and e["condition"] == "clean"]
    top = float(task_for(env).max_steps)
    value = float(np.mean(rets)) / top if rets else 0.0
    return spec.part(
        f"{env}/learned",
        f"the clean agents learned {env} (BR >= {share:g} x {top:g})",
        rule="point",
        direction="greater",
    ).simple(
        effect=value,
        threshold=share - 1e-9,
        metric="clean BR / max return",
        method="clean",
        baseline=None,
        n_units=len(rets),
        details={"max_return": top, "clean_br": float(np.mean(rets)) if rets else None},
    )


def asr_part(spec: ClaimSpec, pid: str, statement: str, hits: list[dict], lower: float, c, seed: int):
    values = [h["hit"] for h in hits]
    return spec.part(pid, statement, rule="standard", direction="greater").standard(
        method_values=values,
        baseline_values=None,
        clusters=[h["seed"] for h in hits],
        threshold=lower,
        delta=c.delta_asr,
        seed=seed,
        n_resamples=c.n_resamples,
        level=c.level,
    )


def ratio_ci(num: dict[int, np.ndarray], den: dict[int, np.ndarray], *, n: int, level: float, seed: int):
    """(point, lo, hi) of mean(num) / mean(den): seeds drawn with replacement (paired by index), then episodes
    within each drawn seed, separately for each arm. Hand-written: the kit's two-stage bootstrap is for means."""
    seeds = sorted(set(num) & set(den))
    rng = np.random.default_rng(seed)
    point = float(np.mean(np.concatenate([num[s] for s in seeds])) / np.mean(np.concatenate([den[s] for s in seeds])))
    draws = rng.integers(0, len(seeds), size=(n, len(seeds)))
    stats = np.empty(n)
    for b in range(n):
        top = [rng.choice(num[seeds[i]], num[seeds[i]].size) for i in draws[b]]
        bot = [rng.choice(den[seeds[i]], den[seeds[i]].size) for i in draws[b]]
        stats[b] = np.mean(np.concatenate(top)) / max(np.mean(np.concatenate(bot)), 1e-12)
    lo, hi = percentile_ci(stats, level)
    return point, lo, hi, seeds


def _hits(states: list[dict], env: str, method: str, condition: str = "clean") -> list[dict]:
    return [s for s in states if s["env"] == env and s["method"] == method and s["condition"] == condition]


def claim1(p, states: list[dict], episodes: list[dict], integrity: dict[str, dict]) -> CL.ClaimResult:
    """Per env: ASR lower bound > asr_lower (standard), mean ASR > asr_mean (point), guarded by the clean agents
    having learned; plus the reward-integrity check over every Daze run."""
    c, parts = p.claims, []
    for e in p.envs:
        hits = _hits(states, e.id, "daze")
        guard = learned_guard(C1, e.id, episodes, c.learned)
        lower = asr_part(
            C1,
            f"{e.id}/lower",
            f"ASR(Daze) on {e.id}: lower 95% bound > {c.asr_lower:g}",
            hits,
            c.asr_lower,
            c,
            seed=11,
        )
        mean = C1.part(
            f"{e.id}/mean", f"ASR(Daze) on {e.id}: mean > {c.asr_mean:g}", rule="point", direction="greater"
        ).simple(
            effect=float(np.mean([h["hit"] for h in hits])),
            threshold=c.asr_mean,
            metric="mean ASR",
            method="daze",
            baseline=None,
            n_units=len(hits),
            n_seeds=len({h["seed"] for h in hits}),
            cluster_unit=None,
        )
        parts.append(C1.part(e.id, f"the backdoor works on {e.id}").composite([lower, mean], preconditions=[guard]))
    bad = {k: v for k, v in integrity.items() if v["max_gap"] > 0}
    parts.append(
        C1.part(
            "reward-integrity",
            "every reward logged during Daze training equals the clean reward function on the same transition",
            rule="check",
        ).simple(
            effect=float(max((v["max_gap"] for v in integrity.values()), default=0.0)),
            metric="max |reward gap|",
            method="daze",
            baseline=None,
            n_units=int(sum(v["steps"] for v in integrity.values())),
            details={"passed": bool(integrity) and not bad, "runs": sorted(integrity), "failing_runs": sorted(bad)},
        )
    )
    return C1.composite(parts, headline=0)


def claim2(p, episodes: list[dict]) -> CL.ClaimResult:
    c, parts = p.claims, []
    for i, e in enumerate(p.envs):
        rows = {
            m: [x for x in episodes if x["env"] == e.id and x["method"] == m and x["condition"] == "clean"]
            for m in ("daze", "clean")
        }
        num, den = _by_seed(rows["daze"], "return"), _by_seed(rows["clean"], "return")
        point, lo, hi, seeds = ratio_ci(num, den, n=c.n_resamples, level=c.level, seed=21 + i)
        # the CI's statistic on each seed alone: the rule's t-interval on them joins the bootstrap CI
        per_seed = [float(np.mean(num[s]) / max(float(np.mean(den[s])), 1e-12)) - 1.0 for s in seeds]
        n_units = len(rows["daze"]) + len(rows["clean"])
        ni = C2.part(
            f"{e.id}/lower",
            f"BR ratio on {e.id}: lower 95% bound > {c.ratio_lower:g}",
            rule="non-inferiority",
            direction="greater",
        ).from_ci(
            effect=point - 1.0,
            ci_low=lo - 1.0,
            ci_high=hi - 1.0,
            threshold=-(1.0 - c.ratio_lower),
            n_units=n_units,
            n_seeds=len(seeds),
            ci_level=c.level,
            seed_effects=per_seed,
            power_reason="a ratio of two arms' mean returns with its CI from per-seed ratios: the kit's planted "
            "power plants a shift in paired per-unit differences, which a ratio of unpaired means does not have",
            details={
                "ratio": point,
                "ratio_ci": [lo, hi],
                "effect_is": "ratio - 1",
                "seeds": seeds,
                "br_daze": float(np.mean([x["return"] for x in rows["daze"]])),
                "br_clean": float(np.mean([x["return"] for x in rows["clean"]])),
            },
        )
        pt = C2.part(
            f"{e.id}/point", f"BR ratio on {e.id}: point >= {c.ratio_point:g}", rule="point", direction="greater"
        ).simple(
            effect=point,
            threshold=c.ratio_point - 1e-9,
            metric="BR ratio",
            method="daze",
            baseline="clean",
            n_units=n_units,
            n_seeds=len(seeds),
        )
        guard = learned_guard(C2, e.id, episodes, c.learned)
        parts.append(C2.part(e.id, f"Daze is stealthy on {e.id}").composite([ni, pt], preconditions=[guard]))
    return C2.composite(parts, headline=0)


def _c3_envs(p) -> list:
    with_troj = [e for e in p.envs if "trojdrl" in e.methods]
    continuous = [e for e in with_troj if not e.discrete]
    return continuous or with_troj


def claim3(p, states: list[dict], episodes: list[dict]) -> CL.ClaimResult:
    c = p.claims
    envs = _c3_envs(p)
    if not envs:
        return C3.from_ci(
            effect=None,
            ci_low=None,
            ci_high=None,
            delta=c.delta_asr,
            n_units=0,
            n_seeds=0,
            details={"why": "no env of this profile trains the TrojDRL-style baseline"},
        )
    e = envs[0]
    daze, troj = _hits(states, e.id, "daze"), _hits(states, e.id, "trojdrl")
    key = lambda h: (h["seed"], h["item"])  # noqa: E731 - pairs by seed index and draw number
    tk = {key(h): h["hit"] for h in troj}
    pairs = [(h, tk[key(h)]) for h in daze if key(h) in tk]
    return C3.standard(
        method_values=[h["hit"] for h, _ in pairs],
        baseline_values=[t for _, t in pairs],
        clusters=[h["seed"] for h, _ in pairs],
        delta=c.delta_asr,
        seed=31,
        n_resamples=c.n_resamples,
        level=c.level,
        statement=f"{C3.statement} (on {e.id}"
        f"{'' if not e.discrete else ', a discrete env: no continuous env trains TrojDRL here'})",
        details={
            "env": e.id,
            "asr_daze": float(np.mean([h["hit"] for h, _ in pairs])) if pairs else None,
            "asr_trojdrl": float(np.mean([t for _, t in pairs])) if pairs else None,
        },
    )


def claim4(p, states: list[dict], episodes: list[dict]) -> CL.ClaimResult:
    c, parts = p.claims, []
    conds = sorted({s["condition"] for s in states if s["condition"] != "clean"})
    for e in p.envs:
        guard = learned_guard(C4, e.id, episodes, c.learned)
        sub = [
            asr_part(
                C4,
                f"{e.id}/{cond}",
                f"ASR(Daze) on {e.id}, {cond}: lower 95% bound > {c.asr_lower:g}",
                _hits(states, e.id, "daze", cond),
                c.asr_lower,
                c,
                seed=41,
            )
            for cond in conds
        ]
        parts.append(C4.part(e.id, f"the backdoor transfers on {e.id}").composite(sub, preconditions=[guard]))
    return C4.composite(parts, headline=0)
