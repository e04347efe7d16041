"""Temporal alignment T between a query and an utterance.

``code`` (released code, the default): T = mean over tau in {3, 90, 365} days of
exp(-age / tau), age = query time - utterance time. ``parsed``: when the query
names a time ("last week", "3 weeks ago", "on 2025-03-04"), dateparser turns it
into a target date and T = exp(-|t_u - target| / scale); queries without a time
expression fall back to ``code``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

import numpy as np

from components.errors import ParamsError
from components.retrieval.temporal_epoch import EPOCH

_TIME_PHRASE = re.compile(r"(last week|yesterday|\d+ (?:days?|weeks?|months?) ago|on \d{4}-\d{2}-\d{2})", re.I)


def recency(ages_days: np.ndarray, taus: Sequence[float] = (3.0, 90.0, 365.0)) -> np.ndarray:
    """Mean of exp(-age/tau) over ``taus``; negative ages (future utterances) count as 0 days."""
    if not taus or any(t <= 0 for t in taus):
        raise ParamsError(f"temporal.taus: need positive values, got {list(taus)}")
    age = np.maximum(np.asarray(ages_days, dtype=float), 0.0)
    return np.mean([np.exp(-age / t) for t in taus], axis=0)


def target_day(query: str, query_time: float) -> float | None:
    """Day (memory time) a query refers to, parsed with dateparser; None when it names no time."""
    m = _TIME_PHRASE.search(query)
    if not m:
        return None
    import dateparser

    phrase = m.group(1).removeprefix("on ").removeprefix("On ")
    if phrase.lower() == "last week":
        phrase = "1 week ago"
    base = EPOCH + dt.timedelta(days=float(query_time))
    when = dateparser.parse(phrase, languages=["en"], settings={"RELATIVE_BASE": base})
    return None if when is None else (when - EPOCH).total_seconds() / 86400.0


def temporal_signal(
    utt_times: np.ndarray,
    query_time: float,
    query: str = "",
    *,
    mode: str = "code",
    taus: Sequence[float] = (3.0, 90.0, 365.0),
    scale: float = 3.0,
) -> np.ndarray:
    """T for every utterance time in ``utt_times`` against one query."""
    if mode not in ("code", "parsed"):
        raise ParamsError(f"temporal.mode: expected 'code' or 'parsed', got {mode!r}")
    times = np.asarray(utt_times, dtype=float)
    if mode == "parsed":
        target = target_day(query, query_time)
        if target is not None:
            return np.exp(-np.abs(times - target) / scale)
    return recency(query_time - times, taus)
