"""The scene generator: measured visibility and its bins, boxes, poses, domains, sequences with jitter."""

from __future__ import annotations

import numpy as np
import pytest

from components.scenes import people as P
from components.scenes.compose import DOMAINS, visibility_bin
from components.scenes.sequences import box_of, generate_sequence, generate_set


@pytest.mark.parametrize(
    "ratio, label", [(1.0, 100), (0.86, 100), (0.84, 70), (0.56, 70), (0.54, 40), (0.31, 40), (0.29, 20), (0.1, 20)]
)
def test_visibility_bins_are_the_nearest_label(ratio, label):
    assert visibility_bin(ratio) == label


def test_box_of_a_mask_uses_cocos_pixel_convention():
    m = np.zeros((10, 10), bool)
    m[2:5, 3:9] = True
    assert box_of(m) == [3.0, 2.0, 6.0, 3.0] and box_of(np.zeros((3, 3), bool)) is None


def test_poses_have_their_shapes():
    stand = P.rasterise("standing", 60, 0, (50, 50)).mask
    lie = P.rasterise("lying", 60, 90, (50, 50)).mask
    sit = P.rasterise("sitting", 60, 0, (50, 50)).mask
    h = lambda m: np.ptp(np.nonzero(m)[0]) + 1  # noqa: E731
    w = lambda m: np.ptp(np.nonzero(m)[1]) + 1  # noqa: E731
    assert h(stand) == pytest.approx(60, abs=3) and w(stand) < 0.4 * h(stand)
    assert w(lie) == pytest.approx(60, abs=3) and h(lie) < 0.4 * w(lie)
    assert h(sit) < 0.85 * h(stand)


def test_visibility_is_measured_from_pixels():
    frames = generate_sequence(3, "forest", n_frames=3, size=128, jitter=4)
    for fr in frames:
        for a in fr["annotations"]:
            x, y, w, h = a["bbox"]
            assert x >= 0 and y >= 0 and x + w <= 128 and y + h <= 128
            assert 0.1 <= a["vis_ratio"] <= 1 and a["visibility"] == visibility_bin(a["vis_ratio"])
            vx, vy, vw, vh = a["vis_bbox"]
            assert vx >= x and vy >= y and vx + vw <= x + w and vy + vh <= y + h


def test_sequence_frames_share_a_layout_under_camera_jitter():
    frames = generate_sequence(7, "urban", n_frames=6, size=96, jitter=4)
    tracks = [{a["track"]: a for a in fr["annotations"]} for fr in frames]
    common = set.intersection(*(set(t) for t in tracks))
    assert common
    for k in common:
        sizes = {tuple(t[k]["bbox"][2:]) for t in tracks}
        offsets = {tuple(t[k]["bbox"][:2]) for t in tracks}
        assert len(sizes) == 1 and len(offsets) > 1  # the same person, moved by the camera only
        assert max(abs(a - b) for o in offsets for a, b in zip(o, next(iter(offsets)))) <= 8
    again = generate_sequence(7, "urban", n_frames=6, size=96, jitter=4)
    assert all((a["image"] == b["image"]).all() for a, b in zip(frames, again))  # seeded


def test_domains_differ_as_the_card_says():
    _, _, urban = generate_set("urban", n_sequences=6, n_frames=2, size=128, jitter=4, seed=0, prefix="u")
    _, _, aerial = generate_set("aerial", n_sequences=6, n_frames=2, size=128, jitter=4, seed=0, prefix="a")
    _, _, forest = generate_set("forest", n_sequences=12, n_frames=2, size=128, jitter=4, seed=0, prefix="f")
    assert {a["pose"] for a in urban} == {"standing"} and min(a["vis_ratio"] for a in urban) >= 0.55
    assert max(max(a["bbox"][2:]) for a in aerial) <= 12
    assert {a["pose"] for a in forest} == set(P.POSES) and len({a["visibility"] for a in forest}) >= 3
    assert DOMAINS["forest"].foliage[1] > 0 and DOMAINS["urban"].foliage == (0, 0)


def test_hf_loader_reads_the_fixture_in_the_coco_layout():
    from pathlib import Path

    from components.scenes.forestpersons_hf import load_forestpersons
    from flows.forestpersons.common import check_set

    root = Path(__file__).parents[2] / "fixtures/forestpersons/hf"
    images, recs, anns = load_forestpersons("etri/ForestPersons", local_dir=str(root), size=32, max_images=10)
    assert images.shape == (6, 32, 32, 3) and {r["hf_split"] for r in recs} == {"train", "val", "test"}
    a = anns[0]
    assert a["bbox"] == [4.0, 4.0, 8.0, 20.0] and a["pose"] == "standing" and a["visibility"] == 100
    assert anns[1]["pose"] == "lying" and anns[1]["visibility"] == 40  # from "attributes"
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        check_set({"images": recs, "annotations": anns}, 32, "fixture", Path(tmp) / "c.json")


def test_hf_loader_fails_at_once_naming_the_id_when_offline(monkeypatch, tmp_path):
    from components.errors import DataError
    from components.scenes.forestpersons_hf import load_forestpersons

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(DataError, match="etri/ForestPersons"):
        load_forestpersons("etri/ForestPersons", local_dir=None, size=32, max_images=1)
