"""Sanity flags for a fitted scaling law L = E + A/N^alpha + B/D^beta.

A fit can minimise its loss and still say nothing: an exponent of 101 with a
coefficient of 1e229 fits a narrow grid as well as a sensible law, and E at 0
means the data never saw the loss flatten. Such a fit is kept and reported, but
flagged, and the report puts the flag in its headline. The bounds are wide on
purpose (published laws have exponents of 0.05-1 and coefficients of 1e1-1e5);
they catch non-identified fits, not unusual ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from components.scaling.bootstrap import PARAM_NAMES

MAX_EXPONENT = 3.0
MAX_LOG10_COEFFICIENT = 12.0
MIN_E = 1e-3
MIN_USABLE_REFITS = 10  # usable bootstrap refits needed to place a 95% interval's tails


def fit_flags(name: str, law: Mapping[str, float], *, check_e: bool = True) -> list[str]:
    """Why the fit called ``name`` cannot be read as a scaling law (empty when it can).

    ``check_e=False`` leaves E out: a law whose shared floor is reported separately as
    identified or not still has a usable shape (exponents and coefficients).
    """
    flags = []
    for k in ("alpha", "beta"):
        v = law.get(k)
        if v is None or not math.isfinite(v) or v <= 0 or v > MAX_EXPONENT:
            flags.append(
                f"{name}: {k} = {v:.4g} outside (0, {MAX_EXPONENT:g}]: exponent not identified"
                if v is not None and math.isfinite(v)
                else f"{name}: {k} is not finite"
            )
    for k in ("A", "B"):
        v = law.get(k)
        if v is None or not math.isfinite(v) or v <= 0 or abs(math.log10(v)) > MAX_LOG10_COEFFICIENT:
            flags.append(
                f"{name}: {k} = {v:.3g} beyond 1e±{MAX_LOG10_COEFFICIENT:g}: coefficient not identified"
                if v is not None and math.isfinite(v)
                else f"{name}: {k} is not finite"
            )
    e = law.get("E")
    if not check_e:
        return flags
    if e is None or not math.isfinite(e) or e < MIN_E:
        flags.append(
            f"{name}: E = {e:.3g} at its lower bound: the loss never flattened on this grid, E is not identified"
            if e is not None and math.isfinite(e)
            else f"{name}: E is not finite"
        )
    return flags


def law_params(fit: Any) -> dict[str, float]:
    """A fit's (a ``ScalingFit`` or a mapping) parameters as floats, by ``PARAM_NAMES``."""
    return {k: float(fit[k] if isinstance(fit, Mapping) else getattr(fit, k)) for k in PARAM_NAMES}


def usable(fit: Any) -> bool:
    """A law with exponents in (0, 3] and coefficients within 1e±12 (sanity flags, E aside) has an allocation."""
    return not fit_flags("fit", law_params(fit), check_e=False)


def sane_samples(samples: np.ndarray) -> tuple[np.ndarray, int]:
    """Bootstrap refits (rows ordered by ``PARAM_NAMES``) with NaN rows where a refit is not usable; and how many
    were dropped."""
    out = np.array(samples, float, copy=True)
    bad = np.array([not usable(dict(zip(PARAM_NAMES, row))) for row in out], bool)
    out[bad] = np.nan
    return out, int(bad.sum())


def param_cis(samples: np.ndarray, level: float, *, min_usable: int = MIN_USABLE_REFITS) -> dict[str, list[float]]:
    """Per-parameter percentile CIs over the usable (all-finite) refit rows; NaN CIs with fewer than
    ``min_usable`` of them (too few refits to place a 95% interval's tails)."""
    tail = (1 - level) / 2
    ok = np.isfinite(samples).all(axis=1)
    if ok.sum() < min_usable:
        return {k: [float("nan"), float("nan")] for k in PARAM_NAMES}
    lo, hi = np.quantile(samples[ok], [tail, 1 - tail], axis=0)
    return {k: [float(lo[i]), float(hi[i])] for i, k in enumerate(PARAM_NAMES)}
