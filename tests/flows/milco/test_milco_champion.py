"""MILCO's champion (the encoder with its index): the retriever folder round-trips bit for bit through the
allow-listed loader with the same outputs, the evaluator scores a working retriever well, and a broken encoder (its
weights replaced by noise) or a broken index (its rows shuffled) scores clearly worse. Fast: no pipeline run; the
encoder is an untrained MILCO-mini whose MLM head starts as the English lexical head, so English queries find their
English documents by their shared words."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch

from components.errors import DataError
from components.sparse_retrieval import index as IX
from components.sparse_retrieval.lexicon import EnglishSpace, encode_batch, term_tokens, train_bpe
from components.sparse_retrieval.model import (
    EncoderConfig,
    MilcoEncoder,
    init_lexical_head,
    save_encoder,
    served_output,
)
from components.sparse_retrieval.retriever import Retriever, load_retriever, save_retriever
from components.sparse_retrieval.training import encode_all
from flows.milco import champion
from flows.runtime.mlflow_model import ALLOWED_LOADERS, resolve_loader

LOADER = "components.sparse_retrieval.retriever:load_retriever"
N_DOCS, LEN = 60, 12


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """An encoder, its documents' index, and the benchmark files the evaluator reads (queries, tokenizer)."""
    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), 6)) for _ in range(80)]
    docs = [" ".join(rng.choice(words, 6, replace=False)) for _ in range(N_DOCS)]
    tok = train_bpe(docs, 300)
    space = EnglishSpace.build(docs, 100)
    torch.manual_seed(0)
    model = MilcoEncoder(
        EncoderConfig(
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
    )
    init_lexical_head(model, encode_batch(tok, docs, LEN), term_tokens(tok, space.terms))
    model.eval()
    enc = encode_all(model, *encode_batch(tok, docs, LEN, echo=True))
    index = IX.to_csr(enc, model.cfg.vocab_en, model.cfg.vocab_in, echo=True)
    root = tmp_path_factory.mktemp("milco-root")
    (root / "data").mkdir()
    tok.save(str(root / "data/tokenizer.json"))
    queries = [
        {"qid": f"q{i}", "text": " ".join(d.split()[:2]), "split": "bench", "pair_id": f"p{i}", "entity": False}
        for i, d in enumerate(docs)
    ]
    queries.append({"qid": "t0", "text": docs[0], "split": "train", "pair_id": "p0", "entity": False})  # not scored
    (root / "data/queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    settings = {
        "queries": "data/queries.jsonl",
        "tokenizer": "data/tokenizer.json",
        "split": "bench",
        "query_len": LEN,
        "k": 100,
    }
    return model, index, [f"p{i}" for i in range(N_DOCS)], root, settings


def test_retriever_round_trips_bit_for_bit_with_the_same_outputs(world, tmp_path):
    model, index, ids, root, settings = world
    save_encoder(model, tmp_path / "encoder")
    folder = save_retriever(tmp_path / "encoder", index, ids, tmp_path / "champion")
    for name in ("config.json", "model.safetensors"):  # the trained files themselves, not a re-serialisation
        assert (folder / name).read_bytes() == (tmp_path / "encoder" / name).read_bytes()
    assert LOADER in ALLOWED_LOADERS and resolve_loader(LOADER) is load_retriever
    back = load_retriever(folder)
    want = model.state_dict()
    assert set(back.encoder.state_dict()) == set(want)
    assert all(torch.equal(v, want[k]) for k, v in back.encoder.state_dict().items())
    assert back.doc_ids == ids and (back.docs != index).nnz == 0 and back.docs.dtype == np.float32
    ids_in = encode_batch(load_tok(root), ["alpha beta", "gamma"], LEN, echo=True)[0]
    assert np.array_equal(back.pyfunc_predict(ids_in), served_output(model, ids_in))
    metrics = champion.evaluate(back, settings, root)
    assert metrics == champion.evaluate(Retriever(model, index, ids), settings, root)
    assert set(metrics) == set(champion.RULES) and metrics["ndcg10"] > 0.6


def test_the_evaluator_scores_the_stage_metric_and_broken_retrievers_clearly_worse(world):
    model, index, ids, root, settings = world
    good = champion.evaluate(Retriever(model, index, ids), settings, root)
    # the same number computed independently: rank every query through a fresh index, score with ir_measures
    from components.sparse_retrieval.metrics import per_query

    qs = [json.loads(x) for x in (root / "data/queries.jsonl").read_text().splitlines()]
    qs = [q for q in qs if q["split"] == "bench"]
    q = encode_all(model, *encode_batch(load_tok(root), [x["text"] for x in qs], LEN, echo=True))
    ranked, _ = IX.InvertedIndex(index).search_all(IX.to_csr(q, model.cfg.vocab_en, model.cfg.vocab_in), 100)
    pq = per_query({x["qid"]: [x["pair_id"]] for x in qs}, {x["qid"]: [ids[j] for j in r] for x, r in zip(qs, ranked)})
    assert good["ndcg10"] == pytest.approx(np.mean([pq[x["qid"]]["nDCG@10"] for x in qs]), rel=1e-12)

    noisy = copy.deepcopy(model)  # the encoder's weights replaced by noise of each tensor's scale; index kept
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in noisy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * (p.std() if p.numel() > 1 else 1.0))
    broken_encoder = champion.evaluate(Retriever(noisy, index, ids), settings, root)
    shuffled = index[np.random.default_rng(1).permutation(N_DOCS)]  # the index's rows no longer its documents'
    broken_index = champion.evaluate(Retriever(model, shuffled, ids), settings, root)
    # measured: good nDCG@10 0.82; noisy encoder 0.54 (LexEcho's token columns still match shared token ids);
    # shuffled index 0.07 (chance). Either is worse by more than ten times the rules' 0.02
    for broken in (broken_encoder, broken_index):
        for metric in ("ndcg10", "mrr10"):
            assert broken[metric] < good[metric] - 10 * champion.RULES[metric].tolerance, (metric, good, broken)


