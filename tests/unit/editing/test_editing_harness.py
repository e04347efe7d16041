"""The harness end to end on a random tiny LM: target values work, each method moves P(new), metrics behave."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from components.editing.apply import KeyStats, apply_edit
from components.editing.experiment import gamma_sweep, pick_gamma
from components.editing.metrics import ngram_entropy, rewrite_quality, window_nll
from components.editing.model import edit_site, encode_batch, generic_keys, subject_last_index
from components.editing.targets import compute_targets
from components.errors import DataError

# Prompts end with the subject and targets are one character, so the residual at the subject's last token
# reaches the target's logits directly (a random-weight model has no useful attention to carry it further).
REQS = [
    {
        "id": "a",
        "subject": "Zed Quill",
        "target_true": "R",
        "target_new": "O",
        "prompts": ["Born in: Zed Quill", "Home of Zed Quill"],
        "paraphrase_prompts": ["Long ago lived Zed Quill"],
        "neighborhood_prompts": ["Born in: Amy Rook"],
    },
    {
        "id": "b",
        "subject": "Bo Tarn",
        "target_true": "c",
        "target_new": "h",
        "prompts": ["Plays: Bo Tarn"],
        "paraphrase_prompts": [],
        "neighborhood_prompts": ["Plays: Cy Fenn"],
    },
]


def test_subject_position_and_padding(encode):
    assert subject_last_index(encode, "The home of Zed Quill is", "Zed Quill") == len("The home of Zed Quill") - 1
    enc = encode_batch(encode, ["ab", "abcd"], targets=["x", "yz"])
    assert enc.ids.shape == (2, 6) and enc.target_len.tolist() == [1, 2]
    with pytest.raises(DataError, match="is not in prompt"):
        subject_last_index(encode, "nobody here", "Zed")


def test_targets_lower_the_nll_and_every_method_raises_p_new(confident_model, encode):
    tiny_model = confident_model
    site = edit_site(tiny_model, 0)  # the last layer's MLP at the subject cannot reach later positions
    before = rewrite_quality(tiny_model, encode, REQS)
    t = compute_targets(tiny_model, site, encode, REQS, steps=20, lr=0.5, weight_decay=0.0, clamp=50.0)
    assert t.keys.shape == (2, 64) and t.residuals.shape == (2, 32)
    assert (t.final_nll < 0.5).all()
    k0 = generic_keys(
        tiny_model,
        site,
        torch.randint(1, 127, (1000,), generator=torch.Generator().manual_seed(0)),
        n_keys=500,
        seq_len=20,
    )
    stats = KeyStats.from_keys(k0, null_threshold=0.5)
    for method in ("memit", "neuraldb", "alphaedit"):
        edit = apply_edit(
            tiny_model,
            site,
            method,
            ids=t.ids,
            keys=t.keys,
            residuals=t.residuals,
            stats=stats,
            mom2_weight=1e-3,
            alpha=1e-3,
            gamma=0.9,
        )
        after = rewrite_quality(tiny_model, encode, REQS)
        edit.undo()
        if method != "alphaedit":  # AlphaEdit only edits in the null space of K0, so it need not reach 1
            assert np.nanmean(after["efficacy"]) == 1.0, method
    assert np.array_equal(rewrite_quality(tiny_model, encode, REQS)["efficacy"], before["efficacy"])  # undone


def test_gamma_sweep_and_pick(tiny_model, encode):
    site = edit_site(tiny_model, 0)
    t = compute_targets(tiny_model, site, encode, REQS, steps=3)
    stats = KeyStats(torch.eye(64, dtype=torch.float64), torch.zeros(64), torch.eye(64, dtype=torch.float64))
    rows = gamma_sweep(tiny_model, site, encode, REQS, t, stats, [0.5, 0.99], method_kw={})
    assert [r["gamma"] for r in rows] == [0.5, 0.99] and pick_gamma(rows) in (0.5, 0.99)
    assert pick_gamma([{"gamma": 0.5, "score": 0.7}, {"gamma": 0.9, "score": 0.7}]) == 0.9


def test_metric_helpers(tiny_model):
    assert ngram_entropy("the cat the cat the cat") < ngram_entropy("a quick brown fox jumps over the lazy dog")
    nll = window_nll(tiny_model, torch.randint(0, 127, (1000,)), seq_len=32, n_windows=5)
    assert nll.shape == (5,) and np.isfinite(nll).all() and (nll > 0).all()


def test_the_kl_term_keeps_the_subject_prompt_closer_to_the_unedited_model(confident_model, encode, monkeypatch):
    """MEMIT's KL term: with it, the KL prompt's distribution moves less under the optimised residual.

    A random model carries little from the subject to later positions, so the KL prompt is measured at the
    subject itself here (template "{}"); the pipeline uses MEMIT's "{} is a".
    """
    from components.editing import targets
    from components.editing.targets import _AddResidual

    monkeypatch.setattr(targets, "KL_TEMPLATE", "{}")
    site = edit_site(confident_model, 0)
    reqs = REQS[:1]
    enc = encode_batch(encode, [reqs[0]["subject"]], [reqs[0]["subject"]])

    def drift(kl_factor: float) -> float:
        t = compute_targets(
            confident_model, site, encode, reqs, steps=20, lr=0.5, weight_decay=0.0, clamp=50.0, kl_factor=kl_factor
        )
        with torch.no_grad():
            p0 = torch.log_softmax(confident_model(enc.ids)[0][0, -1], -1)
            hook = _AddResidual(site, t.residuals, torch.tensor([0]), enc.subject_pos)
            p1 = torch.log_softmax(confident_model(enc.ids)[0][0, -1], -1)
            hook.handle.remove()
        return float(torch.nn.functional.kl_div(p1, p0, log_target=True, reduction="sum"))

    free, kept = drift(0.0), drift(10.0)
    assert free > 0.1 and kept < 0.5 * free


def test_memit_lambda_is_swept_and_picked_by_the_same_rule_as_gamma(confident_model, encode):
    from components.editing.experiment import pick_best, sweep

    site = edit_site(confident_model, 0)
    t = compute_targets(confident_model, site, encode, REQS, steps=20, lr=0.5, weight_decay=0.0, clamp=50.0)
    k0 = generic_keys(
        confident_model,
        site,
        torch.randint(1, 127, (1000,), generator=torch.Generator().manual_seed(0)),
        n_keys=500,
        seq_len=20,
    )
    stats = KeyStats.from_keys(k0, null_threshold=0.5)
    rows = sweep(confident_model, site, encode, REQS, t, stats, "memit", "mom2_weight", [1e-3, 1e9], method_kw={})
    by = {r["mom2_weight"]: r for r in rows}
    # a tiny lambda lets MEMIT write the edits; an enormous one keeps W (almost) unchanged
    assert by[1e-3]["efficacy"] == 1.0 and by[1e-3]["efficacy"] > by[1e9]["efficacy"]
    assert pick_best(rows, "mom2_weight") == 1e-3
    assert pick_best([{"x": 1.0, "score": 0.5}, {"x": 2.0, "score": 0.5}], "x") == 2.0  # ties: the larger value
