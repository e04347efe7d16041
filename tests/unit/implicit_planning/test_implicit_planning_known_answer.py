"""implicit-planning known answer: in the positive control model, steering at line 1's last token with the
mean-difference vector (layer chosen by the logit metric on training prompts) moves the rhyme out of RF1 towards
RF2 and flips the article before the rhyme word; the equal-norm random vector does neither. In the negative
control (no article dependency) steering moves the rhyme but not the article.

Sabotages that fail here: the vector from test prompts (see also test_steering_math's spy), a shuffled class
assignment (the vector shrinks to noise: nothing moves), a flipped sign (the vector points back into RF1)."""

from __future__ import annotations

import random

import numpy as np
import torch

from components.implicit_planning.couplets import CoupletLanguage
from components.implicit_planning.steering import run_pair
from components.implicit_planning.tasks import control_task
from components.interp.lm import SteerableLM

LANG = CoupletLanguage()
RF1, RF2 = "ight", "ee"  # an "a" family and an "an" family of the control language


def _lines():
    rng = random.Random(5)
    test = LANG.first_lines(RF1, 10, rng)
    train1 = LANG.first_lines(RF1, 40, rng, exclude=set(test))
    return test, train1, LANG.first_lines(RF2, 40, rng)


def _run(model):
    torch.set_num_threads(1)
    test, train1, train2 = _lines()
    lm = SteerableLM(model, pad_id=0)
    res = run_pair(lm, control_task(LANG, position="last"), rf1=RF1, rf2=RF2, train_from=train1, train_to=train2,
                   select_lines=train1[:20], test_lines=test, layers=range(lm.n_layers), multiplier=1.5, samples=5,
                   max_new_tokens=8, temperature=1.0, seed=0, batch_size=50)  # fmt: skip

    def rate(cond, key):
        rows = [r for r in res.rows if r["condition"] == cond]
        return float(np.mean([key(r) for r in rows]))

    return res, rate


def test_positive_control_steering_moves_the_rhyme_and_flips_the_article(positive):
    res, rate = _run(positive)
    rf1 = {c: rate(c, lambda r: r["rf1_hit"]) for c in ("unsteered", "steered", "random")}
    rf2 = {c: rate(c, lambda r: r["rf2_hit"]) for c in ("unsteered", "steered", "random")}
    an = {c: rate(c, lambda r: r["article"] == "an") for c in ("unsteered", "steered", "random")}
    assert rf1["unsteered"] >= 0.8 and rf1["random"] >= 0.8, rf1  # the model plans RF1's rhyme unsteered
    assert rf1["steered"] <= 0.2, rf1  # steering moves the rhyme out of RF1 ...
    assert rf2["steered"] - rf2["unsteered"] >= 0.1, rf2  # ... towards RF2
    assert an["unsteered"] <= 0.1 and an["random"] <= 0.1 and an["steered"] >= 0.8, an  # the article flips first
    kl = [r["kl_share"] for r in res.rows if r["condition"] == "steered"]
    kl_rnd = [r["kl_share"] for r in res.rows if r["condition"] == "random"]
    assert np.nanmean(kl) > np.nanmean(kl_rnd) + 0.2  # backward planning: pre-rhyme tokens change
    moved = [r["kl_pos"] for r in res.rows if r["condition"] == "steered"]
    assert np.nanmean(moved) >= 1.0  # the mechanism engaged (the run's precondition needs 0.05 nats)
    assert all(np.isnan(r["kl_pos"]) for r in res.rows if r["condition"] == "unsteered")


def test_negative_control_steering_moves_the_rhyme_but_not_the_article(negative):
    _, rate = _run(negative)
    rf2 = {c: rate(c, lambda r: r["rf2_hit"]) for c in ("unsteered", "steered")}
    an = {c: rate(c, lambda r: r["article"] == "an") for c in ("unsteered", "steered")}
    assert rf2["steered"] - rf2["unsteered"] >= 0.5, rf2
    assert abs(an["steered"] - an["unsteered"]) <= 0.15, an
