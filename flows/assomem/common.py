"""Loaders shared by the assomem stages (their data paths are declared in ``spec.py``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from components.io import read_json, read_jsonl
from components.retrieval.memory import Memory


def base_name(seed: int) -> str:
    return f"seed{seed}"


def load_base(mem_dir: Path, base: str) -> Memory:
    """The full (largest) memory of one generator seed, as written by the ``generate`` stage."""
    utts = read_jsonl(mem_dir / base / "utterances.jsonl")
    qs = read_jsonl(mem_dir / base / "questions.jsonl", allow_empty=True)
    return Memory(utts, qs)


def load_units(mem_dir: Path) -> list[dict]:
    """Every (seed, size) memory unit: its base memory, the projects it keeps and its counts."""
    return read_json(mem_dir / "units.json")


def unit_bases(units: list[dict]) -> list[str]:
    """The distinct bases of ``units``, in order (the generator's seeds; a real source's memories)."""
    return list(dict.fromkeys(u["base"] for u in units))


def base_phrases(mem_dir: Path, base: str) -> list[str] | None:
    """A real source's clue keyphrases for ``base`` (``clues.json``); None for generator memories."""
    path = mem_dir / base / "clues.json"
    return read_json(path) if path.exists() else None


def fit_group(unit: dict) -> str:
    """Units whose CMI weights are fitted together: a real source's memories share one group."""
    return unit.get("fit_group", unit["unit"])


def unit_view(base: Memory, unit: dict) -> tuple[np.ndarray, Memory]:
    """(indices of the unit's utterances in the base memory, the unit's Memory); real sources use the whole base."""
    if "projects" not in unit:
        return np.arange(len(base.utterances), dtype=np.int64), base
    keep = set(unit["projects"])
    idx = np.array([i for i, u in enumerate(base.utterances) if u["clue_truth"] in keep], dtype=np.int64)
    return idx, base.subset(unit["projects"])
