"""Claim records (the ``claims.json`` schema) and the verdict rules every pipeline uses.

The standard rule (``shared/papers/README.md``): compute method - baseline on
paired units, take a 95% percentile bootstrap CI (10,000 resamples, stratified
by seed), then decide with :func:`decide`. Cards may instead use a probability
rule (:func:`decide_probability`) or "the CI excludes 0" (:func:`decide_excludes`).
A claim whose verdict joins several sub-claims uses rule ``"composite"``
(:func:`combine_all`). :func:`validate_claims_document` re-derives every
non-composite verdict from the numbers stored beside it, so a verdict can never
be a constant that disagrees with the data.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from components.errors import DataError, ParamsError
from components.evaluation.stats import paired_bootstrap_ci, paired_differences, stratum_signs

REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE = "reproduced", "not reproduced", "inconclusive"
VERDICTS: tuple[str, ...] = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE)
RULES: tuple[str, ...] = ("standard", "probability", "ci-excludes", "composite")
DIRECTIONS: tuple[str, ...] = ("greater", "less", "two-sided")


def _check_ci(lo: float, hi: float, delta: float, threshold: float) -> None:
    for name, v in (("ci_low", lo), ("ci_high", hi), ("threshold", threshold), ("delta", delta)):
        if not isinstance(v, (int, float, np.number)) or isinstance(v, bool) or not math.isfinite(v):
            raise DataError(f"{name}: expected a finite number, got {v!r}")
    if lo > hi:
        raise DataError(f"ci_low {lo} > ci_high {hi}")
    if delta < 0:
        raise ParamsError(f"delta: must be >= 0, got {delta}")


def _inside_band(lo: float, hi: float, threshold: float, delta: float) -> bool:
    return threshold - delta <= lo and hi <= threshold + delta


def decide(lo: float, hi: float, *, direction: str, threshold: float = 0.0, delta: float) -> str:
    """Standard rule on a CI [lo, hi] of the effect (method - baseline).

    Not reproduced if the CI lies entirely inside threshold +- delta (no practical
    effect; this wins over a tiny but significant effect) or entirely on the side
    opposite to ``direction``; reproduced if it lies entirely, strictly, on the
    claimed side; inconclusive otherwise.
    """
    if direction not in ("greater", "less"):
        raise ParamsError(f"direction: expected 'greater' or 'less', got {direction!r}")
    _check_ci(lo, hi, delta, threshold)
    if _inside_band(lo, hi, threshold, delta):
        return NOT_REPRODUCED
    above, below = lo > threshold, hi < threshold
    if (above and direction == "greater") or (below and direction == "less"):
        return REPRODUCED
    if above or below:
        return NOT_REPRODUCED
    return INCONCLUSIVE


def decide_excludes(lo: float, hi: float, *, threshold: float = 0.0, delta: float = 0.0) -> str:
    """Two-sided rule "the CI excludes the threshold": reproduced if it does (and is not inside +-delta);
    not reproduced if the CI lies inside threshold +- delta; inconclusive otherwise."""
    _check_ci(lo, hi, delta, threshold)
    if _inside_band(lo, hi, threshold, delta):
        return NOT_REPRODUCED
    return REPRODUCED if lo > threshold or hi < threshold else INCONCLUSIVE


def decide_probability(p: float, hi: float = 0.95, lo: float = 0.05) -> str:
    """Probability rule: p >= hi reproduced, p <= lo not reproduced, otherwise inconclusive."""
    if not 0.0 <= lo < hi <= 1.0:
        raise ParamsError(f"decide_probability: need 0 <= lo < hi <= 1, got lo={lo}, hi={hi}")
    if isinstance(p, bool) or not isinstance(p, (int, float, np.number)) or not 0.0 <= p <= 1.0:
        raise DataError(f"probability: expected a number in [0, 1], got {p!r}")
    return REPRODUCED if p >= hi else NOT_REPRODUCED if p <= lo else INCONCLUSIVE


def combine_all(verdicts: Iterable[str]) -> str:
    """Verdict of a claim that needs every part: any part not reproduced -> not reproduced;
    all reproduced -> reproduced; otherwise inconclusive."""
    verdicts = list(verdicts)
    if not verdicts or any(v not in VERDICTS for v in verdicts):
        raise ParamsError(f"combine_all: expected verdicts from {VERDICTS}, got {verdicts!r}")
    if NOT_REPRODUCED in verdicts:
        return NOT_REPRODUCED
    return REPRODUCED if all(v == REPRODUCED for v in verdicts) else INCONCLUSIVE


def combine_any(verdicts: Iterable[str]) -> str:
    """For claims of the form "for at least one comparison": any part reproduced makes the claim
    reproduced; every part not reproduced makes it not reproduced; otherwise inconclusive."""
    verdicts = list(verdicts)
    if REPRODUCED in verdicts:
        return REPRODUCED
    if verdicts and all(v == NOT_REPRODUCED for v in verdicts):
        return NOT_REPRODUCED
    return INCONCLUSIVE


@dataclass(kw_only=True)
class ClaimResult:
    """One record of ``claims.json``: a claim, the numbers behind it and its verdict."""

    id: str
    statement: str
    metric: str
    method: str
    baseline: str | None
    direction: str | None  # "greater" | "less" | "two-sided" | None (probability rule)
    threshold: float | None
    delta: float | None
    effect: float | None  # point estimate; the probability itself for the probability rule
    ci_low: float | None
    ci_high: float | None
    ci_level: float | None
    n_seeds: int
    n_units: int
    unit: str  # what was resampled: "items", "seeds", "bootstrap refits", ...
    per_seed_signs: list[int] | None
    rule: str
    verdict: str
    scale_note: str = ""
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Plain JSON types (numpy scalars unwrapped, non-finite floats as null)."""
        return {k: _plain(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, record: Mapping) -> ClaimResult:
        """Build from a ``claims.json`` record, checking it first."""
        _check_claim(record, "claim")
        return cls(**{f.name: record[f.name] for f in fields(cls)})


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(ClaimResult))
_NUMBERS = ("threshold", "delta", "effect", "ci_low", "ci_high", "ci_level")
_STRINGS = ("statement", "metric", "method", "unit", "scale_note")


