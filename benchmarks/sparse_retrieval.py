"""Benchmark: the pruned sparse inverted index (scipy CSC postings) against a dense flat index (faiss IndexFlatIP),
same corpus, same machine, one thread, at 2k and 30k documents.

    python benchmarks/sparse_retrieval.py [--sizes 2000 30000] [--queries 500] [--model data/milco/models/seed_0/milco]

Documents are LibreOffice help texts (English paragraphs, then their sentences, to reach 30k). Sparse vectors are
the MILCO encoder's (``--model``, a folder the ``train`` stage wrote) or, without one, the lexical teacher's
weights over the English space, mass-pruned to ~30 terms per document (log1p, as the pivot); dense vectors are
128-d (the dense bi-encoder's width; a fixed random projection of the same vectors). Prints queries per second and
index bytes of each and the ratios sparse / dense.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from components.sparse_retrieval import index as IX
from components.sparse_retrieval.baselines import FlatIndex
from components.sparse_retrieval.lexicon import EnglishSpace
from components.sparse_retrieval.parallel import libreoffice_pairs


def corpus(n: int) -> list[str]:
    pairs = libreoffice_pairs(Path("/usr/share/libreoffice/help/en-US"), Path("/usr/share/libreoffice/help/es"))
    texts = [p["en"] for p in pairs]
    sentences = [s for p in pairs for s in re.split(r"(?<=[.!?])\s+", p["en"]) if len(s.split()) >= 4]
    return (texts + [s for s in sentences if s not in set(texts)])[:n]


def vectors(texts: list[str], space: EnglishSpace, model: str | None) -> sp.csr_matrix:
    if model:
        from components.sparse_retrieval.lexicon import encode_batch, load_bpe
        from components.sparse_retrieval.model import load_encoder
        from components.sparse_retrieval.training import encode_all

        enc = load_encoder(model)
        tok = load_bpe(Path(model).parents[2] / "data" / "tokenizer.json")
        out = encode_all(enc, *encode_batch(tok, texts, 32, echo=enc.cfg.echo))
        return IX.to_csr(out, enc.cfg.vocab_en, enc.cfg.vocab_in, echo=enc.cfg.echo)
    return space.teacher_csr(texts).log1p()


def run(n: int, n_queries: int, model: str | None, rng: np.random.Generator) -> dict:
    texts = corpus(n)
    space = EnglishSpace.build(texts, 8000)
    docs = vectors(texts, space, model)
    f = IX.calibrate_mass(docs, 30.0)
    pruned = IX.mass_prune(docs, f)
    picks = rng.choice(len(texts), n_queries, replace=False)
    queries = vectors([" ".join(texts[i].split()[:10]) for i in picks], space, model)
    sparse = IX.InvertedIndex(pruned)
    queries = queries.tocsr()
    t = time.perf_counter()
    for i in range(n_queries):  # one query at a time through the postings
        sparse.search(queries[i], 100)
    sparse_qps = n_queries / (time.perf_counter() - t)
    proj = rng.normal(size=(docs.shape[1], 128)).astype(np.float32) / np.sqrt(128)
    dense_docs = np.asarray(docs @ proj, np.float32)
    dense = FlatIndex(dense_docs / np.linalg.norm(dense_docs, axis=1, keepdims=True).clip(1e-9))
    qd = np.asarray(queries @ proj, np.float32)
    t = time.perf_counter()
    for i in range(n_queries):  # one query at a time
        dense.index.search(qd[i : i + 1], 100)
    dense_qps = n_queries / (time.perf_counter() - t)
    return {
        "docs": len(texts),
        "avg_terms": float(IX.active_dims(pruned).mean()),
        "sparse_qps": sparse_qps,
        "dense_qps": dense_qps,
        "sparse_bytes": sparse.index_bytes,
        "dense_bytes": dense.index_bytes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 30000])
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--model", default=None)
    args = parser.parse_args()
    import faiss

    faiss.omp_set_num_threads(1)
    rng = np.random.default_rng(0)
    for n in args.sizes:
        r = run(n, args.queries, args.model, rng)
        print(
            f"{r['docs']:>6} docs, {r['avg_terms']:.1f} terms/doc | sparse (mass-pruned, inverted index): "
            f"{r['sparse_qps']:8.0f} q/s, {r['sparse_bytes']:>10,} B | dense flat faiss (128-d): "
            f"{r['dense_qps']:8.0f} q/s, {r['dense_bytes']:>10,} B"
        )
        print(
            f"        ratio sparse / dense: QPS {r['sparse_qps'] / r['dense_qps']:.2f}x, index bytes "
            f"{r['sparse_bytes'] / r['dense_bytes']:.3f}x"
        )


if __name__ == "__main__":
    main()
