"""Small helpers the qualitypajama stages share (their data paths are declared in spec.py)."""

from __future__ import annotations

from flows.qualitypajama.spec import CURATED, REWRITE

CURATION_KINDS = ("raw", "exact", "minhash", "gopher", "c4")


def kind(intervention: str) -> str:
    """``minhash-0.7`` → ``minhash``; ``qa-67`` → ``qa``."""
    return intervention.split("-", 1)[0]


def is_curation(intervention: str) -> bool:
    return kind(intervention) in CURATION_KINDS


def synthetic_fraction(intervention: str) -> float:
    """``qa-67`` → 0.67 (the synthetic share of the mix, by bytes)."""
    return int(intervention.split("-", 1)[1]) / 100.0


def intervention_file(intervention: str) -> str:
    """Where an intervention's dataset lives (curation stage or rewrite stage output)."""
    folder = CURATED if is_curation(intervention) else REWRITE
    return f"{folder}/{intervention}.jsonl"
