"""Is a fitted L(N, D) = E + A/N^alpha + B/D^beta a law, or did the data not determine one?

A fit always returns five numbers; these checks say when they mean nothing: the
data cannot identify an exponent (one distinct N or D, or no spread in the loss),
or the parameters lie outside any law's range (``components.scaling.sanity``, the
same flags the reports show), or a term explains nothing over the data. Each check is
stated in the reason it returns, so a user can see which one fired.
"""

from __future__ import annotations

import numpy as np

from components.scaling.chinchilla import ScalingFit
from components.scaling.sanity import fit_flags

REL_LOSS_SPREAD = 1e-9  # (max L - min L) / mean L below this: the loss is constant, nothing to fit
MIN_TERM_SHARE = 1e-6  # a term whose spread over the data is below this share of the loss spread explains nothing


def degenerate_reasons(fit: ScalingFit, N, D, L) -> list[str]:
    """Why ``fit`` to (N, D, L) is degenerate; empty when it is a usable law."""
    n, d, loss = (np.asarray(x, dtype=float) for x in (N, D, L))
    reasons: list[str] = []
    spread = float(loss.max() - loss.min())
    if spread <= REL_LOSS_SPREAD * abs(float(loss.mean())):
        reasons.append(f"the loss is constant ({loss.min():.6g}): no scaling to fit")
    for name, values in (("N", n), ("D", d)):
        distinct = np.unique(values).size
        if distinct < 2:
            reasons.append(f"only {distinct} distinct {name}: its exponent is not identified")
    params = {"A": fit.A, "B": fit.B, "E": fit.E, "alpha": fit.alpha, "beta": fit.beta}
    bad = [k for k, v in params.items() if not np.isfinite(v)]
    if bad:
        reasons.append(f"non-finite parameter(s) {', '.join(bad)}")
        return reasons
    reasons += [flag.split(": ", 1)[1] for flag in fit_flags("fit", params)]  # parameters out of any law's range
    if spread > 0:
        for term, coef, exp, x in (("A/N^alpha", fit.A, fit.alpha, n), ("B/D^beta", fit.B, fit.beta, d)):
            with np.errstate(over="ignore", invalid="ignore"):
                values = coef / x**exp
            term_spread = float(np.nanmax(values) - np.nanmin(values)) if np.isfinite(values).all() else np.inf
            if term_spread < MIN_TERM_SHARE * spread:
                reasons.append(f"the {term} term explains under {MIN_TERM_SHARE:g} of the loss range")
    return reasons
