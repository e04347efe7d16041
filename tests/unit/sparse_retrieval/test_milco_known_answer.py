"""Known answer for MILCO-mini, and the sabotage a reviewer would try.

Fixture: a synthetic "foreign" language whose every word translates one English word (a fixed bijection between
random letter strings), so a foreign text and its English translation share no surface token. Sparse Alignment
Pretraining against the lexical teacher must ground the foreign text in its English words: the pivot's top terms
are the translation's words, and foreign queries retrieve their English documents through the inverted index,
where BM25 (no shared tokens) cannot beat chance. With the teacher's signal replaced by noise (its rows shuffled
across pairs) the same checks must fail.
"""

from __future__ import annotations

import numpy as np
import torch

from components.sparse_retrieval import index as IX
from components.sparse_retrieval.baselines import bm25_search
from components.sparse_retrieval.lexicon import EnglishSpace, encode_batch, term_tokens, train_bpe
from components.sparse_retrieval.metrics import grounding, per_query
from components.sparse_retrieval.model import EncoderConfig, MilcoEncoder, init_lexical_head
from components.sparse_retrieval.training import encode_all, sap_pretrain

N_WORDS, N_PAIRS, N_BENCH, STEPS = 60, 500, 60, 300


def _word(rng, n):
    return "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), n))


def _fixture(seed=0):
    rng = np.random.default_rng(seed)
    en = [_word(rng, 6) for _ in range(N_WORDS)]
    fo = {w: _word(rng, 7) for w in en}
    pairs = []
    for _ in range(N_PAIRS):
        words = list(rng.choice(en, 6, replace=False))
        pairs.append((" ".join(words), " ".join(fo[w] for w in rng.permutation(words))))
    return pairs


def _train(pairs, *, sabotage: bool):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    tok = train_bpe([e for e, _ in pairs] + [f for _, f in pairs], 400)
    space = EnglishSpace.build([e for e, _ in pairs], 200)
    teacher = space.teacher([e for e, _ in pairs])
    if sabotage:  # the key signal replaced by noise: each foreign text is pulled towards another pair's terms
        teacher = teacher[np.random.default_rng(1).permutation(len(teacher))]
    model = MilcoEncoder(
        EncoderConfig(
            vocab_in=tok.get_vocab_size(),
            vocab_en=len(space),
            echo=False,
            d_model=32,
            n_layers=1,
            n_heads=2,
            d_ff=64,
            d_en=32,
            max_len=12,
        )
    )
    english = encode_batch(tok, [e for e, _ in pairs], 12)
    init_lexical_head(model, english, term_tokens(tok, space.terms), bias=-3.0)  # the pipeline's recipe
    sap_pretrain(
        model,
        encode_batch(tok, [f for _, f in pairs], 12),
        english,
        teacher,
        steps=STEPS,
        batch=32,
        lr=5e-3,
        seed=0,
        floor=-1.0,
    )
    return model, tok, space


def _evaluate(model, tok, space, bench):
    cfg = model.cfg
    q = encode_all(model, *encode_batch(tok, [" ".join(f.split()[:3]) for _, f in bench], 12))
    d = encode_all(model, *encode_batch(tok, [e for e, _ in bench], 12))
    f = encode_all(model, *encode_batch(tok, [f for _, f in bench], 12))
    ranked, _ = IX.InvertedIndex(IX.to_csr(d, cfg.vocab_en, cfg.vocab_in)).search_all(
        IX.to_csr(q, cfg.vocab_en, cfg.vocab_in), 10
    )
    qrels = {str(i): [str(i)] for i in range(len(bench))}
    ndcg = np.mean(
        [m["nDCG@10"] for m in per_query(qrels, {str(i): [str(j) for j in r] for i, r in enumerate(ranked)}).values()]
    )
    return float(ndcg), float(grounding(f["pivot"], [e for e, _ in bench], space.terms, k=6).mean())


def test_sap_grounds_foreign_text_and_beats_bm25_and_the_sabotage_is_caught():
    pairs = _fixture()
    train, bench = pairs[:-N_BENCH], pairs[-N_BENCH:]
    bm25 = bm25_search([e for e, _ in bench], [" ".join(f.split()[:3]) for _, f in bench], 10, stopwords="en")
    qrels = {str(i): [str(i)] for i in range(len(bench))}
    bm25_ndcg = np.mean(
        [m["nDCG@10"] for m in per_query(qrels, {str(i): [str(j) for j in r] for i, r in enumerate(bm25)}).values()]
    )
    ndcg, ground = _evaluate(*_train(train, sabotage=False), bench)
    # 0.4: the pipeline's recipe (teacher floor -1) measured 0.49 here (0.64 with floor 0, which does worse on the
    # real data: Spanish grounding 0.21 vs 0.31 after 150 SAP steps); a shuffled teacher stays below 0.3
    assert ground >= 0.4, f"SAP left the pivot ungrounded: {ground:.2f}"
    assert ndcg >= bm25_ndcg + 0.3, f"MILCO {ndcg:.3f} vs BM25 {bm25_ndcg:.3f}"
    bad_ndcg, bad_ground = _evaluate(*_train(train, sabotage=True), bench)
    print(
        f"known answer: MILCO nDCG@10 {ndcg:.3f} grounding {ground:.2f}; BM25 {bm25_ndcg:.3f}; "
        f"shuffled teacher {bad_ndcg:.3f} / {bad_ground:.2f}"
    )
    assert bad_ground < 0.3 and bad_ndcg < ndcg - 0.3, (bad_ground, bad_ndcg)
