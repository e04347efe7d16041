"""Issue 16 (NeuralDB): AlphaEdit's settings tuned like the others, the store's retrieval accuracy, the layer check,
single-pass scoring, per-seed windows and disjoint edit sets."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.editing.apply import KeyStats, apply_edit
from components.editing.experiment import key_retrieval, pick_best, pick_layer, retrieval_quality, sweep_grid
from components.editing.facts import disjoint_orders
from components.editing.metrics import score, score_pair, window_nll
from components.editing.model import edit_site, encode_batch, logits_of, scores_at_targets, target_scores
from components.editing.neuraldb import NeuralKVDB
from components.editing.targets import compute_targets
from tests.unit.editing.test_editing_harness import REQS as _REQS

REQS = [dict(_REQS[0], neighborhood_subjects=["Amy Rook"]), dict(_REQS[1], neighborhood_subjects=["Cy Fenn"])]


def test_null_space_dimension_and_energy_follow_the_relative_threshold():
    evals = torch.tensor([1.0, 1e-1, 1e-3, 1e-5], dtype=torch.float64)
    q, _ = torch.linalg.qr(torch.randn(4, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0)))
    cov = q @ torch.diag(evals) @ q.T
    stats = KeyStats(cov, torch.zeros(4), torch.eye(4, dtype=torch.float64), null_threshold=0.99)
    assert stats.null_space(1e-2)["dim"] == 2
    assert stats.null_space(1e-2)["energy_share"] == pytest.approx(float((1e-3 + 1e-5) / evals.sum()), rel=1e-6)
    assert stats.null_space(1e-4)["dim"] == 1 and stats.null_space(0.5)["dim"] == 3


def test_alphaedit_uses_the_threshold_it_is_given(confident_model, encode):
    site = edit_site(confident_model, 0)
    t = compute_targets(confident_model, site, encode, REQS, steps=5)
    k0 = torch.randn(400, 64, generator=torch.Generator().manual_seed(1)) * torch.logspace(0, -4, 64)
    stats = KeyStats.from_keys(k0, null_threshold=1e-2)
    norms = {}
    w0 = site.weight.clone().double()
    for thr in (0.5, 1e-2, 1e-6):
        e = apply_edit(
            confident_model,
            site,
            "alphaedit",
            ids=t.ids,
            keys=t.keys,
            residuals=t.residuals,
            stats=stats,
            alpha=1.0,
            null_threshold=thr,
        )
        d = site.weight.double() - w0
        e.undo()
        norms[thr] = round(float(d.norm()), 6)
        # the update vanishes on the preserved subspace of *that* threshold: D (I - P) = 0
        keep = torch.eye(64, dtype=torch.float64) - stats.projector_at(thr)
        assert float((d @ keep).norm()) < 1e-4 * max(float(d.norm()), 1e-12) + 1e-6
    assert len(set(norms.values())) == 3  # a different null space gives a different edit


def test_alphaedit_threshold_and_alpha_are_tuned_by_the_dev_rule(confident_model, encode):
    site = edit_site(confident_model, 0)
    t = compute_targets(confident_model, site, encode, REQS, steps=10, lr=0.5, weight_decay=0.0, clamp=50.0)
    stats = KeyStats.from_keys(torch.randn(400, 64, generator=torch.Generator().manual_seed(2)))
    grid = [{"null_threshold": a, "alpha": b} for a in (0.9, 1e-6) for b in (1e-3, 1e3)]
    rows = sweep_grid(confident_model, site, encode, REQS, t, stats, "alphaedit", grid, method_kw={})
    assert [(r["null_threshold"], r["alpha"]) for r in rows] == [(g["null_threshold"], g["alpha"]) for g in grid]
    best = pick_best(rows, ("null_threshold", "alpha"))
    assert max(r["score"] for r in rows) == next(
        r["score"] for r in rows if r["null_threshold"] == best["null_threshold"] and r["alpha"] == best["alpha"]
    )
    # ties go to the larger values, in the order named
    tie = [{"null_threshold": 1e-2, "alpha": 1.0, "score": 0.5}, {"null_threshold": 1e-2, "alpha": 10.0, "score": 0.5}]
    assert pick_best(tie, ("null_threshold", "alpha")) == {"null_threshold": 1e-2, "alpha": 10.0}


def test_store_retrieval_accuracy_known_answer_and_sabotage(confident_model, encode):
    site = edit_site(confident_model, 0)
    t = compute_targets(confident_model, site, encode, REQS, steps=2)
    db = NeuralKVDB(torch.zeros(64), gamma=-1.0)
    db.add(t.ids, t.keys, t.residuals)
    q = retrieval_quality(confident_model, site, encode, REQS, db)
    assert q["retrieval"] == [1.0, 1.0]  # each rewrite prompt finds its own fact
    assert q["neighbour_hits"] == [1.0, 1.0]  # gamma = -1 lets everything through
    swapped = NeuralKVDB(torch.zeros(64), gamma=-1.0)  # sabotage: the keys stored under the wrong ids
    swapped.add(t.ids[::-1], t.keys, t.residuals)
    assert retrieval_quality(confident_model, site, encode, REQS, swapped)["retrieval"] == [0.0, 0.0]
    closed = NeuralKVDB(torch.zeros(64), gamma=1.0)  # a gate nothing passes: no retrieval, no false hits
    closed.add(t.ids, t.keys, t.residuals)
    q = retrieval_quality(confident_model, site, encode, REQS, closed)
    assert q["retrieval"] == [0.0, 0.0] and q["neighbour_hits"] == [0.0, 0.0]


def test_colliding_subject_keys_score_low_retrieval(confident_model, encode):
    """Two requests with the same subject string have identical keys: the argmax can return only one of them."""
    site = edit_site(confident_model, 0)
    twin = [dict(REQS[0]), dict(REQS[0], id="a2", target_new="X")]
    r = key_retrieval(confident_model, site, encode, twin, torch.zeros(64))
    assert r["rewrite"] == pytest.approx(0.5)
    assert key_retrieval(confident_model, site, encode, REQS, torch.zeros(64))["rewrite"] == 1.0


def test_layer_choice_needs_retrieval_that_works():
    trace = [
        {"layer": 0, "effect": 0.4, "retrieval": {"score": 0.3}},
        {"layer": 1, "effect": 0.1, "retrieval": {"score": 0.95}},
        {"layer": 2, "effect": 0.2, "retrieval": {"score": 0.92}},
        {"layer": 3, "effect": 0.9, "retrieval": {"score": 1.0}},
    ]  # the last layer is never a candidate
    assert pick_layer(trace) == 0  # the trace alone picks the colliding layer
    assert pick_layer(trace, min_retrieval=0.9) == 2
    assert pick_layer(trace, min_retrieval=0.99) == 1  # none passes: the best-retrieving layer


def test_one_pass_scores_equal_two_passes(tiny_model, encode):
    prompts, new, true = ["Born in: Zed Quill", "Plays: Bo Tarn"], ["O", "h"], ["R", "c"]
    ln, lt, acc = score_pair(tiny_model, encode, prompts, new, true)
    ln2, acc2 = score(tiny_model, encode, prompts, new)
    lt2, _ = score(tiny_model, encode, prompts, true)
    assert np.allclose(ln, ln2, atol=1e-5) and np.allclose(lt, lt2, atol=1e-5) and np.array_equal(acc, acc2)
    enc = encode_batch(encode, prompts, targets=["Oak", "h"])  # multi-token targets: the head at target rows only
    a, b = scores_at_targets(tiny_model, enc), target_scores(logits_of(tiny_model, enc.ids), enc)
    assert torch.allclose(a[0], b[0], atol=1e-5) and torch.allclose(a[1], b[1])


def test_each_seed_gets_its_own_held_out_windows(tiny_model):
    tokens = torch.randint(0, 127, (2000,), generator=torch.Generator().manual_seed(0))
    a = window_nll(tiny_model, tokens, seq_len=32, n_windows=5)
    b = window_nll(tiny_model, tokens, seq_len=32, n_windows=5, shift=32)
    assert not np.allclose(a, b)
    assert np.allclose(a, window_nll(tiny_model, tokens, seq_len=32, n_windows=5, shift=0))


def test_edit_sets_are_disjoint_across_seeds_where_the_pool_allows():
    o = disjoint_orders(2000, [0, 1, 2], 2000, seed=0)
    heads = [set(o[s][:666]) for s in ("0", "1", "2")]
    assert not heads[0] & heads[1] and not heads[0] & heads[2] and not heads[1] & heads[2]
    assert all(sorted(v) == list(range(2000)) for v in o.values())  # the largest m still edits the whole pool
    small = disjoint_orders(900, [0, 1, 2], 300, seed=0)
    assert len(set().union(*map(set, small.values()))) == 900  # k <= n / seeds: fully disjoint
