"""The verdict rules of ``shared/papers/README.md``, as pure functions of stored numbers.

Every rule maps the numbers a claim stores (a CI, a probability, a p-value, a
check) to one of three verdicts, so :mod:`components.evaluation.claims` can
re-derive any verdict from a ``claims.json`` record. :func:`rule_text` and
:func:`reason` put a rule and its outcome into words for the reports.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Literal, get_args

import numpy as np

from components.errors import DataError, ParamsError

REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE = "reproduced", "not reproduced", "inconclusive"
VERDICTS: tuple[str, ...] = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE)
# The option values as ``Literal`` types, so an editor completes them and a type checker flags a typo; the
# tuples below are read off them (one list). Records keep them as plain strings.
CIRule = Literal["standard", "non-inferiority", "ci-excludes"]  # rules decided on a confidence interval
SimpleRule = Literal["probability", "p-value", "point", "check"]  # rules without a CI
Rule = Literal[CIRule, SimpleRule, "composite"]
Direction = Literal["greater", "less", "two-sided"]  # the claimed side of the null
Combine = Literal["all", "any", "at_least"]  # how a composite's parts combine
RULES: tuple[str, ...] = get_args(Rule)
DIRECTIONS: tuple[str, ...] = get_args(Direction)
COMBINES: tuple[str, ...] = get_args(Combine)


def _num(name: str, v: object) -> float:
    if not isinstance(v, (int, float, np.number)) or isinstance(v, bool) or not math.isfinite(float(v)):
        raise DataError(f"{name}: expected a finite number, got {v!r}")
    return float(v)


def _check_ci(lo: float, hi: float, delta: float, threshold: float, null: float = 0.0) -> None:
    for name, v in (("ci_low", lo), ("ci_high", hi), ("threshold", threshold), ("delta", delta), ("null", null)):
        _num(name, v)
    if lo > hi:
        raise DataError(f"ci_low {lo} > ci_high {hi}")
    if delta < 0:
        raise ParamsError(f"delta: must be >= 0, got {delta}")


def inside_band(lo: float, hi: float, null: float, delta: float) -> bool:
    """True when the CI lies inside null +- delta (no practical effect); never for delta = 0 and a CI of width > 0."""
    return null - delta <= lo and hi <= null + delta


def _direction(direction: str | None) -> str:
    if direction not in ("greater", "less"):
        raise ParamsError(f"direction: expected 'greater' or 'less', got {direction!r}")
    return direction


def decide(lo: float, hi: float, *, direction: str, threshold: float = 0.0, delta: float, null: float = 0.0) -> str:
    """Standard rule on a CI [lo, hi] of the effect (method - baseline).

    Not reproduced if the CI lies inside null +- delta (no practical effect, where
    null is the value of no effect: 0 for a difference, 1 for a ratio; this wins
    over a tiny but significant effect) or entirely on the side of ``threshold``
    opposite to ``direction``; reproduced if it lies entirely, strictly, on the
    claimed side of ``threshold``; inconclusive otherwise.
    """
    _direction(direction)
    _check_ci(lo, hi, delta, threshold, null)
    if inside_band(lo, hi, null, delta):
        return NOT_REPRODUCED
    above, below = lo > threshold, hi < threshold
    if (above and direction == "greater") or (below and direction == "less"):
        return REPRODUCED
    if above or below:
        return NOT_REPRODUCED
    return INCONCLUSIVE


def decide_noninferior(lo: float, hi: float, *, direction: str = "greater", margin: float) -> str:
    """Non-inferiority ("at least as good", "within m points") on the CI of method - baseline.

    For ``direction='greater'`` (higher is better): reproduced iff lo > -margin;
    not reproduced iff hi < -margin; inconclusive otherwise (mirrored for 'less').
    """
    _direction(direction)
    _check_ci(lo, hi, 0.0, 0.0)
    if _num("margin", margin) < 0:
        raise ParamsError(f"margin: must be >= 0, got {margin}")
    if direction == "greater":
        return REPRODUCED if lo > -margin else NOT_REPRODUCED if hi < -margin else INCONCLUSIVE
    return REPRODUCED if hi < margin else NOT_REPRODUCED if lo > margin else INCONCLUSIVE


def decide_excludes(lo: float, hi: float, *, threshold: float = 0.0, delta: float = 0.0, null: float = 0.0) -> str:
    """Two-sided rule: reproduced if the CI lies entirely beyond +-|threshold| (for threshold 0: it excludes 0)
    and not inside null +- delta; not reproduced if it lies inside null +- delta; inconclusive otherwise."""
    _check_ci(lo, hi, delta, threshold, null)
    if inside_band(lo, hi, null, delta):
        return NOT_REPRODUCED
    t = abs(threshold)
    return REPRODUCED if lo > t or hi < -t else INCONCLUSIVE


def decide_probability(p: float, hi: float = 0.95, lo: float = 0.05) -> str:
    """Probability rule: p >= hi reproduced, p <= lo not reproduced, otherwise inconclusive."""
    if not 0.0 <= lo < hi <= 1.0:
        raise ParamsError(f"decide_probability: need 0 <= lo < hi <= 1, got lo={lo}, hi={hi}")
    if isinstance(p, bool) or not isinstance(p, (int, float, np.number)) or not 0.0 <= p <= 1.0:
        raise DataError(f"probability: expected a number in [0, 1], got {p!r}")
    return REPRODUCED if p >= hi else NOT_REPRODUCED if p <= lo else INCONCLUSIVE


def decide_pvalue(p: float, effect: float, *, alpha: float, direction: str) -> str:
    """A one-sided test: reproduced iff p < alpha; not reproduced iff the effect is not on the claimed side;
    inconclusive otherwise (the effect points the claimed way but is not significant)."""
    _direction(direction)
    if isinstance(p, bool) or not isinstance(p, (int, float, np.number)) or not 0.0 <= p <= 1.0:
        raise DataError(f"p_value: expected a number in [0, 1], got {p!r}")
    if not 0.0 < _num("alpha", alpha) < 1.0:
        raise ParamsError(f"alpha: must be in (0, 1), got {alpha}")
    claimed_side = _num("effect", effect) > 0 if direction == "greater" else effect < 0
    return REPRODUCED if p < alpha and claimed_side else INCONCLUSIVE if claimed_side else NOT_REPRODUCED


def decide_point(effect: float, *, direction: str, threshold: float = 0.0) -> str:
    """A deterministic guard on a point value (no sampling): reproduced iff it lies strictly on the claimed side."""
    _direction(direction)
    e, t = _num("effect", effect), _num("threshold", threshold)
    return REPRODUCED if (e > t if direction == "greater" else e < t) else NOT_REPRODUCED


def decide_check(passed: object) -> str:
    """A recorded sanity check (e.g. a fit identified its parameters): reproduced iff it passed."""
    if not isinstance(passed, bool):
        raise DataError(f"passed: expected true or false, got {passed!r}")
    return REPRODUCED if passed else NOT_REPRODUCED


def ci_rule_verdict(c: Mapping, lo: float, hi: float) -> str:
    """The verdict of a claim record's CI rule (standard, non-inferiority, ci-excludes) on the CI [lo, hi]."""
    rule = c["rule"]
    if rule == "standard":
        return decide(lo, hi, direction=c["direction"], threshold=c["threshold"], delta=c["delta"], null=c["null"])
    if rule == "non-inferiority":
        margin = -c["threshold"] if c["direction"] == "greater" else c["threshold"]
        return decide_noninferior(lo, hi, direction=c["direction"], margin=margin)
    return decide_excludes(lo, hi, threshold=c["threshold"], delta=c["delta"] or 0.0, null=c["null"])