def test_missing_data_and_foreign_files_are_named(world, tmp_path):
    model, index, ids, root, settings = world
    with pytest.raises(DataError, match="queries.jsonl: MILCO's benchmark data not found"):
        champion.evaluate(Retriever(model, index, ids), settings, tmp_path)
    with pytest.raises(DataError, match="outside the champion's index"):
        champion.evaluate(Retriever(model, index[:10], ids[:10]), settings, root)
    save_encoder(model, tmp_path / "encoder")
    folder = save_retriever(tmp_path / "encoder", index, ids, tmp_path / "champion")
    np.savez(
        folder / "index.npz",
        data=np.array([{"a": 1}], dtype=object),
        indices=np.zeros(1),
        indptr=np.zeros(2),
        shape=np.array([1, 1]),
    )
    with pytest.raises(DataError, match="not a MILCO retriever folder"):  # an object array: refused, not unpickled
        load_retriever(folder)


def test_served_retriever_and_encoder_return_the_pivot(world, tmp_path, monkeypatch):
    """Both pyfunc models (the champion's and a logged MILCO encoder's) serve the same pivot from token ids, and the
    recurring evaluation's loader (registry copy -> MLmodel -> allow-listed loader) gets the same retriever back."""
    import mlflow.pyfunc

    from flows.milco.common import ENCODER_LOADER, encoder_signature
    from flows.runtime.mlflow_model import load_folder_model, model_uri
    from flows.runtime.tracking import Tracker

    model, index, ids, root, settings = world
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    save_encoder(model, tmp_path / "encoder")
    folder = save_retriever(tmp_path / "encoder", index, ids, tmp_path / "champion")
    tracker = Tracker("milco-serve", "serve", {"paper": "milco"})
    with tracker.child("encoder", {}) as enc:
        encoder = tmp_path / "encoder"
        tracker.log_state_dict_model(enc, encoder, loader=ENCODER_LOADER, signature=encoder_signature(encoder))
    with tracker.child("champion", {}) as rid:
        tracker.log_state_dict_model(rid, folder, loader=LOADER, signature=encoder_signature(folder))
    tracker.finish()
    tokens = encode_batch(load_tok(root), ["alpha beta", "gamma"], LEN, echo=True)[0]
    want = served_output(model, tokens)
    # each model is named for its paper and run, and found from the run
    assert [model_uri(tracker.client, r) for r in (enc, rid)] == [
        f"runs:/{enc}/milco-encoder",
        f"runs:/{rid}/milco-champion",
    ]
    for run_id in (enc, rid):
        uri = model_uri(tracker.client, run_id)
        assert np.array_equal(np.asarray(mlflow.pyfunc.load_model(uri).predict(tokens)), want)
    back = load_folder_model(model_uri(tracker.client, rid), tmp_path / "download")
    assert champion.evaluate(back, settings, root) == champion.evaluate(Retriever(model, index, ids), settings, root)


def load_tok(root):
    from components.sparse_retrieval.lexicon import load_bpe

    return load_bpe(root / "data/tokenizer.json")
