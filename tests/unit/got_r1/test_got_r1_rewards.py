"""The four rule rewards pinned on hand-computed cases, the product form, and the sabotages a reviewer would try:
dropping R_RI from the product, and scoring the picture against another prompt."""

from __future__ import annotations

import numpy as np
import pytest

from components.errors import ParamsError
from components.got_r1 import rewards as R
from components.got_r1 import train as T
from components.got_r1.planner import plan
from components.got_r1.render import detect, render
from components.got_r1.tokens import Vocab
from components.got_r1.world import held_out_combos, sample_prompts

POS = {
    "prompt": "a photo of a square left of a circle",
    "tag": "position",
    "include": [{"class": "circle", "count": 1}, {"class": "square", "count": 1, "position": ["left of", 0]}],
}
SQ = {"colour": "red", "shape": "square", "box": (0, 0, 2, 2)}
CI = {"colour": "blue", "shape": "circle", "box": (5, 0, 7, 2)}


def test_every_term_on_a_correct_plan_and_its_picture_is_one():
    t = R.rewards(POS, [CI, SQ], render([CI, SQ], 8))
    assert t == {"sem": 1.0, "spa": 1.0, "ri": 1.0, "pi": 1.0, "hps": 1.0, "total": 1.0}


def test_terms_against_hand_computed_values():
    # a chain with a stray triangle: coverage 1, one stray of three objects -> R_sem = 2/3
    tri = {"colour": "green", "shape": "triangle", "box": (0, 5, 2, 7)}
    assert R.r_sem(POS, [CI, SQ, tri]) == pytest.approx(1 - 1 / 3)
    # the relation reversed in the chain: in-grid 1, disjoint 1, relation 0 -> R_spa = 2/3
    rev = [{**CI, "box": SQ["box"]}, {**SQ, "box": CI["box"]}]
    assert R.r_spa(POS, rev, 8) == pytest.approx(2 / 3)
    # overlapping boxes: 1, 0, relation 0 -> 1/3
    assert R.r_spa(POS, [CI, {**SQ, "box": (4, 0, 6, 2)}], 8) == pytest.approx(1 / 3)
    # R_RI: the square drawn one cell lower than planned: IoU 2*3/(9+9-6) = 1/2; the circle exact -> 3/4
    img = render([CI, {**SQ, "box": (0, 1, 2, 3)}], 8)
    assert R.r_ri([CI, SQ], detect(img)) == pytest.approx(0.75)
    # counting: three planned for "two" -> coverage 1 - excess 1/3
    cnt = {"prompt": "a photo of two rings", "tag": "counting", "include": [{"class": "ring", "count": 2}]}
    rings = [{"colour": "red", "shape": "ring", "box": (x, 0, x + 2, 2)} for x in (0, 4, 8)]
    assert R.r_sem(cnt, rings) == pytest.approx(2 / 3)
    # the product: R_PI * (R_sem + R_spa) / 2 * R_RI on a broken chain and a correct picture
    t = R.rewards(POS, [CI, SQ, tri], img)
    assert t["total"] == pytest.approx(t["pi"] * (t["sem"] + t["spa"]) / 2 * t["ri"])
    assert R.rewards(POS, None, img)["total"] == 0.0
    # the HPS stand-in: a stray 2-cell speck is noise; the 3x3 circle (a plus) has 5 cells -> 5/7
    speck = render([CI], 8)
    speck[7, 0:2] = 1
    assert R.r_hps(speck, detect(speck)) == pytest.approx(5 / 7)
    assert R.rewards(POS, [CI, SQ], speck, hps=True)["total"] <= R.rewards(POS, [CI, SQ], speck)["total"]
    with pytest.raises(ParamsError, match="reward kind"):
        R.rewards(POS, [CI, SQ], img, kind="sem")


def test_a_picture_that_answers_the_prompt_but_ignores_the_plan_scores_low():
    """The process term: R_PI is 1, the chain is perfect, but the picture puts the objects elsewhere. Dropping
    R_RI from the product (the sabotage) gives this 1.0 and fails here."""
    elsewhere = [{**CI, "box": (5, 5, 7, 7)}, {**SQ, "box": (0, 4, 2, 6)}]
    t = R.rewards(POS, [CI, SQ], render(elsewhere, 8))
    assert t["pi"] == 1.0 and t["sem"] == 1.0 and t["spa"] == 1.0
    assert t["total"] < 0.2
    assert R.rewards(POS, [CI, SQ], render(elsewhere, 8), kind="pi")["total"] == 1.0


def test_the_reward_function_scores_each_completion_against_its_own_prompt():
    """Ground-truth completions of a batch of different prompts all score 1; scoring against a neighbour's
    prompt (the sabotage) does not."""
    v, held = Vocab(8), held_out_combos(0)
    specs = sample_prompts(12, 3, held=held, split="train")
    rng = np.random.default_rng(0)
    comps = []
    for s in specs:
        objs = plan(s, 8, rng, held=held)
        comps.append(v.completion(objs, render(objs, 8)))
    fn = T.make_reward_fn(v, specs, kind="full")
    assert [fn(i, c) for i, c in enumerate(comps)] == [1.0] * len(specs)
    shifted = [fn((i + 1) % len(specs), c) for i, c in enumerate(comps)]
    assert np.mean(shifted) < 0.5