def censored_verdict(verdict: str, uncensored: str | None) -> str:
    """A verdict that would change without the censored units (or has none left) rests on them: inconclusive."""
    return verdict if uncensored is not None and uncensored == verdict else INCONCLUSIVE


def combine(verdicts: Iterable[str], how: str = "all", k: int | None = None) -> str:
    """``all``: any part not reproduced -> not reproduced, all reproduced -> reproduced, else inconclusive.
    ``any`` ("for at least one comparison"): any reproduced -> reproduced, all not reproduced -> not reproduced.
    ``at_least`` ``k`` ("on at least k functions"): reproduced iff >= k parts are reproduced; not reproduced iff
    fewer than k parts are still open (not 'not reproduced'); inconclusive otherwise (all = n of n, any = 1 of n)."""
    verdicts = list(verdicts)
    if not verdicts or any(v not in VERDICTS for v in verdicts):
        raise ParamsError(f"combine: expected verdicts from {VERDICTS}, got {verdicts!r}")
    if how not in COMBINES:
        raise ParamsError(f"combine: expected one of {COMBINES}, got {how!r}")
    need = {"all": len(verdicts), "any": 1}.get(how, k)
    if not isinstance(need, int) or isinstance(need, bool) or not 1 <= need <= len(verdicts):
        raise ParamsError(f"combine: 'at_least' needs 1 <= k <= {len(verdicts)} parts, got k = {k!r}")
    if sum(v == REPRODUCED for v in verdicts) >= need:
        return REPRODUCED
    return NOT_REPRODUCED if sum(v != NOT_REPRODUCED for v in verdicts) < need else INCONCLUSIVE


def combine_all(verdicts: Iterable[str]) -> str:
    """:func:`combine` with ``how='all'``."""
    return combine(verdicts, "all")


def combine_any(verdicts: Iterable[str]) -> str:
    """:func:`combine` with ``how='any'``."""
    return combine(verdicts, "any")
