"""A trained sparse retriever as one folder: the MILCO encoder (config.json + model.safetensors) and its document
index (index.npz: the documents' sparse rows as CSR arrays; index.json: their ids), loaded without unpickling.

The index is the one the evaluate stage searched (the benchmark documents encoded by this encoder, unpruned), so a
re-evaluation encodes only the queries and searches the stored postings: the encoder and the index it was built
with are judged together. ``np.load`` reads the arrays with ``allow_pickle=False``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from components.errors import DataError
from components.inputs import load_npz
from components.sparse_retrieval.index import InvertedIndex, to_csr
from components.sparse_retrieval.lexicon import encode_batch
from components.sparse_retrieval.model import MilcoEncoder, load_encoder, served_output
from components.sparse_retrieval.training import encode_all

INDEX_ARRAYS, INDEX_META = "index.npz", "index.json"
ENCODER_FILES = ("config.json", "model.safetensors")


@dataclass
class Retriever:
    encoder: MilcoEncoder
    docs: sp.csr_matrix  # (n_docs, vocab_en + vocab_in): pivot columns, then LexEcho's token columns
    doc_ids: list[str]
    index: InvertedIndex = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.encoder.cfg.kind != "sparse":
            raise DataError("retriever: the encoder is dense; a sparse retriever needs a sparse MILCO encoder")
        cfg = self.encoder.cfg
        if self.docs.shape != (len(self.doc_ids), cfg.vocab_en + cfg.vocab_in):
            raise DataError(
                f"retriever: index shape {self.docs.shape} does not fit {len(self.doc_ids)} documents "
                f"x {cfg.vocab_en + cfg.vocab_in} columns of the encoder"
            )
        self.index = InvertedIndex(self.docs)

    def query_rows(self, tok, texts: Sequence[str], query_len: int) -> sp.csr_matrix:
        """The queries' sparse rows, as the evaluate stage encodes them (``flows/milco/evaluate.sparse_task``)."""
        cfg = self.encoder.cfg
        q = encode_all(self.encoder, *encode_batch(tok, list(texts), query_len, echo=cfg.echo))
        return to_csr(q, cfg.vocab_en, cfg.vocab_in, echo=cfg.echo)

    def search(self, tok, texts: Sequence[str], query_len: int, k: int) -> list[list[str]]:
        """Per query, the ids of its top-``k`` documents (the index's batched ranking, no latency sample)."""
        ranked, _ = self.index.search_all(self.query_rows(tok, texts, query_len), k, latency_sample=0)
        return [[self.doc_ids[j] for j in r] for r in ranked]

    def pyfunc_predict(self, model_input) -> np.ndarray:
        """Served as an MLflow model: token ids in, the pivot vector out (what a logged MILCO encoder returns)."""
        return served_output(self.encoder, model_input)


def save_retriever(encoder_folder: Path, docs: sp.csr_matrix, doc_ids: Sequence[str], folder: Path) -> Path:
    """Copy the encoder's files byte for byte into ``folder`` and write the index beside them; returns ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in ENCODER_FILES:
        shutil.copyfile(Path(encoder_folder) / name, folder / name)
    m = sp.csr_matrix(docs)
    m.sort_indices()
    np.savez(
        folder / INDEX_ARRAYS,
        data=m.data.astype(np.float32),
        indices=m.indices.astype(np.int32),
        indptr=m.indptr.astype(np.int64),
        shape=np.asarray(m.shape, np.int64),
    )
    (folder / INDEX_META).write_text(
        json.dumps(
            {"doc_ids": list(doc_ids), "n_docs": m.shape[0], "width": m.shape[1], "postings": int(m.nnz)}, indent=1
        )
        + "\n"
    )
    return folder


def load_retriever(folder: str | Path) -> Retriever:
    """The retriever saved by :func:`save_retriever` (the allow-listed MLflow loader: safetensors, npz, JSON)."""
    folder = Path(folder)
    try:
        meta = json.loads((folder / INDEX_META).read_text())
        with load_npz(folder / INDEX_ARRAYS) as z:
            arrays = {k: z[k] for k in ("data", "indices", "indptr", "shape")}
    except (OSError, KeyError, ValueError) as exc:
        raise DataError(f"{folder}: not a MILCO retriever folder ({INDEX_META} + {INDEX_ARRAYS}: {exc})") from None
    shape = tuple(int(x) for x in arrays["shape"])
    docs = sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]), shape=shape)
    return Retriever(load_encoder(folder), docs, [str(x) for x in meta["doc_ids"]])
