"""Loaders shared by the assomem stages (their data paths are declared in ``spec.py``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from components.errors import DataError
from components.inputs import check_array, load_npz
from components.io import read_json, read_jsonl
from components.retrieval.memory import Memory, check_memory


def base_name(seed: int) -> str:
    return f"seed{seed}"


def load_base(mem_dir: Path, base: str) -> Memory:
    """The full (largest) memory of one generator seed, as written by the ``generate`` stage."""
    utts = read_jsonl(mem_dir / base / "utterances.jsonl", required=("id", "session_id", "text", "timestamp"))
    qs = read_jsonl(mem_dir / base / "questions.jsonl", allow_empty=True, required=("id", "gold", "query_time"))
    return check_memory(Memory(utts, qs), str(mem_dir / base))


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


def load_embeddings(emb_dir: Path, base: str, mem: Memory) -> dict:
    """The embed stage's arrays of ``base``, checked: 2-D, finite, one row per utterance and question of ``mem``,
    and one width for utterances, questions and phrases (a truncated or cut file is a DataError naming it)."""
    path = emb_dir / f"{base}.npz"
    embs = load_npz(path, keys=("utterances", "questions", "phrases"), finite=True)
    width = embs["utterances"].shape[1] if embs["utterances"].ndim == 2 else None
    for name, rows in (("utterances", len(mem.utterances)), ("questions", len(mem.questions)), ("phrases", None)):
        check_array(embs[name], path, name, ndim=2, rows=rows, cols=width)
    if width is not None and width < 2:
        raise DataError(f"{path}: embeddings of width {width}, expected vectors")
    return embs
