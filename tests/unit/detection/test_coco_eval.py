"""Our COCO evaluation (components.detection.coco) against pycocotools' COCOeval itself."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from components.detection import coco as C


def _cocoeval(gts, dets, area_rng=None, crowd=None):
    """COCOeval stats for one category: gts[i] = boxes, dets[i] = (boxes, scores)."""
    images = [{"id": i, "width": 200, "height": 200} for i in range(len(gts))]
    anns, k = [], 1
    for i, g in enumerate(gts):
        for j, b in enumerate(g):
            iscrowd = int(crowd[i][j]) if crowd is not None else 0
            anns.append(
                {
                    "id": k,
                    "image_id": i,
                    "category_id": 1,
                    "bbox": list(map(float, b)),
                    "area": float(b[2] * b[3]),
                    "iscrowd": iscrowd,
                }
            )
            k += 1
    gt = COCO()
    gt.dataset = {"images": images, "annotations": anns, "categories": [{"id": 1, "name": "person"}]}
    with contextlib.redirect_stdout(io.StringIO()):
        gt.createIndex()
        res = [
            {"image_id": i, "category_id": 1, "bbox": list(map(float, b)), "score": float(s)}
            for i, (bs, ss) in enumerate(dets)
            for b, s in zip(bs, ss)
        ]
        dt = gt.loadRes(res) if res else COCO()
        ev = COCOeval(gt, dt, "bbox")
        if area_rng is not None:
            ev.params.areaRng = [list(area_rng)] * 4
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev.stats  # AP, AP50, AP75, ..., AR@1, AR@10, AR@100, ...


def _random_case(seed, n_img=12):
    rng = np.random.default_rng(seed)
    gts, dets = [], []
    for _ in range(n_img):
        n = int(rng.integers(0, 5))
        g = np.c_[rng.uniform(0, 150, (n, 2)), rng.uniform(5, 50, (n, 2))]
        jit = g + rng.normal(0, 4, g.shape)  # detections near the truth, plus clutter
        jit[:, 2:] = np.abs(jit[:, 2:]) + 1
        m = int(rng.integers(0, 6))
        clutter = np.c_[rng.uniform(0, 150, (m, 2)), rng.uniform(5, 50, (m, 2))]
        d = np.r_[jit[rng.random(n) < 0.8], clutter]
        gts.append(g)
        dets.append((d, rng.random(len(d))))
    return gts, dets


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_pycocotools_on_random_boxes(seed):
    gts, dets = _random_case(seed)
    stats = _cocoeval(gts, dets)
    ours = C.evaluate(dets, [(g, np.zeros(len(g), bool)) for g in gts])
    assert ours["ap"] == pytest.approx(stats[0], abs=1e-12)
    assert ours["ap50"] == pytest.approx(stats[1], abs=1e-12)
    assert ours["ap75"] == pytest.approx(stats[2], abs=1e-12)
    assert ours["ar"] == pytest.approx(stats[8], abs=1e-12)
    assert 0 < ours["ap"] < 1


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_equals_pycocotools_when_recalls_land_exactly_on_the_recall_thresholds(seed):
    """200 ground-truth boxes: every recall k/200 with even k equals one of COCOeval's 101 thresholds, where a
    search that rounds (recall + offset) lands on the wrong side (it did: AP off by ~1e-6)."""
    rng = np.random.default_rng(seed)
    gts = [np.c_[rng.uniform(0, 150, (2, 2)), rng.uniform(10, 50, (2, 2))] for _ in range(100)]
    dets = []
    for g in gts:
        clutter = np.c_[rng.uniform(0, 150, (2, 2)), rng.uniform(10, 50, (2, 2))]
        d = np.r_[g[rng.random(2) < 0.7], clutter]
        d = d + rng.normal(0, 2, d.shape)  # near the truth: matched at some IoU thresholds, not at others
        d[:, 2:] = np.abs(d[:, 2:]) + 1
        dets.append((d, rng.random(len(d))))
    stats = _cocoeval(gts, dets)
    ours = C.evaluate(dets, [(g, np.zeros(len(g), bool)) for g in gts])
    for k, i in (("ap", 0), ("ap50", 1), ("ap75", 2), ("ar", 8)):
        assert ours[k] == pytest.approx(stats[i], abs=1e-12), k


def test_ignore_flags_equal_pycocotools_area_range_on_a_hand_built_case():
    """Subset = boxes with area in [400, 2500]: our ignore flags give what COCOeval's area range gives (it ignores
    out-of-range ground truth and unmatched out-of-range detections)."""
    gts = [
        np.array([[10, 10, 30, 30], [60, 60, 10, 10], [100, 20, 60, 60]], float),  # areas 900, 100, 3600
        np.array([[5, 5, 40, 40], [80, 80, 12, 12]], float),
    ]  # areas 1600, 144
    dets = [
        (
            np.array([[11, 10, 30, 30], [60, 61, 10, 10], [101, 21, 58, 60], [150, 150, 30, 30]], float),
            np.array([0.9, 0.95, 0.8, 0.85]),
        ),
        (np.array([[6, 5, 40, 38], [80, 80, 12, 12], [0, 100, 25, 25]], float), np.array([0.7, 0.99, 0.6])),
    ]
    rng = (400.0, 2500.0)
    stats = _cocoeval(gts, dets, area_rng=rng)
    out = lambda a: (a < rng[0]) | (a > rng[1])  # noqa: E731
    matches = [
        C.match_image(d, s, g, out(g[:, 2] * g[:, 3]), dt_ignore_unmatched=out(d[:, 2] * d[:, 3]))
        for (d, s), g in zip(dets, gts)
    ]
    ap = C.average_precision(C.pool(matches))
    assert ap["ap"][0] == pytest.approx(stats[0], abs=1e-12) and ap["ap50"][0] == pytest.approx(stats[1], abs=1e-12)
    assert stats[1] < 1.0  # the unmatched in-range detection at 0.85 is a false positive
    # plain ignore flags (no area rule for detections): matched-to-ignored detections vanish, others are FPs
    flags = [C.match_image(d, s, g, out(g[:, 2] * g[:, 3])) for (d, s), g in zip(dets, gts)]
    p = C.pool(flags)
    assert p.n_gt.sum() == 2  # the two in-range boxes
    assert p.tp[0].sum() == 2 and p.fp[0].sum() == 2  # clutter at 0.85 and 0.6 stay false positives


def test_crowd_ignore_in_pycocotools_differs_from_ours_only_by_the_crowd_iou():
    """COCOeval's iscrowd also ignores (no hit, no miss): on boxes whose crowd IoU and plain IoU agree on the match,
    the AP equals our ignore-flag AP."""
    gts = [np.array([[10, 10, 30, 30], [70, 70, 20, 20]], float)]
    dets = [(np.array([[10, 10, 30, 30], [70, 70, 20, 20], [0, 120, 20, 20]], float), np.array([0.6, 0.9, 0.8]))]
    stats = _cocoeval(gts, dets, crowd=[[0, 1]])
    ap = C.average_precision(C.pool([C.match_image(d, s, g, [False, True]) for (d, s), g in zip(dets, gts)]))
    assert ap["ap"][0] == pytest.approx(stats[0], abs=1e-12)


def test_perfect_detections_give_one_and_shifted_ones_the_iou_determined_value():
    gts = [np.array([[10.0, 10.0, 40.0, 40.0]]), np.array([[50.0, 20.0, 20.0, 60.0]])]
    flags = [np.zeros(1, bool)] * 2
    perfect = [(g.copy(), np.ones(1)) for g in gts]
    r = C.evaluate(perfect, list(zip(gts, flags)))
    assert r["ap"] == 1.0 and r["ap50"] == 1.0 and r["ar"] == 1.0 and r["recall_1fppi"] == 1.0
    # shift every box right by a quarter of its width: IoU = 0.75 / 1.25 = 0.6, a hit at 0.5, 0.55, 0.6 only
    shifted = [(g + np.array([g[0, 2] / 4, 0, 0, 0]), np.ones(1)) for g in gts]
    r = C.evaluate(shifted, list(zip(gts, flags)))
    assert r["ap50"] == 1.0 and r["ap75"] == 0.0 and r["ap"] == pytest.approx(0.3)


def test_weights_equal_duplicated_images():
    gts, dets = _random_case(5, n_img=6)
    matches = [C.match_image(d, s, g, np.zeros(len(g), bool)) for (d, s), g in zip(dets, gts)]
    w = np.array([[2, 0, 1, 1, 3, 0]], float)
    dup = [m for m, k in zip(matches, w[0].astype(int)) for _ in range(k)]
    a = C.average_precision(C.pool(matches), w)["ap"][0]
    b = C.average_precision(C.pool(dup))["ap"][0]
    assert a == pytest.approx(b, abs=1e-12)


def test_masked_cumsum_equals_the_dense_weighted_cumsum_bit_for_bit():
    rng = np.random.default_rng(0)
    w = rng.multinomial(50, np.full(50, 1 / 50), size=4).astype(float)[:, rng.integers(0, 50, 300)]
    flags = rng.random((10, 300)) < 0.3
    flags[0] = False  # a threshold with no true positive
    flags[1] = True
    dense = np.cumsum(w[:, None, :] * flags[None], axis=2)
    assert np.array_equal(C.masked_cumsum(w, flags), dense)
    assert C.masked_cumsum(w[:, :0], flags[:, :0]).shape == (4, 10, 0)
