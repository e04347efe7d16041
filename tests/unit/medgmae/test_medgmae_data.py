"""Volumes: the label rule, disjoint slabs, crops, MONAI augmentation keeping labels aligned, phantoms, and the
``full`` profile's NIfTI folder reader on a small fixture written here (nibabel), with its offline and format
errors naming the path."""

from __future__ import annotations

import numpy as np
import pytest

from components.errors import DataError, OfflineError
from components.medgmae import sources
from components.medgmae import volumes as V


def _anatomy(shape=(20, 20, 40)) -> V.Anatomy:
    rng = np.random.default_rng(0)
    t1 = rng.random(shape).astype(np.float32) * 3
    gm, wm = rng.random(shape), rng.random(shape)
    return V.anatomy_from(t1, gm, wm, np.ones(shape))


def test_label_rule_and_scaling():
    gm = np.array([0.9, 0.6, 0.2, 0.55, 0.4])
    wm = np.array([0.1, 0.6, 0.8, 0.55, 0.4])
    a = V.anatomy_from(np.array([1.0, 2, 4, 0, -1]), gm, wm, np.ones(5))
    assert a.label.tolist() == [1, 1, 2, 1, 0]  # ties go to GM; neither above 0.5 -> other
    np.testing.assert_allclose(a.t1, [0.25, 0.5, 1.0, 0.0, 0.0])
    with pytest.raises(DataError, match="no positive intensity"):
        V.anatomy_from(np.zeros(3), gm[:3], wm[:3], np.ones(3))


def test_slabs_are_disjoint_and_too_thin_a_slab_is_refused():
    s = V.slab_ranges(95, 32, 0.35)
    assert s["train"][1] + 32 <= s["test"][0]  # the last training crop ends below the first test slice
    assert s["test"][1] + 32 <= 95
    with pytest.raises(DataError, match="fewer than a 32-voxel crop"):
        V.slab_ranges(95, 32, 0.30)  # the card's 30%: 28 slices


def test_crops_respect_their_slab_and_align_with_labels():
    a = _anatomy()
    starts = V.crop_starts(a, 8, (20, 32), 5, np.random.default_rng(1), 0.5)
    assert ((starts[:, 2] >= 20) & (starts[:, 2] <= 32)).all()
    x, y = V.cut(a, starts, 8)
    i, j, k = starts[2]
    np.testing.assert_array_equal(x[2, 0], a.t1[i : i + 8, j : j + 8, k : k + 8])
    np.testing.assert_array_equal(y[2, 0], a.label[i : i + 8, j : j + 8, k : k + 8])


def test_augmentation_moves_image_and_label_together():
    x = np.zeros((2, 1, 12, 12, 12), np.float32)
    x[:, :, 2:6, 3:9, 4:10] = 0.8  # a bright box labelled 2, background 0
    y = (x > 0).astype(np.int64) * 2
    xa, ya = V.augment(x, y, seed=3, elastic=0.5)
    assert xa.shape == x.shape and set(np.unique(ya)) <= {0, 2}
    assert xa.min() >= 0 and xa.max() <= 1
    bright = xa > 0.4
    assert (ya[bright] == 2).mean() > 0.9  # the label follows the box


def test_phantoms_are_in_range_and_varied():
    ph = V.phantoms(3, 16, np.random.default_rng(0))
    assert ph.shape == (3, 1, 16, 16, 16) and ph.min() >= 0 and ph.max() <= 1
    assert not np.allclose(ph[0], ph[1])


def test_fraction_count():
    assert V.fraction_count(600, 0.01) == 6 and V.fraction_count(600, 1.0) == 600 and V.fraction_count(10, 0.01) == 2
    with pytest.raises(DataError, match="label fraction"):
        V.fraction_count(10, 0.0)


def test_nifti_folder_reader_on_a_fixture(tmp_path):
    import nibabel as nib

    (tmp_path / "imagesTr").mkdir()
    (tmp_path / "labelsTr").mkdir()
    rng = np.random.default_rng(0)
    for i in range(2):
        img = rng.normal(100, 20, (10, 11, 12)).astype(np.float32)
        lab = (img > 110).astype(np.uint8)
        nib.save(nib.Nifti1Image(img, np.eye(4)), tmp_path / "imagesTr" / f"case{i}.nii.gz")
        nib.save(nib.Nifti1Image(lab, np.eye(4)), tmp_path / "labelsTr" / f"case{i}.nii.gz")
    cases = sources.load_nifti_folder(tmp_path)
    assert len(cases) == 2 and cases[0]["image"].shape == (10, 11, 12)
    assert cases[0]["image"].min() >= 0 and cases[0]["image"].max() <= 1 and set(np.unique(cases[1]["label"])) == {0, 1}
    (tmp_path / "imagesTr" / "case9.nii.gz").write_text("not a volume")
    (tmp_path / "labelsTr" / "case9.nii.gz").write_text("not a volume")
    with pytest.raises(DataError, match="case9.nii.gz: not a NIfTI volume"):
        sources.load_nifti_folder(tmp_path)
    with pytest.raises(OfflineError, match="Task09_Spleen"):
        sources.load_nifti_folder("Task09_Spleen")
