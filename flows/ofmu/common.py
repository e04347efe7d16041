"""Paths and small helpers the ofmu stages share."""

from __future__ import annotations

import logging

SPLITS = ("forget", "retain", "general")
log = logging.getLogger("paperline")


def eval_splits(rows: list[dict], n_retain: int) -> dict[str, list[dict]]:
    """The evaluation sets: every forget question, the first ``n_retain`` retain questions, all world facts."""
    out = {s: [r for r in rows if r["split"] == s] for s in SPLITS}
    out["retain"] = out["retain"][:n_retain]
    return out
