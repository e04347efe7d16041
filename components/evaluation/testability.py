"""Testability preconditions: can this comparison discriminate at all?

The standard rule (``shared/papers/README.md``, step 3, "Not testable here") reports a comparison that
cannot discriminate as inconclusive, with the reason: both arms at a ceiling or floor on every unit, every
paired difference identical, or the method's mechanism never engaged. "No practical effect" is a finding
only when the design could have shown one. A claim record keeps its checks in ``testability``; any failed
check makes the verdict inconclusive (:func:`components.evaluation.claims.derive_verdict`).

Two checks are automatic for paired per-unit values (:func:`automatic`); mechanism checks are the
pipeline's own (a loss term that activates, a signal that moves a ranking): a claim declares their names in
``ClaimSpec.requires`` and the run must supply them (:func:`supplied`), so a pipeline cannot forget one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from components.errors import ParamsError

VARY = "paired differences vary"
BOUNDS = "arms off the bounds"


@dataclass(frozen=True)
class Check:
    """One precondition and its outcome on this run's data, with the numbers behind it in ``detail``."""

    name: str
    passed: bool
    detail: str

    def to_dict(self) -> dict:
        return asdict(self)


def differences_vary(diffs: np.ndarray) -> Check:
    """Fails when every paired difference is the same number: no sampling can show anything but that number."""
    spread = float(np.ptp(diffs)) if diffs.size else 0.0
    scale = max(1.0, float(np.max(np.abs(diffs)))) if diffs.size else 1.0
    ok = diffs.size > 1 and spread > 1e-12 * scale
    detail = (
        f"the {diffs.size} paired differences range over {spread:.4g}"
        if ok
        else f"all {diffs.size} paired differences equal {float(diffs[0]) if diffs.size else float('nan'):+.4g}"
    )
    return Check(VARY, bool(ok), detail)


def off_the_bounds(method: np.ndarray, baseline: np.ndarray | None, bounds: Sequence[float]) -> Check:
    """Fails when both arms sit at the same declared bound (a ceiling or floor of the metric) on every unit."""
    if len(bounds) != 2 or not bounds[0] < bounds[1]:
        raise ParamsError(f"bounds: expected (lower, upper) with lower < upper, got {tuple(bounds)!r}")
    arms = [method] if baseline is None else [method, baseline]
    for b, name in ((bounds[0], "floor"), (bounds[1], "ceiling")):
        if all(np.all(np.isclose(a, b, rtol=0, atol=1e-12)) for a in arms):
            return Check(BOUNDS, False, f"both arms sit at the {name} {b:g} on every one of {method.size} units")
    at = {
        k: float(np.mean(np.isclose(a, bounds[1], rtol=0, atol=1e-12) | np.isclose(a, bounds[0], rtol=0, atol=1e-12)))
        for k, a in zip(("method", "baseline"), arms)
    }
    return Check(BOUNDS, True, "share of units at a bound: " + ", ".join(f"{k} {v:.2f}" for k, v in at.items()))


def automatic(diffs: np.ndarray, method: np.ndarray, baseline: np.ndarray | None, bounds) -> list[Check]:
    """The checks every paired comparison gets: differences vary; with declared ``bounds``, arms off them."""
    checks = [differences_vary(diffs)]
    if bounds is not None:
        checks.append(off_the_bounds(method, baseline, bounds))
    return checks


def supplied(claim_id: str, requires: Iterable[str], checks: Iterable[Check]) -> list[Check]:
    """``checks`` as given, after making sure every declared precondition in ``requires`` is among them."""
    checks = list(checks)
    names = {c.name for c in checks}
    missing = [r for r in requires if r not in names]
    if missing:
        raise ParamsError(f"claim {claim_id}: declared precondition(s) {missing} were not checked in the run")
    return checks
