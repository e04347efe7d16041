"""Stage ``sources``: extract each offline source once to ``data/sources/<name>.jsonl``.

Extraction is slow for some sources (the SWORD Bibles), so each finished source
file is kept in a content-addressed cache keyed by the extractor's code: a rerun
or a profile switch copies it instead of extracting again.
"""

from __future__ import annotations

from pathlib import Path

from tqdm.auto import tqdm

from components.data.corpus import extract_to_jsonl
from components.io import path_md5
from flows.runtime.file_cache import materialise
from flows.runtime.stages import StageContext

OUT = "data/sources"


def cache_key(root: Path, name: str, sources_dir: Path, code: str | None = None) -> dict:
    """The file-cache key of one extracted source: its name, the extractor's code hash, its sources folder."""
    code = code or path_md5(root / "components" / "data" / "corpus")
    return {"source": name, "code": code, "sources_dir": str(sources_dir)}


def run(ctx: StageContext) -> dict:
    p = ctx.params.sources
    out = ctx.output_dir(OUT)
    sources_dir = ctx.paths.root / p.sources_dir
    code = path_md5(ctx.paths.root / "components" / "data" / "corpus")
    hits = 0
    for name in tqdm(p.names, desc="sources", unit="source"):
        hits += materialise(
            ctx.paths.cache / "sources",
            cache_key(ctx.paths.root, name, sources_dir, code),
            Path(out) / f"{name}.jsonl",
            lambda tmp, name=name: extract_to_jsonl(name, tmp, sources_dir=sources_dir, progress=False),
        )
    return {"sources": len(p.names), "cache_hits": hits}
