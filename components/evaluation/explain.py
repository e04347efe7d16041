"""A claim's rule and the reason for its verdict, in words, from the numbers stored in its record.

Both are generated, never typed by hand, so the report's sentence always
matches the numbers beside it: :func:`rule_text` says what the rule asks,
:func:`reason` says in one sentence why this record got its verdict.
"""

from __future__ import annotations

from collections.abc import Mapping

from components.evaluation.rules import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, ci_rule_verdict, inside_band


def _g(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.4g}"


def _ci(lo: float | None, hi: float | None) -> str:
    return f"[{_g(lo)}, {_g(hi)}]"


def rule_text(c: Mapping) -> str:
    """What the claim's rule asks, e.g. "reproduced iff the 95% CI of method - baseline lies above 0 and outside
    0 +- 0.01"."""
    rule, side = c.get("rule"), {"greater": "above", "less": "below"}.get(str(c.get("direction")), "beyond")
    t, null, delta = c.get("threshold"), c.get("null") or 0.0, c.get("delta")
    if rule == "standard":
        return (
            f"standard: reproduced iff the CI lies {side} {t:g} and not inside {null:g} +- {delta:g}; not "
            f"reproduced iff it lies on the other side or inside that band"
        )
    if rule == "non-inferiority":
        return (
            f"non-inferiority (margin {abs(t):g}): reproduced iff the CI lies {side} {t:g}; not reproduced iff it "
            f"lies entirely on the other side of {t:g}"
        )
    if rule == "ci-excludes":
        beyond = "excludes 0" if not t else f"lies beyond +-{abs(t):g}"
        return (
            f"two-sided: reproduced iff the CI {beyond} and is not inside {null:g} +- {delta or 0:g}; not "
            f"reproduced iff it lies inside that band"
        )
    d = c.get("details") or {}
    if rule == "probability":
        return (
            f"probability: reproduced iff p >= {d.get('p_hi', 0.95):g}; not reproduced iff p <= {d.get('p_lo', 0.05):g}"
        )
    if rule == "p-value":
        return (
            f"one-sided test: reproduced iff p < {d.get('alpha')} with the effect {side} 0; not reproduced iff "
            f"the effect is not {side} 0"
        )
    if rule == "point":
        return f"guard: holds iff the value lies {side} {t:g}"
    if rule == "check":
        return f"check: {d.get('what', 'a recorded sanity check')} must pass"
    if rule == "composite":
        how = {"all": "every part is reproduced", "any": "at least one part is reproduced"}.get(
            str(c.get("combine")), f"at least {c.get('min_parts')} parts are reproduced"
        )
        pre = "; inconclusive unless every precondition holds" if c.get("preconditions") else ""
        return f"composite: reproduced iff {how}{pre}"
    return str(rule)


def _ci_reason(c: Mapping) -> str:
    lo, hi, t = c.get("ci_low"), c.get("ci_high"), c.get("threshold")
    null, delta = c.get("null") or 0.0, c.get("delta")
    ci = f"CI {_ci(lo, hi)}"
    if lo is None or hi is None:
        why = (c.get("details") or {}).get("not_applicable")
        return f"not testable here: {why}" if why else "no CI was computed"
    if delta is not None and c.get("rule") != "non-inferiority" and inside_band(lo, hi, null, delta):
        return f"{ci} lies inside {null:g} +- {delta:g}: no practical effect"
    if lo > t:
        return f"{ci} lies above {t:g}"
    if hi < t:
        return f"{ci} lies below {t:g}"
    return f"{ci} spans {t:g}"


WEAK, ONE_MODEL, BOUNDS = "weak", "one trained model", "baseline censored at the cap (bounds)"


def labels(c: Mapping) -> list[str]:
    """What the report and ``paperline show`` say beside a verdict (``shared/papers/README.md``, step 3):
    ``weak`` for a "reproduced" whose point estimate lies inside null +- delta; ``one trained model`` for a
    claim decided on a single seed; the bounds label for a "reproduced" that holds with the baseline's
    censored units at the cap."""
    out = []
    if c.get("verdict") == REPRODUCED:
        delta, effect, null = c.get("delta"), c.get("effect"), c.get("null") or 0.0
        if c.get("rule") == "standard" and delta and effect is not None and abs(effect - null) <= delta:
            out.append(WEAK)
        if c.get("n_censored_bound"):
            out.append(BOUNDS)
    sampled = c.get("rule") not in ("composite", "point", "check")
    if sampled and c.get("cluster_unit") and c.get("n_seeds") == 1 and c.get("verdict") != INCONCLUSIVE:
        out.append(ONE_MODEL)
    return out


