"""The mathematics of MILCO-mini against references: the SAP loss's mask, LexEcho's matched-token score (brute
force), FLOPS (closed form), mass/top-k pruning (brute force over prefixes), the inverted index (dense product)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from components.sparse_retrieval import index as IX
from components.sparse_retrieval.losses import flops, lexecho_pair_scores, sap_loss
from components.sparse_retrieval.model import EncoderConfig, MilcoEncoder, echo_bags


def test_sap_loss_uses_only_dims_where_student_or_teacher_is_positive():
    s = torch.tensor([[0.5, -1.0, -2.0, 0.0], [-0.3, 2.0, -0.1, -4.0]], requires_grad=True)
    t = torch.tensor([[0.0, 1.5, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    loss = sap_loss(s, t)
    # positive somewhere: (0,0) s>0, (0,1) t>0, (1,1) both
    want = ((0.5 - 0) ** 2 + (-1.0 - 1.5) ** 2 + (2.0 - 1.0) ** 2) / 3
    assert float(loss.detach()) == pytest.approx(want)
    loss.backward()
    g = s.grad.numpy()
    assert np.all(g[[0, 0, 1, 1, 1], [2, 3, 0, 2, 3]] == 0)  # both <= 0: no gradient, however wrong the value
    moved = s.detach().clone()
    moved[0, 2], moved[1, 3] = -50.0, -0.001
    assert float(sap_loss(moved, t)) == pytest.approx(want)


def _brute_echo(q_ids, q_v, d_ids, d_v):
    return sum(q_v[i] * d_v[j] for i in range(len(q_ids)) for j in range(len(d_ids)) if q_ids[i] == d_ids[j])


def test_lexecho_adds_exactly_the_matched_token_products():
    rng = np.random.default_rng(0)
    q_ids, d_ids = torch.as_tensor(rng.integers(4, 12, (3, 5))), torch.as_tensor(rng.integers(4, 12, (4, 7)))
    q_v, d_v = torch.as_tensor(rng.random((3, 5))), torch.as_tensor(rng.random((4, 7)))
    pair = lexecho_pair_scores(q_ids, q_v, d_ids, d_v)
    bags = echo_bags(q_ids, q_v, 12) @ echo_bags(d_ids, d_v, 12).T
    for a in range(3):
        for b in range(4):
            want = _brute_echo(q_ids[a].tolist(), q_v[a].tolist(), d_ids[b].tolist(), d_v[b].tolist())
            assert float(pair[a, b]) == pytest.approx(want) and float(bags[a, b]) == pytest.approx(want)
    # through the index: score = pivot dot product + exactly the matched products
    pq, pd = rng.random((3, 6)) * (rng.random((3, 6)) > 0.5), rng.random((4, 6)) * (rng.random((4, 6)) > 0.5)
    qm = IX.to_csr({"pivot": pq, "echo": q_v.numpy(), "ids": q_ids.numpy()}, 6, 12)
    dm = IX.to_csr({"pivot": pd, "echo": d_v.numpy(), "ids": d_ids.numpy()}, 6, 12)
    ix = IX.InvertedIndex(dm)
    for a in range(3):
        assert ix.scores(qm[a]) == pytest.approx(pq[a] @ pd.T + pair[a].numpy(), rel=1e-5)
    no_echo = IX.InvertedIndex(IX.to_csr({"pivot": pd}, 6, 12))
    assert no_echo.scores(IX.to_csr({"pivot": pq}, 6, 12)[0]) == pytest.approx(pq[0] @ pd.T, rel=1e-5)


def test_echo_view_is_zero_at_special_tokens_and_padding():
    model = MilcoEncoder(EncoderConfig(vocab_in=20, vocab_en=10, d_model=16, n_heads=2, d_ff=16, d_en=8, max_len=8))
    ids = torch.tensor([[2, 3, 5, 6, 0, 0]])
    out = model(ids, (ids != 0).long())
    assert out["pivot"].min() >= 0 and out["pivot"].shape == (1, 10)
    assert torch.all(out["echo"][0, [0, 1, 4, 5]] == 0)


def test_flops_closed_form():
    r = torch.tensor([[1.0, 0.0, -2.0], [3.0, 0.0, 0.0]])
    assert float(flops(r)) == pytest.approx(2.0**2 + 0 + 1.0**2)


def _rows(rng, n=12, width=40):
    dense = rng.random((n, width)) * (rng.random((n, width)) < 0.5)
    return sp.csr_matrix(dense.astype(np.float32))


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.73, 0.9, 1.0])
def test_mass_pruning_keeps_the_smallest_prefix_holding_the_share(fraction):
    m = _rows(np.random.default_rng(1))
    pruned = IX.mass_prune(m, fraction)
    for i in range(m.shape[0]):
        v = np.sort(m[i].data)[::-1]
        # brute force: the first prefix length whose sum reaches the share
        want = next(n for n in range(1, len(v) + 1) if v[:n].sum() >= fraction * v.sum() * (1 - 1e-9))
        kept = pruned[i].data
        assert len(kept) == want
        assert np.allclose(np.sort(kept)[::-1], v[:want])  # and they are the heaviest terms
        assert set(pruned[i].indices) <= set(m[i].indices)


def test_topk_and_calibration():
    m = _rows(np.random.default_rng(2))
    top = IX.topk_prune(m, 5)
    assert np.all(IX.active_dims(top) == np.minimum(5, IX.active_dims(m)))
    f = IX.calibrate_mass(m, 6.0)
    assert abs(IX.active_dims(IX.mass_prune(m, f)).mean() - 6.0) < 1.0


def test_inverted_index_matches_the_dense_product():
    rng = np.random.default_rng(3)
    docs, q = _rows(rng, 30, 25), _rows(rng, 4, 25)
    ix = IX.InvertedIndex(docs)
    assert ix.index_bytes == docs.nnz * 6
    ranked, lat = ix.search_all(q, 5)
    ref = (q @ docs.T).toarray()
    for a in range(4):
        assert np.allclose(ref[a][ranked[a]], np.sort(ref[a])[::-1][:5]) and lat >= 0


def test_calibration_agrees_with_the_per_row_mass_count():
    m = _rows(np.random.default_rng(4), 20, 30)
    f = IX.calibrate_mass(m, 5.0)
    brute = np.mean([IX.mass_count(np.sort(m[i].data)[::-1], f) for i in range(m.shape[0])])
    assert brute == pytest.approx(IX.active_dims(IX.mass_prune(m, f)).mean())
    assert abs(brute - 5.0) < 1.0


def test_raw_max_is_over_real_tokens_and_the_pivot_matches_the_official_masked_form():
    torch.manual_seed(0)
    model = MilcoEncoder(
        EncoderConfig(vocab_in=20, vocab_en=10, echo=False, d_model=16, n_heads=2, d_ff=16, d_en=8, max_len=8)
    )
    with torch.no_grad():
        model.mlm_head.decoder.bias.fill_(-5.0)  # every logit < 0: the official form's max would come from padding
        ids = torch.tensor([[2, 5, 6, 0, 0], [2, 7, 8, 9, 4]])
        mask = (ids != 0).long()
        out = model(ids, mask)
        logits = model.mlm_head(torch.nn.functional.gelu(model.connector(model.hidden(ids, mask))))
    brute = torch.stack([logits[b, mask[b] > 0].max(0).values for b in range(2)])
    assert torch.allclose(out["raw"], brute) and bool((out["raw"][0] < 0).all())
    official = torch.log1p(torch.relu((logits * mask.unsqueeze(-1)).max(1).values))
    assert torch.allclose(out["pivot"], official)


def test_head_on_real_tokens_only_equals_the_masked_dense_form_in_value_and_gradient():
    """max_logits runs the head on the real tokens only (a speed-up); values and every parameter's gradient must be
    those of the head on every position with padding masked to -1e4 before the max."""
    torch.manual_seed(1)
    model = MilcoEncoder(
        EncoderConfig(vocab_in=30, vocab_en=40, echo=False, d_model=16, n_heads=2, d_ff=16, d_en=8, max_len=8)
    )
    ids = torch.tensor([[2, 5, 6, 0, 0, 0], [2, 7, 8, 9, 4, 3], [2, 11, 0, 0, 0, 0]])
    mask = (ids != 0).long()
    weights = torch.randn(3, 40)

    def grads(raw):
        model.zero_grad()
        (raw * weights).sum().backward()
        return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

    fast = model(ids, mask)["raw"]
    g_fast = grads(fast)
    full = model.mlm_head(torch.nn.functional.gelu(model.connector(model.hidden(ids, mask))))
    dense = full.masked_fill(mask.unsqueeze(-1) == 0, -1e4).max(dim=1).values
    g_dense = grads(dense)
    assert torch.allclose(fast, dense, atol=1e-6)
    assert g_fast.keys() == g_dense.keys() and "mlm_head.decoder.weight" in g_fast
    for name in g_dense:
        assert torch.allclose(g_fast[name], g_dense[name], atol=1e-5), name


def test_teacher_floor_fills_absent_terms_and_the_sap_mask_follows():
    from components.sparse_retrieval.training import teacher_rows

    t = sp.csr_matrix(np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 0.0]], np.float32))
    rows = teacher_rows(t, np.array([1, 0]), floor=-1.0)
    assert rows.tolist() == [[1.0, -1.0, -1.0], [-1.0, 2.0, -1.0]]
    s = torch.tensor([[0.5, -0.2, 0.3], [-0.1, 1.0, -3.0]])
    # dims where student or teacher > 0: (0,0), (0,2), (1,1); absent terms pull a positive student towards -1
    want = ((0.5 - 1.0) ** 2 + (0.3 + 1.0) ** 2 + (1.0 - 2.0) ** 2) / 3
    assert float(sap_loss(s, rows)) == pytest.approx(want)


def test_lexical_head_switches_on_an_english_texts_own_words():
    from components.sparse_retrieval.lexicon import EnglishSpace, encode_batch, term_tokens, train_bpe
    from components.sparse_retrieval.metrics import grounding
    from components.sparse_retrieval.model import init_lexical_head

    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("abcdefghij"), 5)) for _ in range(40)]
    texts = [" ".join(rng.choice(words, 5, replace=False)) for _ in range(200)]
    tok = train_bpe(texts, 200)
    space = EnglishSpace.build(texts, 40)
    cfg = EncoderConfig(
        vocab_in=tok.get_vocab_size(),
        vocab_en=len(space),
        echo=False,
        d_model=32,
        n_heads=2,
        d_ff=32,
        d_en=32,
        max_len=10,
    )
    scores = {}
    for init in (False, True):
        torch.manual_seed(0)
        model = MilcoEncoder(cfg)
        enc = encode_batch(tok, texts, 10)
        if init:
            init_lexical_head(model, enc, term_tokens(tok, space.terms), bias=-3.0)
        with torch.no_grad():
            piv = model(*map(torch.as_tensor, enc))["pivot"].numpy()
        scores[init] = float(grounding(piv, texts, space.terms, k=5).mean())
    assert scores[True] >= 0.6 and scores[True] > scores[False] + 0.3, scores


def test_dev_sweep_keeps_each_models_best_rate_ties_to_the_smaller():
    from flows.milco.train import choose

    runs = [
        {"variant": "milco", "lr": 3e-3, "dev_ndcg": 0.5},
        {"variant": "milco", "lr": 1e-3, "dev_ndcg": 0.4},
        {"variant": "dense", "lr": 3e-3, "dev_ndcg": 0.3},
        {"variant": "dense", "lr": 1e-3, "dev_ndcg": 0.3},
    ]
    assert choose(runs) == {"milco": 3e-3, "dense": 1e-3}
