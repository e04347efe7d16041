"""Paper-scale sources behind config (the ``full`` profile): MIRACL and MKQA in their Hugging Face row formats, and
the model ids (omai-research/milco-650m, BAAI/bge-m3, naver/splade-v3). A local file or folder is read directly
(the tests use small fixtures in the real formats); a hub id is fetched only with PAPERLINE_ONLINE=1, and fails at
once, naming the id, when offline.

Formats: MIRACL (``miracl/miracl``, one config per language) rows are ``{query_id, query, positive_passages:
[{docid, title, text}], negative_passages: [...]}``; its corpus (``miracl/miracl-corpus``) rows are ``{docid, title,
text}``; MKQA (``apple/mkqa``) rows are ``{example_id, query, queries: {lang: text}, answers: {lang: [{type, text,
aliases}]}}``.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from pathlib import Path

from components.errors import DataError, OfflineError


def online() -> bool:
    return os.environ.get("PAPERLINE_ONLINE", "").lower() in {"1", "true", "yes"}


def check_source(field: str, value: str | None) -> str | None:
    """A local path, or a hub id usable only online; OfflineError naming the field and id otherwise."""
    if value is None or Path(value).exists():
        return value
    if not online():
        raise OfflineError(
            f"milco.full.{field} {value!r}: not a local file or folder and PAPERLINE_ONLINE is off; "
            "set PAPERLINE_ONLINE=1 to download it, or give a local path"
        )
    return value


def _rows(path: Path) -> Iterator[dict]:
    files = sorted(p for p in path.rglob("*") if p.suffix in (".jsonl", ".gz")) if path.is_dir() else [path]
    if not files:
        raise DataError(f"{path}: no .jsonl or .jsonl.gz files")
    for f in files:
        opener = gzip.open if f.suffix == ".gz" else open
        with opener(f, "rt", encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise DataError(f"{f}:{n}: not JSON ({exc.msg})") from None


def _hub(dataset: str, config: str | None, split: str) -> Iterator[dict]:
    from datasets import load_dataset

    yield from load_dataset(dataset, config, split=split)


def load_miracl(dataset: str, corpus: str | None, language: str, split: str = "dev") -> dict[str, list[dict]]:
    """Queries ``{qid, text, positives}`` and documents ``{id, text}`` (the positives and negatives named by the
    topics, plus the corpus when given)."""
    check_source("miracl", dataset)
    check_source("miracl_corpus", corpus)
    rows = _rows(Path(dataset)) if Path(dataset).exists() else _hub(dataset, language, split)
    queries, docs = [], {}
    for r in rows:
        try:
            pos = [p["docid"] for p in r["positive_passages"]]
            for p in [*r["positive_passages"], *r.get("negative_passages", [])]:
                docs[p["docid"]] = " ".join(x for x in (p.get("title"), p["text"]) if x)
            queries.append({"qid": str(r["query_id"]), "text": r["query"], "positives": pos})
        except (KeyError, TypeError) as exc:
            raise DataError(f"{dataset}: a row lacks MIRACL field {exc} (query_id, query, positive_passages)") from None
    if corpus:
        src = _rows(Path(corpus)) if Path(corpus).exists() else _hub(corpus, language, "train")
        for r in src:
            docs.setdefault(str(r["docid"]), " ".join(x for x in (r.get("title"), r["text"]) if x))
    missing = [q["qid"] for q in queries if not all(d in docs for d in q["positives"])]
    if missing:
        raise DataError(f"{dataset}: qrels of queries {missing[:3]} point at documents not in the corpus")
    return {"queries": queries, "docs": [{"id": k, "text": v} for k, v in docs.items()]}


def load_mkqa(dataset: str, language: str) -> list[dict]:
    """``{qid, text, english, answers}`` per MKQA example with a query in ``language``."""
    check_source("mkqa", dataset)
    rows = _rows(Path(dataset)) if Path(dataset).exists() else _hub(dataset, None, "train")
    out = []
    for r in rows:
        try:
            text = r["queries"][language]
            answers = [a.get("text") for a in r["answers"].get(language, []) if a.get("text")]
        except (KeyError, TypeError, AttributeError) as exc:
            raise DataError(f"{dataset}: a row lacks MKQA field {exc} (queries, answers)") from None
        if text:
            out.append({"qid": str(r["example_id"]), "text": text, "english": r.get("query", ""), "answers": answers})
    return out


def check_models(full) -> dict[str, str | None]:
    """Each configured model id, checked before any work (OfflineError naming it when offline)."""
    return {f: check_source(f, getattr(full, f)) for f in ("milco_model", "encoder", "teacher")}
