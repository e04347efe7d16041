"""Rewrite a corpus: a seeded sample with the LLM, the rest with the labelled template.

The LLM sample is the ``llm_budget`` documents whose ``sha256(seed:id)`` is
smallest: it depends on the seed and the ids only, not on document order, so
adding documents or reordering them keeps earlier choices (and their cached
rewrites) wherever possible.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from typing import Any, Protocol

from tqdm.auto import tqdm

from components.data.rewrite.cache import RewriteCache, text_md5
from components.data.rewrite.prompts import check_style, prompt_hash
from components.data.rewrite.template import TEMPLATE_NAME, template_rewrite
from components.errors import DataError, ParamsError

log = logging.getLogger(__name__)

OUTPUT_FIELDS = ("id", "source", "text", "label", "rewriter", "style", "orig_id")


class Rewriter(Protocol):
    """What :func:`rewrite_corpus` needs from a rewriter (``LLMRewriter`` or a test fake)."""

    name: str

    def rewrite(self, texts: Sequence[str], style: str) -> list[str]: ...


def select_llm_sample(docs: Sequence[dict], budget: int, seed: int) -> set[int]:
    """Indices of up to ``budget`` documents (non-empty text) chosen by seeded id hash."""
    if budget <= 0:
        return set()
    ranked = sorted(
        (hashlib.sha256(f"{seed}:{doc['id']}".encode()).hexdigest(), i)
        for i, doc in enumerate(docs)
        if str(doc.get("text", "")).strip()
    )
    return {i for _, i in ranked[:budget]}


def rewrite_corpus(
    docs: Sequence[dict],
    *,
    style: str,
    rewriter: Rewriter | None = None,
    llm_budget: int = 0,
    cache_path: str | os.PathLike | None = None,
    seed: int = 0,
    template_rest: bool = True,
    progress: bool = True,
) -> list[dict]:
    """Rewrite ``docs`` in ``style``; return synthetic docs in input order.

    Up to ``llm_budget`` docs (seeded sample) go to ``rewriter``; with
    ``template_rest`` every other doc gets :func:`template_rewrite`, otherwise
    only the LLM rewrites are returned. LLM rewrites are appended to
    ``cache_path`` as they finish and reused on a rerun. An empty LLM output
    falls back to the template (and is labelled so). The caller writes the
    returned list atomically.
    """
    check_style(style)
    if llm_budget < 0:
        raise ParamsError(f"llm_budget must be >= 0, got {llm_budget}")
    _check_docs(docs)
    if rewriter is None and llm_budget > 0:
        log.warning("llm_budget=%d but no LLM rewriter given: every document uses the template", llm_budget)
        llm_budget = 0
    sample = select_llm_sample(docs, llm_budget, seed)
    llm_text = _llm_rewrites(docs, sorted(sample), style, rewriter, cache_path, progress) if sample else {}
    empty = [i for i, t in llm_text.items() if not t.strip()]
    if empty:
        log.warning("%d LLM rewrites came back empty; those documents use the template instead", len(empty))
    out = []
    for i, doc in enumerate(docs):
        if llm_text.get(i, "").strip():
            out.append(_synthetic(doc, style, llm_text[i], rewriter.name))  # type: ignore[union-attr]
        elif template_rest or i in llm_text:
            out.append(_synthetic(doc, style, template_rewrite(doc, style), TEMPLATE_NAME))
    log.info(
        "rewrote %d docs in style %s: %d by %s, %d by the template",
        len(out),
        style,
        sum(r["rewriter"] != TEMPLATE_NAME for r in out),
        getattr(rewriter, "name", "no LLM"),
        sum(r["rewriter"] == TEMPLATE_NAME for r in out),
    )
    return out


def _check_docs(docs: Sequence[dict]) -> None:
    seen: set[str] = set()
    for i, doc in enumerate(docs):
        for field in ("id", "text"):
            if field not in doc:
                raise DataError(f"document {i}: missing field {field!r}")
        if doc["id"] in seen:
            raise DataError(f"document {i}: duplicate id {doc['id']!r}")
        seen.add(doc["id"])


def _synthetic(doc: dict, style: str, text: str, rewriter_name: str) -> dict[str, Any]:
    return {
        "id": f"{doc['id']}#{style}",
        "source": doc.get("source"),
        "text": text,
        "label": "synthetic",
        "rewriter": rewriter_name,
        "style": style,
        "orig_id": doc["id"],
    }


def _cache_key_hash(rewriter: Rewriter, style: str) -> str:
    key = getattr(rewriter, "cache_key", None)
    return key(style) if callable(key) else prompt_hash(style)


def _llm_rewrites(
    docs: Sequence[dict], indices: list[int], style: str, rewriter: Rewriter, cache_path: Any, progress: bool
) -> dict[int, str]:
    """LLM texts for ``indices``: cached ones reused, missing ones generated batch by batch and appended."""
    cache = RewriteCache(cache_path)
    phash = _cache_key_hash(rewriter, style)

    def record(i: int, text: str) -> dict:
        src = str(docs[i]["text"])
        return {
            "orig_id": docs[i]["id"],
            "style": style,
            "rewriter": rewriter.name,
            "prompt_hash": phash,
            "text_md5": text_md5(src),
            "text": text,
        }

    keys = {i: (str(docs[i]["id"]), style, rewriter.name, phash, text_md5(str(docs[i]["text"]))) for i in indices}
    found = {i: cache.get(k) for i, k in keys.items()}
    missing = [i for i in indices if found[i] is None]
    log.info(
        "LLM rewrites (%s, %s): %d cached, %d to generate",
        rewriter.name,
        style,
        len(indices) - len(missing),
        len(missing),
    )
    batch = max(1, int(getattr(rewriter, "batch_size", 1)))
    with tqdm(total=len(missing), desc=f"rewrite {style}", unit="doc", disable=None if progress else True) as bar:
        for start in range(0, len(missing), batch):
            chunk = missing[start : start + batch]
            texts = rewriter.rewrite([str(docs[i]["text"]) for i in chunk], style)
            if len(texts) != len(chunk):
                raise DataError(f"rewriter {rewriter.name!r} returned {len(texts)} texts for {len(chunk)} inputs")
            cache.append(record(i, t) for i, t in zip(chunk, texts))
            found.update(zip(chunk, texts))
            bar.update(len(chunk))
    return {i: str(found[i]) for i in indices}
