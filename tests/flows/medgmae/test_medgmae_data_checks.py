"""The data stage's GX suite fails on a test crop that reaches into the training slab and on a missing class."""

from __future__ import annotations

import numpy as np
import pytest

from components.errors import DataError
from flows.medgmae.data import check


def _pool(test_z: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    out = {}
    for split, z in (("train", 0), ("dev", 4), ("test", test_z)):
        y = rng.integers(0, 3, (3, 1, 8, 8, 8))
        out |= {f"{split}_x": rng.random((3, 1, 8, 8, 8)).astype(np.float32), f"{split}_y": y,
                f"{split}_z": np.full(3, z)}  # fmt: skip
    out["phantoms"] = rng.random((2, 1, 8, 8, 8)).astype(np.float32)
    return out


def test_gx_passes_disjoint_slabs_and_rejects_overlap_and_a_missing_class(tmp_path):
    check(_pool(test_z=12), 3, 8, tmp_path / "ok")  # training crops end at z = 4 + 8 = 12
    with pytest.raises(DataError, match="z_lo"):
        check(_pool(test_z=11), 3, 8, tmp_path / "overlap")
    pool = _pool(test_z=12)
    pool["test_y"][:] = np.minimum(pool["test_y"], 1)  # no WM voxel in the test crops
    with pytest.raises(DataError, match="share"):
        check(pool, 3, 8, tmp_path / "missing")
