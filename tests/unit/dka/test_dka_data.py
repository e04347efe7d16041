"""The MNI152 lesion task: disjoint slices, balanced label draws, lesion sites on the right side, GX rejects leaks."""

from __future__ import annotations

import numpy as np
import pytest

from components.dka import mni
from components.errors import ValidationFailed


@pytest.fixture(scope="module")
def slices():
    t1, gm, wm, aff = mni.load_templates()
    assert t1.shape == (197, 233, 189)
    sp = mni.slice_split(60, 100)
    return mni.prepare_slices(t1, gm, wm, aff, sp["train"][:4] + sp["test"][:2]), sp


def test_slice_split_is_disjoint_with_a_gap():
    sp = mni.slice_split(50, 130)
    assert not set(sp["train"]) & set(sp["test"])
    assert min(abs(a - b) for a in sp["train"] for b in sp["test"]) >= 2  # no neighbouring slices either


def test_lesion_sites_follow_the_templates_and_the_hemisphere(slices):
    sl, sp = slices
    s = sl[sp["train"][0]]
    for lab in (1, 2, 3):
        c = mni._candidates(s, lab)
        assert len(c)
        x = s["x"][c[:, 0], c[:, 1]]
        if lab == 1:
            assert (x < 0).all()  # world x < 0: left
        elif lab == 2:
            assert (x > 0).all()
        else:
            assert (s["wm"][c[:, 0], c[:, 1]] > 0.8).all()
    rng = np.random.default_rng(0)
    img, where = mni.make_image(s, 1, rng, mni.TaskConfig())
    assert img.shape == (64, 64) and len(where) == 2 and np.isfinite(img).all()


def test_pool_is_balanced_and_fraction_draws_are_stratified(slices):
    sl, sp = slices
    pool = mni.make_pool(sl, sp["train"][:4], 40, seed=0, cfg=mni.TaskConfig())
    assert np.bincount(pool["y"]).tolist() == [10, 10, 10, 10]
    assert set(pool["slice"].tolist()) <= set(sp["train"])
    y = np.arange(400) % 4
    for frac, seed in ((0.01, 0), (0.1, 3), (1.0, 1)):
        idx = mni.fraction_indices(y, frac, seed)
        assert len(idx) == max(4, round(frac * 400)) and len(set(idx)) == len(idx)
        counts = np.bincount(y[idx], minlength=4)
        assert counts.max() - counts.min() <= 1
    assert not np.array_equal(mni.fraction_indices(y, 0.1, 0), mni.fraction_indices(y, 0.1, 1))


def test_gx_rejects_a_test_image_from_a_training_slice(tmp_path):
    from flows.dka.data import check

    z = np.zeros((8, 1, 4, 4), np.float32)
    y = np.arange(8) % 4
    pool = {f"{s}_{k}": v for s in ("train", "dev", "test") for k, v in (("x", z), ("y", y))}
    pool["train_slice"], pool["dev_slice"] = np.arange(8), np.arange(8)
    pool["test_slice"] = np.arange(100, 108)
    check(pool, 4, tmp_path)  # disjoint: passes
    pool["test_slice"] = np.array([100, 101, 3, 103, 104, 105, 106, 107])
    with pytest.raises(ValidationFailed, match="from_train_slice"):
        check(pool, 4, tmp_path)
    pool["test_slice"] = np.arange(100, 108)
    pool["train_y"] = np.array([0, 0, 0, 0, 0, 0, 1, 2])
    with pytest.raises(ValidationFailed, match="share"):
        check(pool, 4, tmp_path)
