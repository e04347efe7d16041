"""`paperline scaling-fit`: the published Chinchilla replication and known synthetic laws are recovered."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import SHARED, paperline

REFERENCE = SHARED / "reference" / "chinchilla_svg_extracted_data.csv"
# Besiroglu et al. (Epoch), estimates and standard errors on this file with the 5 highest losses excluded.
PUBLISHED = {
    "A": (482.0, 124.5),
    "B": (2085, 1293),
    "E": (1.817, 0.026),
    "alpha": (0.348, 0.015),
    "beta": (0.366, 0.021),
}


@pytest.mark.skipif(not REFERENCE.is_file(), reason=f"reference data not found at {REFERENCE}")
def test_reference_fit_within_one_published_standard_error(tmp_path):
    proc = paperline(
        "scaling-fit",
        str(REFERENCE),
        "--n-column",
        "Model Size",
        "--flops-column",
        "Training FLOP",
        "--loss-column",
        "loss",
        "--exclude-top-loss",
        "5",
        "--json",
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    fit = json.loads(proc.stdout)
    assert fit["n_points"] == 240
    for name, (estimate, se) in PUBLISHED.items():
        assert abs(fit[name] - estimate) <= se, (name, fit[name], estimate, se)


def test_synthetic_law_recovered_with_bootstrap_cis(tmp_path):
    rng = np.random.default_rng(3)
    true = {"A": 400.0, "B": 1500.0, "E": 1.7, "alpha": 0.34, "beta": 0.30}
    n = np.repeat(np.geomspace(1e7, 1e9, 8), 6)
    d = np.tile(np.geomspace(1e9, 1e11, 6), 8)
    loss = (true["E"] + true["A"] / n ** true["alpha"] + true["B"] / d ** true["beta"]) * np.exp(
        rng.normal(0, 0.003, n.size)
    )
    csv = tmp_path / "runs.csv"
    csv.write_text("params,tokens,loss\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(n, d, loss)))
    proc = paperline(
        "scaling-fit",
        str(csv),
        "--n-column",
        "params",
        "--d-column",
        "tokens",
        "--loss-column",
        "loss",
        "--bootstrap",
        "100",
        "--seed",
        "1",
        "--json",
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    fit = json.loads(proc.stdout)
    assert abs(fit["alpha"] - true["alpha"]) < 0.03 and abs(fit["beta"] - true["beta"]) < 0.03
    assert abs(fit["E"] - true["E"]) < 0.05
    for name in ("alpha", "beta", "E"):
        lo, hi = fit["ci95"][name]
        assert lo <= fit[name] <= hi
