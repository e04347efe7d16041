"""The offline English corpus: sources, extraction, training pool, injected noise, HF loader.

    extract_to_jsonl("austen", "data/corpus/austen.jsonl")      # once per source (a DVC stage)
    train, heldout = build_pool({...: path}, budget_bytes=20_000_000, holdout=DEFAULT_HOLDOUT, seed=0)
    records = inject_noise(train, seed=0)                        # + labelled near-copies and junk

Importing this package is cheap: extractors, ``rdata``, ``pysword`` and
``datasets`` load only when used.
"""

from components.data.corpus.hf import stream_hf_text
from components.data.corpus.inject import RECORD_FIELDS, inject_noise, near_copy
from components.data.corpus.junk import JUNK_KINDS, make_junk
from components.data.corpus.pool import DEFAULT_BUDGET_BYTES, DEFAULT_HOLDOUT, build_pool, holdout_unit
from components.data.corpus.sources import (
    DEFAULT_SOURCES_DIR,
    SOURCES,
    SourceSpec,
    available_sources,
    extract,
    extract_to_jsonl,
)

__all__ = [
    "DEFAULT_BUDGET_BYTES",
    "DEFAULT_HOLDOUT",
    "DEFAULT_SOURCES_DIR",
    "JUNK_KINDS",
    "RECORD_FIELDS",
    "SOURCES",
    "SourceSpec",
    "available_sources",
    "build_pool",
    "extract",
    "extract_to_jsonl",
    "holdout_unit",
    "inject_noise",
    "make_junk",
    "near_copy",
    "stream_hf_text",
]
