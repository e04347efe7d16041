"""Heuristic quality filters (Gopher, C4, the QualityPajama "aesthetic" filter).

``get_rules(["gopher", "c4"])`` builds rules by name; ``apply_filters`` runs them and
records why each dropped document was dropped. Framework-free.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from components.data.filters.aesthetic import Aesthetic
from components.data.filters.base import KEEP, Decision, FilterResult, Rule, apply_filters, drop, score_filters
from components.data.filters.c4 import C4Quality
from components.data.filters.gopher import GopherQuality, GopherRepetition
from components.errors import ParamsError

RULES: dict[str, type[Rule]] = {
    "gopher_quality": GopherQuality,
    "gopher_repetition": GopherRepetition,
    "c4": C4Quality,
    "aesthetic": Aesthetic,
}
GROUPS: dict[str, tuple[str, ...]] = {"gopher": ("gopher_quality", "gopher_repetition")}
RULE_NAMES = tuple(sorted([*RULES, *GROUPS]))


def get_rules(names: Sequence[str], params: Mapping[str, Mapping[str, Any]] | None = None) -> list[Rule]:
    """Rules for ``names`` in order ("gopher" = gopher_quality + gopher_repetition).

    ``params`` maps a rule name to threshold overrides, e.g.
    ``{"gopher_quality": {"min_doc_words": 20}}``. Unknown names or thresholds raise
    :class:`ParamsError` listing the valid ones.
    """
    if isinstance(names, str):
        names = [names]
    params = dict(params or {})
    expanded: list[str] = []
    for name in names:
        if name not in RULES and name not in GROUPS:
            raise ParamsError(f"filters: unknown rule {name!r}; valid names are {', '.join(RULE_NAMES)}")
        expanded.extend(GROUPS.get(name, (name,)))
    for key in params:
        if key not in RULES:
            raise ParamsError(f"filter params: unknown rule {key!r}; valid names are {', '.join(sorted(RULES))}")
    rules = []
    for name in dict.fromkeys(expanded):
        cls = RULES[name]
        fields = {f.name for f in dataclasses.fields(cls)}
        overrides = dict(params.get(name, {}))
        unknown = sorted(set(overrides) - fields)
        if unknown:
            raise ParamsError(f"filter params.{name}: unknown threshold(s) {unknown}; valid: {sorted(fields)}")
        rules.append(cls(**overrides))
    return rules


__all__ = [
    "KEEP",
    "RULES",
    "RULE_NAMES",
    "Aesthetic",
    "C4Quality",
    "Decision",
    "FilterResult",
    "GopherQuality",
    "GopherRepetition",
    "Rule",
    "apply_filters",
    "drop",
    "get_rules",
    "score_filters",
]
