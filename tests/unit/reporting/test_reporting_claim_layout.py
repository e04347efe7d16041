"""What a reviewer reads per claim: the paper's number, ours with CI and δ, counts, signs, rule, verdict, reason;
the smoke banner, flags and provenance footer; a composite's parts."""

from __future__ import annotations

import numpy as np

from components.evaluation import claims as CL
from components.reporting import write_paper_report


def _claims():
    rng = np.random.default_rng(0)
    b = rng.normal(50, 5, 300)
    clusters = np.repeat(range(5), 60)
    c1 = CL.evaluate_standard(
        "C1",
        "method beats baseline",
        method_values=b + 2 + rng.normal(0, 1, 300),
        baseline_values=b,
        clusters=clusters,
        direction="greater",
        delta=1.0,
        metric="acc",
        method="m",
        baseline="b",
        unit="items",
        seed=0,
        n_resamples=2000,
        paper_value="+16.4 points",
        scale_note="tiny",
    )
    part = CL.evaluate_standard(
        "C2/a",
        "",
        method_values=b - 3 + rng.normal(0, 1, 300),
        baseline_values=b,
        clusters=clusters,
        direction="greater",
        delta=1.0,
        metric="acc",
        method="m",
        baseline="b",
        unit="items",
        seed=0,
        n_resamples=2000,
    )
    c2 = CL.composite(
        "C2", "both hold", [part, c1], metric="acc", method="m", baseline="b", unit="items", scale_note="tiny"
    )
    return [c1, c2]


def _report(tmp_path, profile="default", **extra):
    doc = CL.claims_document(
        "demo",
        profile,
        _claims(),
        extra={
            "provenance": {
                "git_commit": "0123456789abcdef",
                "git_dirty": "true",
                "date": "2026-12-01 12:00 UTC",
                "profile": profile,
                "params_hash": "feedbeef00",
                "mlflow_run_id": "run42",
                "stages": {"train": {"wall_s": 12.5, "cpu_s": 20.25}},
            },
            **extra,
        },
    )
    paths = write_paper_report(tmp_path / "demo", slug="demo", title="Demo", claims_doc=doc, metrics={})
    return paths["report.md"].read_text(), paths["report.html"].read_text()


def test_each_claim_shows_paper_value_ci_delta_counts_signs_verdict_and_reason(tmp_path):
    md, html = _report(tmp_path)
    for page in (md, html):
        assert "+16.4 points" in page
        assert "±1 around 0" in page
        assert "5 seeds · 300 items" in page
        assert "5+" in page  # per-seed signs, all positive
        assert "lies above 0" in page  # the reason in words
        assert "standard: reproduced iff the CI lies above 0" in page  # the rule in words


def test_composite_parts_are_listed_with_their_own_verdicts(tmp_path):
    md, html = _report(tmp_path)
    assert "C2: its parts" in md and "C2/a" in md and "not reproduced" in md
    assert "all of 2 parts: 1 reproduced (C1), 1 not reproduced (C2/a)" in md


def test_smoke_reports_carry_a_banner_and_default_ones_do_not(tmp_path):
    md, html = _report(tmp_path / "s", profile="smoke")
    assert "a wiring check at tiny scale, not a verdict about the paper" in md
    assert 'class="banner"' in html
    md, html = _report(tmp_path / "d")
    assert "wiring check" not in md and 'class="banner"' not in html


def test_flags_appear_in_the_headline(tmp_path):
    md, html = _report(tmp_path, flags=["fits degenerate in E: exponents not identified"])
    assert md.index("Flag: fits degenerate in E") < md.index("## Claims")
    assert "Flag: fits degenerate in E" in html


def test_provenance_footer(tmp_path):
    md, html = _report(tmp_path)
    for page in (md, html):
        assert "git commit 0123456789ab (dirty tree)" in page
        assert "params hash feedbeef00" in page and "MLflow run run42" in page
        assert "train 12.5 s wall / 20.25 s CPU" in page
