"""Per-paper report: files, self-contained HTML, verdicts shown plainly, escaping."""

import base64
import json

import pandas as pd
import pytest

from components.errors import DataError, ParamsError
from components.reporting import Section, bar_plot, figure_to_png, write_paper_report
from components.reporting.html import external_references

XSS = "<script>alert('x')</script>"


def _claim(cid, verdict, **kw):
    base = dict(
        id=cid,
        statement=f"claim {cid}",
        metric="alpha",
        method="dedup",
        baseline="raw",
        direction="!=0",
        threshold=0.0,
        delta=None,
        effect=0.04,
        ci_low=0.01,
        ci_high=0.07,
        ci_level=0.95,
        n_seeds=3,
        n_units=2000,
        unit="refits",
        per_seed_signs=[1, 1, 1],
        rule="95% CI excludes 0",
        verdict=verdict,
        scale_note="tiny models",
        details=None,
    )
    base.update(kw)
    return base


def _doc():
    return {
        "paper": "qualitypajama",
        "profile": "smoke",
        "summary": {"reproduced": 99},
        "claims": [
            _claim("C1", "reproduced"),
            _claim("C2", "not reproduced", effect=-0.5, ci_low=-0.9, ci_high=-0.1),
            _claim("C3", "inconclusive", effect=None, ci_low=None, ci_high=None, statement=XSS),
        ],
    }


def _write(tmp_path, **kw):
    fig = bar_plot({"raw": 3, "dedup": 2}, title="docs")
    sections = [
        Section(
            "Setup & data",
            "Loss in **nats**. [paper](https://example.org/p) <img src=http://example.org/x.png>",
            figures=[("docs", fig, "Documents per intervention")],
            tables=[pd.DataFrame({"dataset": ["raw", "dedup"], "alpha": [0.31, 0.35]}), [{"k": "retained", "v": 0.78}]],
        )
    ]
    args = dict(
        slug="qualitypajama",
        title="Quality <b>Pajama</b>",
        claims_doc=_doc(),
        metrics={"fit": {"raw": {"alpha": 0.312}}, "retained": 0.78},
        sections=sections,
        readme_link="../../flows/qualitypajama/README.md",
    )
    args.update(kw)
    return write_paper_report(tmp_path / "qualitypajama", **args), fig


def test_writes_all_report_files(tmp_path):
    paths, _ = _write(tmp_path)
    for name in ("report.md", "report.html", "claims.json", "metrics.json"):
        assert paths[name].is_file(), name
    assert (paths["figures"] / "docs.png").is_file()
    assert "](figures/docs.png)" in paths["report.md"].read_text()
    assert not [p for p in paths["report.md"].parent.rglob(".tmp-*")]


def test_html_is_self_contained_and_embeds_the_pngs(tmp_path):
    paths, fig = _write(tmp_path)
    html = paths["report.html"].read_text()
    assert external_references(html) == []
    assert "<style>" in html
    png = (paths["figures"] / "docs.png").read_bytes()
    assert png == figure_to_png(fig)
    assert f'src="data:image/png;base64,{base64.b64encode(png).decode()}"' in html
    assert "https://example.org/p" in html  # the external link stays visible as text only


def test_external_reference_check_catches_what_it_should():
    assert external_references('<img src="https://cdn.example/x.png">')
    assert external_references("<a href=//evil.example>x</a>")
    assert external_references('<script src="http://cdn.example/vega.js"></script>')
    assert external_references("<style>body{background:url(x.png)}</style>")
    assert external_references('<link rel="stylesheet" href="a.css">')
    assert not external_references('<img src="data:image/png;base64,AAAA">')
    assert not external_references('<a href="../README.md">x</a> &lt;img src=http://x&gt;')


def test_every_verdict_is_rendered_as_a_badge(tmp_path):
    paths, _ = _write(tmp_path)
    html = paths["report.html"].read_text()
    for cls, text in [
        ("verdict-reproduced", "reproduced"),
        ("verdict-not-reproduced", "not reproduced"),
        ("verdict-inconclusive", "inconclusive"),
    ]:
        assert f'<span class="badge {cls}">{text}</span>' in html
    assert "1 not reproduced" in html and "1 inconclusive" in html
    md = paths["report.md"].read_text()
    assert "**not reproduced**" in md and "**inconclusive**" in md


def test_effect_with_ci_and_missing_numbers(tmp_path):
    paths, _ = _write(tmp_path)
    html = paths["report.html"].read_text()
    assert "+0.04 [+0.01, +0.07]" in html
    assert "-0.5 [-0.9, -0.1]" in html
    assert "n/a" in html
    assert "3 seeds · 2,000 refits" in html


def test_text_is_escaped(tmp_path):
    paths, _ = _write(tmp_path)
    html = paths["report.html"].read_text()
    assert XSS not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert "<b>Pajama</b>" not in html and "Quality &lt;b&gt;Pajama&lt;/b&gt;" in html
    assert "Setup &amp; data" in html
    assert "<strong>nats</strong>" in html  # section Markdown is rendered
    assert "<script" not in paths["report.md"].read_text()


def test_claims_summary_is_recomputed_and_metrics_round_trip(tmp_path):
    paths, _ = _write(tmp_path)
    doc = json.loads(paths["claims.json"].read_text())
    assert doc["summary"] == {"reproduced": 1, "not reproduced": 1, "inconclusive": 1}
    assert [c["id"] for c in doc["claims"]] == ["C1", "C2", "C3"]
    assert json.loads(paths["metrics.json"].read_text()) == {"fit": {"raw": {"alpha": 0.312}}, "retained": 0.78}
    assert "fit.raw.alpha" in paths["report.html"].read_text()


def test_tables_are_rendered(tmp_path):
    paths, _ = _write(tmp_path)
    html, md = paths["report.html"].read_text(), paths["report.md"].read_text()
    assert "<td>dedup</td>" in html and '<td class="num">0.35</td>' in html
    assert "| dedup | 0.35 |" in md and "| retained | 0.78 |" in md


def test_same_input_gives_identical_files(tmp_path):
    first, _ = _write(tmp_path / "a")
    second, _ = _write(tmp_path / "b")
    for name in ("report.md", "report.html", "claims.json"):
        assert first[name].read_bytes() == second[name].read_bytes(), name


def test_unknown_verdict_names_the_field(tmp_path):
    doc = _doc()
    doc["claims"][1]["verdict"] = "maybe"
    with pytest.raises(DataError, match=r"claims\[1\]\.verdict: 'maybe'"):
        _write(tmp_path, claims_doc=doc)
    assert not (tmp_path / "qualitypajama" / "report.html").exists()


def test_non_numeric_effect_names_the_field(tmp_path):
    doc = _doc()
    doc["claims"][0]["effect"] = "big"
    with pytest.raises(DataError, match=r"claims\[0\]\.effect"):
        _write(tmp_path, claims_doc=doc)


def test_unsafe_figure_name_is_refused(tmp_path):
    png = figure_to_png(bar_plot({"a": 1}))
    with pytest.raises(ParamsError, match="figure name '../x'"):
        _write(tmp_path, sections=[Section("s", figures=[("../x", png, "")])])


def test_rerun_replaces_stale_figures(tmp_path):
    _write(tmp_path)
    paths, _ = _write(tmp_path, sections=[])
    assert list(paths["figures"].iterdir()) == []
