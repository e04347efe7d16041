"""Stage ``data``: the training text, a dev split and the evaluation windows of every set; GX checks.

Offline (default): five Austen novels are the training text (the tail ``dev_frac`` of each is the dev split),
Persuasion is the in-distribution test set, and each OOD source (Shakespeare, KJV, Linux docs) gives a test set.
Each set holds ``eval_chars // seq_len`` windows of ``seq_len + 1`` tokens, evenly spread over its text. A window
that also occurs verbatim in the training text is dropped (counted in ``summary.json``) and a GX suite then
checks that no kept window occurs there. ``full``: the training text is streamed from ``hf_dataset`` (its last
10% of documents become the in-distribution test set) and tokenised by ``hf_tokenizer``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from components.data import validate as V
from components.data.corpus.hf import stream_hf_text
from components.errors import DataError
from components.io import write_json, write_jsonl
from flows.ebt.common import ID_SET, codec
from flows.ebt.params import Params
from flows.ebt.spec import DATA
from flows.runtime.stages import StageContext

DOC_SUITE = [V.columns_present(["id", "text"]), V.unique("id"), V.non_empty_text("text")]


def _read_docs(path: Path) -> list[dict]:
    if not path.is_file():
        raise DataError(f"{path}: file not found (run the shared `sources` stage first)")
    docs = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            try:
                doc = json.loads(line)
            except json.JSONDecodeError:
                raise DataError(f"{path}:{n}: not JSON Lines (expected one JSON document per line)") from None
            if not isinstance(doc, dict) or not isinstance(doc.get("text"), str) or "id" not in doc:
                raise DataError(f"{path}:{n}: expected an object with 'id' and 'text'")
            docs.append(doc)
    if not docs:
        raise DataError(f"{path}: no documents")
    return docs


def _spread_text(docs: list[dict], chars: int) -> str:
    """About ``4 * chars`` characters from documents at evenly spaced positions (all of them if short)."""
    total = sum(len(d["text"]) for d in docs)
    take = max(1, min(len(docs), round(len(docs) * 4 * chars / max(total, 1))))
    idx = np.unique(np.linspace(0, len(docs) - 1, take).round().astype(int))
    return "\n\n".join(docs[i]["text"] for i in idx)


def windows(ids: np.ndarray, n: int, length: int) -> np.ndarray:
    """``n`` windows of ``length`` ids at evenly spread starts (fewer if the text is short)."""
    if len(ids) < length:
        raise DataError(f"a text of {len(ids)} tokens is shorter than one window ({length})")
    starts = np.unique(np.linspace(0, len(ids) - length, n).round().astype(np.int64))
    return np.asarray(ids)[starts[:, None] + np.arange(length)]


def _offline_texts(ctx: StageContext[Params]) -> tuple[dict[str, str], str, dict[str, str]]:
    """(training text per novel, ID test text, OOD text per set) from the shared sources."""
    d = ctx.params.data
    austen = _read_docs(ctx.input("data/sources/austen.jsonl"))
    V.validate(austen, DOC_SUITE, name="ebt/austen", result_path=ctx.output(DATA) / "_checks" / "austen.json")
    novels: dict[str, list[str]] = {}
    for doc in austen:
        novels.setdefault(str(doc["id"]).split("/")[1], []).append(doc["text"])
    missing = [n for n in [*d.train_novels, d.test_novel] if n not in novels]
    if missing:
        raise DataError(f"data/sources/austen.jsonl: no chapters of {missing}")
    ood = {}
    for name in d.ood_sets:
        docs = _read_docs(ctx.input(f"data/sources/{name}.jsonl"))
        V.validate(docs, DOC_SUITE, name=f"ebt/{name}", result_path=ctx.output(DATA) / "_checks" / f"{name}.json")
        ood[name] = _spread_text(docs, d.eval_chars)
    train = {n: "\n\n".join(novels[n]) for n in d.train_novels}
    return train, "\n\n".join(novels[d.test_novel]), ood


def _hub_texts(ctx: StageContext[Params], ood: dict[str, str]) -> tuple[dict[str, str], str]:
    d = ctx.params.data
    docs, size = [], 0
    for doc in stream_hf_text(d.hf_dataset, config=d.hf_config, text_field=d.hf_text_field):
        docs.append(doc["text"])
        size += len(doc["text"])
        if size >= d.hf_chars:
            break
    if len(docs) < 2:
        raise DataError(f"{d.hf_dataset}: fewer than 2 documents streamed")
    cut = max(1, int(len(docs) * 0.9))
    return {"hub": "\n\n".join(docs[:cut])}, "\n\n".join(docs[cut:])


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    d = p.data
    cod = codec(p)  # a hub tokenizer fails here at once when offline
    out = ctx.output(DATA)
    (out / "sets").mkdir(parents=True, exist_ok=True)
    train_texts, id_text, ood_texts = _offline_texts(ctx)
    if d.hf_dataset:
        train_texts, id_text = _hub_texts(ctx, ood_texts)
    train_parts, dev_parts = [], []
    for text in train_texts.values():
        cut = int(len(text) * (1 - d.dev_frac))
        train_parts.append(text[:cut])
        dev_parts.append(text[cut:])
    train_text = "\n\n".join(train_parts)
    train_ids = cod.encode(train_text)
    dev_ids = cod.encode("\n\n".join(dev_parts))
    haystack = cod.decode(train_ids)  # compare in the codec's own normalised text
    length = p.model.seq_len + 1
    n = max(1, d.eval_chars // p.model.seq_len)
    rows, kept, dropped = [], {}, {}
    for name, text in {ID_SET: id_text, **ood_texts}.items():
        win = windows(cod.encode(text), n, length)
        texts = [cod.decode(w) for w in win]
        in_train = np.array([t in haystack for t in texts])
        dropped[name] = int(in_train.sum())
        win, texts = win[~in_train], [t for t, f in zip(texts, in_train) if not f]
        if len(win) == 0:
            raise DataError(f"set {name!r}: every window also occurs in the training text")
        kept[name] = len(win)
        np.save(out / "sets" / f"{name}.npy", win.astype(np.int64))
        rows += [
            {
                "id": f"{name}/{i}",
                "set": name,
                "text": t,
                "in_train": t in haystack,
                "unk_frac": float(np.mean(w == 0)) if cod.name == "chars" else 0.0,
            }
            for i, (w, t) in enumerate(zip(win, texts))
        ]
    suite = [
        V.unique("id"),
        V.non_empty_text("text"),
        V.in_set("in_train", [False]),
        V.in_set("set", [ID_SET, *d.ood_sets]),
        V.mean_between("unk_frac", 0.0, 0.02),
    ]
    V.validate(rows, suite, name="ebt/windows", result_path=out / "_checks" / "windows.json")
    np.save(out / "train.npy", train_ids)
    np.save(out / "dev.npy", dev_ids)
    write_jsonl(out / "windows.jsonl", rows)
    summary = {
        "codec": cod.name,
        "vocab_size": cod.vocab_size,
        "train_tokens": int(len(train_ids)),
        "dev_tokens": int(len(dev_ids)),
        "windows": kept,
        "dropped_in_train": dropped,
        "train_sources": sorted(train_texts),
    }
    write_json(out / "summary.json", summary)
    return summary
