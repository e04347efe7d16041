"""Cross-paper index: renders with missing and corrupted claims, links reports, stays offline."""

import json

import pytest

from components.errors import ParamsError
from components.reporting import write_index, write_paper_report
from components.reporting.html import external_references

PAPERS = [
    {"slug": "qualitypajama", "title": "Quality <Pajama>", "stages": ["data", "train", "report"]},
    {"slug": "ofmu", "title": "OFMU", "stages": ["data", "unlearn"]},
    {"slug": "ebt", "title": "EBT", "stages": []},
]


def _claims(verdicts):
    return {
        "paper": "qualitypajama",
        "profile": "default",
        "claims": [
            {
                "id": f"C{i}",
                "statement": f"statement {i}",
                "method": "dedup",
                "baseline": "raw",
                "effect": 0.25 * (i + 1),
                "ci_low": 0.1,
                "ci_high": 0.9,
                "ci_level": 0.95,
                "n_seeds": 3,
                "verdict": v,
            }
            for i, v in enumerate(verdicts)
        ],
    }


@pytest.fixture
def reports(tmp_path):
    root = tmp_path / "reports"
    write_paper_report(
        root / "qualitypajama",
        slug="qualitypajama",
        title="Quality",
        claims_doc=_claims(["reproduced", "not reproduced", "inconclusive", "inconclusive"]),
        metrics={},
    )
    (root / "ofmu").mkdir(parents=True)
    (root / "ofmu" / "claims.json").write_text('{"paper": "ofmu", "claims": [{"id": ')  # truncated
    return root


def test_index_renders_every_paper(reports):
    html = write_index(reports, PAPERS).read_text()
    assert (reports / "index.html").is_file()
    assert "Quality &lt;Pajama&gt;" in html and "<Pajama>" not in html
    assert 'href="qualitypajama/report.html"' in html
    assert "statement 3" in html and "+0.5 [+0.1, +0.9]" in html
    assert "1 reproduced" in html and "1 not reproduced" in html and "2 inconclusive" in html


def test_missing_claims_shows_not_run_yet(reports):
    html = write_index(reports, PAPERS).read_text()
    row = html[html.index("<code>ebt</code>") :]
    row = row[: row.index("</tr>")]
    assert "not run yet" in row
    assert "report.html" not in row


def test_corrupted_claims_shows_an_error_row_naming_the_file(reports):
    html = write_index(reports, PAPERS).read_text()
    row = html[html.index("<code>ofmu</code>") :]
    row = row[: row.index("</tr>")]
    assert "ofmu/claims.json" in row and "not valid JSON" in row
    assert "verdict-error" in row


def test_wrong_schema_error_names_the_field(reports):
    (reports / "ofmu" / "claims.json").write_text(
        json.dumps({"claims": [{"id": "C1", "statement": "s", "verdict": "probably"}]})
    )
    html = write_index(reports, PAPERS).read_text()
    assert "ofmu/claims.json: claims[0].verdict: &#x27;probably&#x27; is not one of" in html


def test_index_is_self_contained(reports):
    html = write_index(reports, PAPERS).read_text()
    assert external_references(html) == []


def test_links_are_relative_to_a_custom_out_path(reports, tmp_path):
    out = write_index(reports, PAPERS, out_path=tmp_path / "site" / "all.html")
    assert out == tmp_path / "site" / "all.html"
    assert 'href="../reports/qualitypajama/report.html"' in out.read_text()


def test_paper_without_slug_is_refused(tmp_path):
    with pytest.raises(ParamsError, match=r"papers\[1\]"):
        write_index(tmp_path, [{"slug": "a"}, {"title": "no slug"}])


def test_empty_paper_list_still_renders(tmp_path):
    assert "No papers registered" in write_index(tmp_path, []).read_text()
