"""Paths and small helpers the qualitypajama stages share."""

from __future__ import annotations

DATA = "data/qualitypajama"
CORPUS = f"{DATA}/corpus"
CURATED = f"{DATA}/curated"
REWRITE = f"{DATA}/rewrite"
TOKENS = f"{DATA}/tokens"
GRID = f"{DATA}/grid"
FITS = f"{DATA}/fits"
REPORT = "reports/qualitypajama"

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
