"""The documentation site: `mkdocs build --strict` over the READMEs where they live, one page per pipeline, and the
reference pages in docs/ that the short top README points to."""

from __future__ import annotations

import json
import re
import subprocess

from flows.registry import papers
from scripts.mkdocs_hooks import gfm_lists
from tests.conftest import BIN, ROOT


def test_site_builds_strict_offline_with_a_page_per_pipeline(tmp_path):
    site = tmp_path / "site"
    proc = subprocess.run(
        [str(BIN / "mkdocs"), "build", "--strict", "-q", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    home = (site / "index.html").read_text()
    assert "Quick start" in home
    for slug, spec in papers().items():
        if spec.implemented and slug != "shared":
            page = site / "flows" / spec.module_name / "index.html"
            assert page.is_file(), f"no page for {slug}"
            assert f'href="flows/{spec.module_name}/index.html"' in home, f"the home page does not link {slug}"
    for page in site.rglob("*.html"):
        assert not re.search(r"<script[^>]+src=[\"']https?://", page.read_text()), f"{page} loads a script from the web"
    assert (site / "infra" / "index.html").is_file()
    results = (site / "results.html").read_text()  # the recorded verdicts, before anything runs
    assert 'href="results.html"' in home
    for record in sorted((ROOT / "docs" / "verdicts").glob("*.json")):
        doc = json.loads(record.read_text())
        assert f"<code>{doc['paper']}</code>" in results, f"the results page lacks {record.name}"
        for claim in doc["claims"]:
            if claim.get("effect") is not None:
                assert f"{claim['effect']:+.4g}" in results, f"{record.name} {claim['id']}: effect not shown"
    for page in sorted((ROOT / "docs").glob("*.md")):  # the reference pages the README points to
        assert (site / "docs" / f"{page.stem}.html").is_file(), f"no page for docs/{page.name}"
        assert f'href="docs/{page.stem}.html' in home, f"the home page does not link docs/{page.name}"


def test_readme_quick_start_is_the_two_commands_and_points_to_the_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = quick.split("```bash\n", 1)[1].split("```", 1)[0]
    assert [line.split()[:2] for line in block.splitlines()] == [["make", "repro"], ["make", "test"]]
    assert "exec make test" in (ROOT / ".ci" / "run").read_text(), "CI runs the README's test command"
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"](docs/{page.name}" in readme, f"README.md does not link docs/{page.name}"
    assert "docs/run-times.md" in readme and "2026-12-04" in (ROOT / "docs" / "run-times.md").read_text()


def test_github_style_lists_become_python_markdown_lists():
    text = "Baselines:\n- GA;\n  - nested\n- NPO.\n\n```\n- not a list in code\n```\n"
    assert gfm_lists(text) == "Baselines:\n\n- GA;\n    - nested\n- NPO.\n\n```\n- not a list in code\n```\n"
    assert gfm_lists("a\n\n- b\n") == "a\n\n- b\n"


def test_the_results_page_says_which_papers_have_no_recorded_verdicts(tmp_path):
    from flows.verdicts import results_page

    page = results_page(tmp_path)  # a checkout without docs/verdicts/
    implemented = [s for slug, s in papers().items() if s.implemented and slug != "shared"]
    assert page.count("Not recorded yet") == len(implemented) and "| claim |" not in page
