"""Issue 16 (NeuralDB): target values that converge (the residual's learning rate tuned on dev by the targets' NLL)
and never-edited subjects whose recall needs both names (crossed neighbours)."""

from __future__ import annotations

from collections import Counter

import pytest

from components.editing.facts import crossed_neighbours, make_subjects
from components.editing.model import edit_site
from components.editing.targets import compute_targets, tune_lr
from components.errors import DataError, ParamsError
from tests.unit.editing.test_editing_harness import REQS


def test_crossed_neighbours_share_every_name_so_recall_needs_both():
    subjects = make_subjects(2060, 0)
    picked = crossed_neighbours(subjects, 60, 0)
    assert len(picked) == len(set(picked)) == 60 and set(picked) <= set(subjects)
    firsts = Counter(s.split()[0] for s in picked)
    lasts = Counter(s.split()[1] for s in picked)
    # nearly every first and last name is shared by several neighbours (a random sample gives most their own)
    for names in (firsts, lasts):
        assert sum(v == 1 for v in names.values()) <= 1 and len(names) <= 15 and sum(names.values()) / len(names) >= 4
    assert crossed_neighbours(subjects, 60, 0) == picked and crossed_neighbours(subjects, 60, 1) != picked


def test_a_random_sample_of_neighbours_would_not_share_last_names():
    """The defect the crossed block fixes: 60 random subjects of 2,060 mostly have a last name of their own."""
    import numpy as np

    subjects = make_subjects(2060, 0)
    rnd = [subjects[i] for i in np.random.default_rng(0).permutation(len(subjects))[:60]]
    lasts = Counter(s.split()[1] for s in rnd)
    assert sum(v == 1 for v in lasts.values()) > 20


def test_crossed_neighbours_bad_input_names_the_field():
    with pytest.raises(DataError, match="neighbour_pool"):
        crossed_neighbours(make_subjects(30, 0), 31, 0)
    with pytest.raises(DataError, match="First Last"):
        crossed_neighbours(["Solo", "Pair Name"], 1, 0)


def test_tune_lr_picks_the_rate_whose_targets_converge(confident_model, encode):
    """Known answer: a rate too small to move the residual leaves the new object's NLL high; the tuner must not
    pick it. Sabotage (choosing the highest NLL) fails the comparison with compute_targets below."""
    site = edit_site(confident_model, 0)
    kw = dict(steps=5, weight_decay=0.0, clamp=4.0, kl_factor=0.0, chunk=8)
    best, rows = tune_lr(confident_model, site, encode, REQS, [1e-4, 0.5], **kw)
    by = {r["v_lr"]: r["nll"] for r in rows}
    assert by[0.5] < by[1e-4] - 0.05
    assert best == 0.5
    t = compute_targets(confident_model, site, encode, REQS, lr=best, **kw)
    assert float(t.final_nll.mean()) == pytest.approx(min(by.values()), abs=1e-5)


def test_tune_lr_ties_go_to_the_smaller_rate_and_bad_grids_are_refused(confident_model, encode):
    site = edit_site(confident_model, 0)
    kw = dict(steps=1, weight_decay=0.0, clamp=4.0, kl_factor=0.0, chunk=8)
    best, rows = tune_lr(confident_model, site, encode, REQS, [0.5, 0.5], **kw)
    assert best == 0.5 and len(rows) == 1
    with pytest.raises(ParamsError, match="grid"):
        tune_lr(confident_model, site, encode, REQS, [], **kw)
    with pytest.raises(ParamsError, match="grid"):
        tune_lr(confident_model, site, encode, REQS, [0.0], **kw)
