"""Stage ``tokenize``: one byte-level BPE (trained on the raw pool) encodes every intervention and validation set."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from components.data import validate as V
from components.io import atomic_path, iter_jsonl, write_json
from components.training.tokenizer import bytes_per_token, encode_docs, train_bpe
from flows.qualitypajama.common import intervention_file
from flows.qualitypajama.params import Params
from flows.qualitypajama.spec import CORPUS, TOKENS
from flows.runtime.stages import StageContext


def save_npy(path: Path, array: np.ndarray) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, array)


def _texts(path: Path) -> list[str]:
    return [d["text"] for d in iter_jsonl(path, required=("text",))]


def run(ctx: StageContext[Params]) -> dict:
    p = ctx.params
    out = ctx.output_dir(TOKENS)
    pool = _texts(ctx.input(f"{CORPUS}/pool.jsonl"))
    tok_path = train_bpe(pool, vocab_size=p.tokenizer.vocab_size, out_path=out / "tokenizer.json")
    from components.training.tokenizer import load_bpe

    tok = load_bpe(tok_path)
    rows = []
    for name in p.interventions:
        ids = encode_docs(tok, _texts(ctx.input(intervention_file(name))), progress=True)
        save_npy(out / f"{name}.npy", ids)
        rows.append({"dataset": name, "kind": "train", "tokens": int(len(ids)), "bytes_per_token": None})
    for name in p.corpus.heldout:
        texts = _texts(ctx.input(f"{CORPUS}/heldout/{name}.jsonl"))
        ids = encode_docs(tok, texts)
        save_npy(out / f"val-{name}.npy", ids)
        rows.append(
            {
                "dataset": name,
                "kind": "validation",
                "tokens": int(len(ids)),
                "bytes_per_token": bytes_per_token(tok, texts),
            }
        )
    train_rows = [r for r in rows if r["kind"] == "train"]
    val_rows = [r for r in rows if r["kind"] == "validation"]
    # Every intervention must hold the largest budget without repeating data; every validation set one window.
    V.validate(
        train_rows,
        [V.between("tokens", min_value=max(p.grid.budgets))],
        name="qualitypajama/token-counts",
        result_path=out / "_checks" / "train.json",
    )
    V.validate(
        val_rows,
        [V.between("tokens", min_value=p.training.seq_len + 1)],
        name="qualitypajama/validation-token-counts",
        result_path=out / "_checks" / "validation.json",
    )
    write_json(out / "stats.json", {"vocab_size": tok.get_vocab_size(), "datasets": rows})
    return {"tokens": {r["dataset"]: r["tokens"] for r in rows}}