def _plain(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _check_types(c: Mapping, where: str) -> None:
    missing = [f for f in FIELDS if f not in c]
    unknown = [k for k in c if k not in FIELDS]
    if missing or unknown:
        raise DataError(f"{where}: missing field(s) {missing} / unknown field(s) {unknown}")
    if not isinstance(c["id"], str) or not c["id"]:
        raise DataError(f"{where}.id: expected a non-empty string, got {c['id']!r}")
    for k in _STRINGS:
        if not isinstance(c[k], str):
            raise DataError(f"{where}.{k}: expected a string, got {c[k]!r}")
    if c["baseline"] is not None and not isinstance(c["baseline"], str):
        raise DataError(f"{where}.baseline: expected a string or null, got {c['baseline']!r}")
    for k in _NUMBERS:
        if c[k] is not None and not _is_num(c[k]):
            raise DataError(f"{where}.{k}: expected a finite number or null, got {c[k]!r}")
    for k in ("n_seeds", "n_units"):
        if not isinstance(c[k], int) or isinstance(c[k], bool) or c[k] < 0:
            raise DataError(f"{where}.{k}: expected a non-negative integer, got {c[k]!r}")
    signs = c["per_seed_signs"]
    if signs is not None and (not isinstance(signs, list) or any(s not in (-1, 0, 1) or isinstance(s, bool)
                                                                 for s in signs)):
        raise DataError(f"{where}.per_seed_signs: expected null or a list of -1/0/+1, got {signs!r}")
    if not isinstance(c["details"], Mapping):
        raise DataError(f"{where}.details: expected an object, got {type(c['details']).__name__}")
    for k, allowed in (("verdict", VERDICTS), ("rule", RULES), ("direction", (*DIRECTIONS, None))):
        if c[k] not in allowed:
            raise DataError(f"{where}.{k}: {c[k]!r} is not one of {', '.join(map(str, allowed))}")


def _check_claim(c: Any, where: str) -> None:
    """Types, then the verdict re-derived from the stored numbers under the claim's rule."""
    if not isinstance(c, Mapping):
        raise DataError(f"{where}: expected an object, got {type(c).__name__}")
    _check_types(c, where)
    rule = c["rule"]
    if rule == "composite":
        return
    try:
        if rule == "probability":
            expected = decide_probability(c["effect"], c["details"].get("p_hi", 0.95), c["details"].get("p_lo", 0.05))
        elif rule == "standard":
            expected = decide(c["ci_low"], c["ci_high"], direction=c["direction"], threshold=c["threshold"],
                              delta=c["delta"])
        else:
            expected = decide_excludes(c["ci_low"], c["ci_high"], threshold=c["threshold"], delta=c["delta"])
    except (DataError, ParamsError) as exc:
        raise DataError(f"{where}: rule {rule!r} cannot be applied: {exc}") from None
    if expected != c["verdict"]:
        raise DataError(f"{where}.verdict: {c['verdict']!r} but rule {rule!r} on the stored numbers gives {expected!r}")


def validate_claims_document(doc: Any, source: str = "claims document") -> dict:
    """Check a ``claims.json`` document; raise DataError naming the bad field; return the document."""
    if not isinstance(doc, Mapping):
        raise DataError(f"{source}: expected a JSON object, got {type(doc).__name__}")
    for k in ("paper", "profile"):
        if not isinstance(doc.get(k), str) or not doc[k]:
            raise DataError(f"{source}.{k}: expected a non-empty string, got {doc.get(k)!r}")
    claims = doc.get("claims")
    if not isinstance(claims, list):
        raise DataError(f"{source}.claims: expected a list, got {type(claims).__name__}")
    seen: set[str] = set()
    for i, c in enumerate(claims):
        _check_claim(c, f"{source}.claims[{i}]")
        if c["id"] in seen:
            raise DataError(f"{source}.claims[{i}].id: duplicate claim id {c['id']!r}")
        seen.add(c["id"])
    expected = {v: sum(c["verdict"] == v for c in claims) for v in VERDICTS}
    if doc.get("summary") != expected:
        raise DataError(f"{source}.summary: expected {expected}, got {doc.get('summary')!r}")
    return dict(doc)


def claims_document(paper: str, profile: str, results: Sequence[ClaimResult | Mapping], *,
                    extra: Mapping | None = None) -> dict:
    """The ``claims.json`` document: paper, profile, claims, a verdict summary, then ``extra`` keys."""
    claims = [r.to_dict() if isinstance(r, ClaimResult) else _plain(dict(r)) for r in results]
    doc: dict[str, Any] = {"paper": paper, "profile": profile, "claims": claims,
                           "summary": {v: sum(c.get("verdict") == v for c in claims) for v in VERDICTS}}
    for k, v in (extra or {}).items():
        if k in doc:
            raise ParamsError(f"claims_document: extra key {k!r} would overwrite a reserved field")
        doc[k] = _plain(v)
    return validate_claims_document(doc, f"claims document for {paper!r}")


def evaluate_standard(claim_id: str, statement: str, *, method_values: Sequence[float] | np.ndarray,
                      baseline_values: Sequence[float] | np.ndarray | None, seeds: Sequence[Any] | np.ndarray | int,
                      direction: str, delta: float, threshold: float = 0.0, metric: str, method: str,
                      baseline: str | None, unit: str, seed: int, n_resamples: int = 10_000, level: float = 0.95,
                      scale_note: str = "", details: Mapping | None = None) -> ClaimResult:
    """Apply the standard rule to paired per-unit values and return the claim record.

    ``seeds`` gives the seed of each unit (or one int for all): the bootstrap is
    stratified by it unless every unit is its own seed (unit = seeds), and
    per-seed signs are the signs of the mean paired difference within each seed.
    """
    diffs = paired_differences(method_values, baseline_values)
    labels = np.full(diffs.size, seeds) if np.ndim(seeds) == 0 else np.asarray(seeds)
    if labels.shape != diffs.shape:
        raise DataError(f"seeds: {labels.size} labels but {diffs.size} units; give the seed of each unit")
    seed_ids, signs = stratum_signs(diffs, labels)
    stratified = len(seed_ids) < diffs.size
    point, lo, hi = paired_bootstrap_ci(diffs, strata=labels if stratified else None, n_resamples=n_resamples,
                                        level=level, seed=seed)
    verdict = decide(lo, hi, direction=direction, threshold=threshold, delta=delta)
    info = {"seeds": seed_ids, "n_resamples": n_resamples, "bootstrap_seed": seed, "stratified": stratified,
            **(details or {})}
    return ClaimResult(id=claim_id, statement=statement, metric=metric, method=method, baseline=baseline,
                       direction=direction, threshold=float(threshold), delta=float(delta), effect=point, ci_low=lo,
                       ci_high=hi, ci_level=level, n_seeds=len(seed_ids), n_units=int(diffs.size), unit=unit,
                       per_seed_signs=signs, rule="standard", verdict=verdict, scale_note=scale_note,
                       details=info)
