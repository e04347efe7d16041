"""The world, the renderer, the detector and the checker on rendered ground truth; IoU against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from components.errors import ParamsError
from components.got_r1 import checker as C
from components.got_r1 import planner as P
from components.got_r1 import render as R
from components.got_r1 import world as W
from components.got_r1.tokens import Vocab, chain_text, parse_chain

HELD = W.held_out_combos(0)


def _specs(n=120, seed=1, split="train"):
    return W.sample_prompts(n, seed, held=HELD, split=split)


@pytest.mark.parametrize("size", [8, 16])
def test_detector_recovers_every_rendered_box_and_the_checker_accepts_ground_truth(size):
    rng = np.random.default_rng(0)
    specs = _specs(96) + _specs(24, 2, "test")
    for s in specs:
        objs = P.plan(s, size, rng, held=HELD)
        det = R.detect(R.render(objs, size))
        assert sorted((d.colour, d.shape, d.box) for d in det) == sorted(
            (o["colour"], o["shape"], o["box"]) for o in objs
        )
        assert C.check(s, det) == {"correct": True, "score": 1.0, "parts": C.check(s, det)["parts"]}
    acc = np.mean([C.check(s, R.detect(R.render(P.plan(s, size, rng, held=HELD), size)))["correct"] for s in specs])
    assert acc == 1.0


def test_templates_are_distinct_connected_and_touch_their_box_at_every_size():
    from scipy import ndimage

    for h, w in itertools.product(range(3, 17), repeat=2):
        if not 0.5 <= h / w <= 2:
            continue
        masks = {s: R.template(s, h, w) for s in W.SHAPES}
        for s, m in masks.items():
            assert m[0].any() and m[-1].any() and m[:, 0].any() and m[:, -1].any()
            assert ndimage.label(m)[1] == 1 and R.classify(m)[0] == s
        assert all((masks[a] != masks[b]).any() for a, b in itertools.combinations(W.SHAPES, 2))


def test_checker_rejects_a_swapped_colour_and_a_moved_object():
    rng = np.random.default_rng(3)
    colour_specs = [s for s in _specs(120) if s["tag"] in ("colors", "color_attr")]
    for s in colour_specs:
        objs = P.plan(s, 16, rng, held=HELD)
        wrong = W.COLOURS[(W.COLOURS.index(objs[0]["colour"]) + 1) % len(W.COLOURS)]
        if s["tag"] == "color_attr":
            wrong = objs[1]["colour"]  # swap the two objects' colours
            objs = [{**objs[0], "colour": objs[1]["colour"]}, {**objs[1], "colour": objs[0]["colour"]}]
        else:
            objs = [{**objs[0], "colour": wrong}]
        assert not C.check(s, R.detect(R.render(objs, 16)))["correct"]
    for s in [s for s in _specs(120) if s["tag"] == "position"]:
        objs = P.plan(s, 16, rng, held=HELD)
        a, b = objs  # move the second-named object to the other side: swap the boxes
        moved = [{**a, "box": b["box"]}, {**b, "box": a["box"]}]
        res = C.check(s, R.detect(R.render(moved, 16)))
        assert not res["correct"] and res["parts"][-1] == 0.0 and res["score"] == pytest.approx(2 / 3)


def test_counting_is_exact_and_relations_follow_their_definition():
    spec = {"prompt": "a photo of two squares", "tag": "counting", "include": [{"class": "square", "count": 2}]}
    sq = lambda x: {"colour": "red", "shape": "square", "box": (x, 0, x + 2, 2)}  # noqa: E731
    assert C.check(spec, [sq(0), sq(4)])["correct"]
    assert not C.check(spec, [sq(0), sq(4), sq(8)])["correct"]
    assert C.check(spec, [sq(0)])["score"] == 0.5
    assert C.relation_holds("left of", (0, 0, 2, 2), (3, 0, 5, 2)) and not C.relation_holds(
        "left of", (0, 0, 3, 2), (3, 0, 5, 2)
    )
    assert C.relation_holds("above", (0, 0, 2, 2), (0, 3, 2, 5)) and C.relation_holds(
        "below", (0, 3, 2, 5), (0, 0, 2, 2)
    )
    with pytest.raises(ParamsError, match="relation"):
        C.relation_holds("near", (0, 0, 1, 1), (0, 0, 1, 1))


def test_iou_matches_brute_force_cell_counting():
    rng = np.random.default_rng(0)
    for _ in range(200):
        a, b = (sorted(rng.integers(0, 10, 2)) for _ in range(2)), (sorted(rng.integers(0, 10, 2)) for _ in range(2))
        (ax0, ax1), (ay0, ay1) = a
        (bx0, bx1), (by0, by1) = b
        ma, mb = np.zeros((10, 10), bool), np.zeros((10, 10), bool)
        ma[ay0 : ay1 + 1, ax0 : ax1 + 1] = True
        mb[by0 : by1 + 1, bx0 : bx1 + 1] = True
        assert R.iou((ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1)) == pytest.approx((ma & mb).sum() / (ma | mb).sum())


def test_held_out_prompts_name_combinations_no_training_prompt_names():
    train, test = _specs(600), _specs(120, 2, "test")
    seen = set().union(*(W.combos_of(s)[0] | W.combos_of(s)[1] for s in train))
    held = {tuple(c) for c in HELD["colour_shape"]} | {tuple(p) for p in HELD["shape_pairs"]}
    assert not seen & held
    named = [s for s in test if s["tag"] in ("colors", "color_attr", "two_object", "position")]
    assert named and all(W.is_held_out(s, HELD) for s in named)
    with pytest.raises(ParamsError, match="split"):
        W.sample_prompts(3, 0, held=HELD, split="dev")


def test_planner_relation_noise_reverses_the_share_it_names():
    specs = [s for s in _specs(400) if s["tag"] == "position"]
    rng = np.random.default_rng(0)
    ok = [C.check(s, P.plan(s, 16, rng, relation_noise=0.5))["correct"] for s in specs]
    assert 0.35 < np.mean(ok) < 0.65
    assert all(C.check(s, P.plan(s, 16, rng))["correct"] for s in specs)


def test_tokens_round_trip_and_the_grammar_rejects_broken_chains():
    v = Vocab(8)
    rng = np.random.default_rng(0)
    for s in _specs(30):
        objs = P.plan(s, 8, rng, held=HELD)
        img = R.render(objs, 8)
        ids = v.completion(objs, img)
        assert len(v.encode_prompt(s["prompt"]) + ids) == v.seq_len(True)
        d = v.decode(ids, True)
        assert d["chain_valid"] and d["image_valid"] and (d["image"] == img).all()
        assert [(o["colour"], o["shape"], tuple(o["box"])) for o in d["objects"]] == [
            (o["colour"], o["shape"], tuple(o["box"])) for o in objs
        ]
    assert chain_text([{"colour": "red", "shape": "square", "box": (2, 3, 7, 8)}]) == "red square (2,3,7,8)"
    none = ["<none>"] * 6
    assert parse_chain(["red", "square", "c3", "c0", "c1", "c2", *none * 3], 8) == (None, False)  # x0 > x1
    assert parse_chain(none * 4, 8) == (None, False)  # no object
    assert parse_chain([*none, "red", "square", "c0", "c0", "c2", "c2", *none * 2], 8) == (None, False)
    assert v.decode(v.completion(None, R.render([], 8))[:10], False)["image_valid"] is False
    with pytest.raises(ParamsError, match="unknown words"):
        v.encode_prompt("a photo of a dog")
    with pytest.raises(ParamsError, match="image size"):
        Vocab(4)
