"""Known answer for LexEcho, MILCO's source-token view, and the sabotage a reviewer tried (the view set to 0).

Fixture: foreign queries and English documents that share only a name-like entity token (``K317``); the
English term space (the pivot's vocabulary) holds the common English words and no names. Stage-2 contrastive
training of a MILCO encoder with LexEcho must then retrieve each query's document through the echo view: its
source-token bags alone rank the right document first, while the pivot alone, on the same trained model, stays
near chance. With the echo view zeroed the source bags are empty and the first check fails.
"""

from __future__ import annotations

import numpy as np
import torch

from components.sparse_retrieval import index as IX
from components.sparse_retrieval.lexicon import EnglishSpace, encode_batch, train_bpe
from components.sparse_retrieval.model import EncoderConfig, MilcoEncoder
from components.sparse_retrieval.training import Stage2Config, contrastive_train, encode_all

N_TRAIN, N_BENCH, LEN = 300, 100, 12


def _fixture(seed: int = 0):
    rng = np.random.default_rng(seed)

    def word(n: int) -> str:
        return "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), n))

    english, foreign = [word(5) for _ in range(30)], [word(6) for _ in range(30)]
    docs, queries = [], []
    for _ in range(N_TRAIN + N_BENCH):
        name = word(1).upper() + "".join(rng.choice(list("0123456789"), 3))
        docs.append(" ".join([*rng.choice(english, 4, replace=False), name, *rng.choice(english, 2, replace=False)]))
        queries.append(" ".join([*rng.choice(foreign, 2, replace=False), name, rng.choice(foreign)]))
    return english, docs, queries


def _recall_at_1(q: dict, d: dict, cfg: EncoderConfig, view: str) -> float:
    a, b = IX.to_csr(q, cfg.vocab_en, cfg.vocab_in), IX.to_csr(d, cfg.vocab_en, cfg.vocab_in)
    cols = slice(cfg.vocab_en, None) if view == "echo" else slice(0, cfg.vocab_en)  # [pivot | source tokens]
    scores = (a[:, cols] @ b[:, cols].T).toarray()
    return float((scores.argmax(1) == np.arange(len(scores))).mean())


def test_lexecho_retrieves_by_the_shared_entity_token_where_the_pivot_cannot():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    english, docs, queries = _fixture()
    tok = train_bpe(docs + queries, 300)
    space = EnglishSpace.build(english * 3, 100)  # common words only: no name is a pivot term
    cfg = EncoderConfig(
        vocab_in=tok.get_vocab_size(),
        vocab_en=len(space),
        echo=True,
        d_model=32,
        n_layers=1,
        n_heads=2,
        d_ff=64,
        d_en=32,
        max_len=LEN,
    )
    model = MilcoEncoder(cfg)
    train = slice(0, N_TRAIN)
    contrastive_train(
        model,
        encode_batch(tok, queries[train], LEN, echo=True),
        [encode_batch(tok, docs[train], LEN, echo=True)],
        Stage2Config(steps=300, batch=32, lr=3e-3, seed=0),
    )
    bench = slice(N_TRAIN, None)  # entities never seen in training
    q = encode_all(model, *encode_batch(tok, queries[bench], LEN, echo=True))
    d = encode_all(model, *encode_batch(tok, docs[bench], LEN, echo=True))
    echo, pivot = _recall_at_1(q, d, cfg, "echo"), _recall_at_1(q, d, cfg, "pivot")
    print(f"known answer: R@1 through the echo view {echo:.2f}, through the pivot {pivot:.2f} (chance 0.01)")
    assert echo >= 0.8, f"LexEcho did not retrieve by the shared entity token: R@1 {echo:.2f}"
    assert pivot <= 0.2, f"the pivot alone retrieves names here ({pivot:.2f}): the fixture does not isolate LexEcho"