def not_testable(c: Mapping) -> list[Mapping]:
    """The record's failed testability checks."""
    return [t for t in c.get("testability") or [] if not t.get("passed")]


def verdict_text(c: Mapping) -> str:
    """The verdict with its labels, e.g. "reproduced (weak)" or "inconclusive: not testable here"."""
    if not_testable(c):
        return f"{c.get('verdict')}: not testable here"
    lab = labels(c)
    return f"{c.get('verdict')} ({', '.join(lab)})" if lab else str(c.get("verdict"))


def _suffix(c: Mapping) -> str:
    lab = labels(c)
    words = {
        WEAK: "weak: the point estimate lies inside the no-effect band",
        ONE_MODEL: "the verdict holds for that one trained model",
        BOUNDS: f"{c.get('n_censored_bound')} baseline unit(s) censored at the cap count as bounds",
    }
    return "".join(f"; {words[x]}" for x in lab)


def reason(c: Mapping) -> str:
    """One sentence saying why ``c`` (a claim record with its verdict set) got its verdict."""
    failed = not_testable(c)
    if failed:
        text = "not testable here: " + "; ".join(f"{t['name']} failed ({t['detail']})" for t in failed)
        n_c = (c.get("n_censored") or 0) + (c.get("n_censored_bound") or 0)
        if n_c:
            left = "" if c.get("uncensored") else ", no uncensored unit is left"
            text += f"; {n_c} of {c.get('n_units')} units censored{left}"
        return text
    return _reason(c) + _suffix(c)


def _reason(c: Mapping) -> str:
    rule, verdict = c.get("rule"), c.get("verdict")
    if rule == "composite":
        failed = [p["id"] for p in c.get("preconditions") or [] if p.get("verdict") != REPRODUCED]
        if failed:
            return f"precondition {', '.join(failed)} not met, so the claim cannot be judged"
        parts = c.get("parts") or []
        by = {v: [p["id"] for p in parts if p.get("verdict") == v] for v in (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE)}
        counts = ", ".join(f"{len(ids)} {v} ({', '.join(ids)})" for v, ids in by.items() if ids)
        how = f"at least {c.get('min_parts')}" if c.get("combine") == "at_least" else c.get("combine")
        return f"{how} of {len(parts)} parts: {counts}"
    why = (c.get("details") or {}).get("not_applicable")
    if why and c.get("ci_low") is None:  # the data cannot test the claim: say why, before counting seeds
        return f"not testable here: {why}"
    if rule not in ("composite", "point", "check") and c.get("cluster_unit") and c.get("n_seeds", 0) < 1:
        return f"no {c.get('cluster_unit')} could be compared, so the claim cannot be judged"
    if rule in ("standard", "non-inferiority", "ci-excludes"):
        base = _ci_reason(c)
        if c.get("ci_low") is not None and c.get("ci_low") == c.get("ci_high"):
            return f"{base}: a zero-width CI (the design fixed the number), so it cannot decide"
        n_c, n_b = c.get("n_censored") or 0, c.get("n_censored_bound") or 0
        if (n_c or n_b) and verdict == INCONCLUSIVE and ci_rule_verdict(c, c["ci_low"], c["ci_high"]) != INCONCLUSIVE:
            u = c.get("uncensored")
            if u and c.get("cluster_unit") and u.get("n_seeds", 0) < 2:
                rest = f"only {u.get('n_seeds', 0)} uncensored {c.get('cluster_unit')} left, 2 needed"
            else:
                rest = f"without them the CI is {_ci(u['ci_low'], u['ci_high'])}" if u else "no uncensored unit is left"
            return f"{base}, but it rests on {n_c + n_b} of {c.get('n_units')} censored units ({rest})"
        return base + (f" ({n_c} censored units counted)" if n_c else "")
    d = c.get("details") or {}
    if rule == "probability":
        return f"p = {c.get('effect'):.3g}"
    if rule == "p-value":
        return f"effect {_g(c.get('effect'))}, one-sided p = {d.get('p_value'):.3g} (alpha {d.get('alpha')})"
    if rule == "point":
        return f"value {_g(c.get('effect'))} against {c.get('threshold'):g}"
    if rule == "check":
        return f"{d.get('what', 'the check')} {'passed' if d.get('passed') else 'failed'}"
    return str(verdict)
