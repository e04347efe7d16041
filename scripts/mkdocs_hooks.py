"""MkDocs hook: the site is built from the READMEs where they live (no copies under docs/).

The top-level README becomes the home page, each implemented pipeline's ``flows/<package>/README.md`` its page,
``infra/README.md``, ``data/README.md`` and ``reports/README.md`` theirs, and the reference pages ``docs/*.md``
(listed in mkdocs.yml's ``nav``) theirs, all under their repository paths, so their own relative links resolve
unchanged on GitHub and in the site. A "Recorded results" page (``results.md``) is generated from the recorded
default-profile verdicts in ``docs/verdicts/``, so the site shows results before anything runs. The reports index
and each paper's report.html are added as they are when a run has written them (``paperline report`` rebuilds
them), so the site links the latest verdicts.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]


def pages() -> dict[str, Path]:
    """Site path (src_uri) -> the README it is built from."""
    out = {"index.md": ROOT / "README.md"}
    for readme in sorted(ROOT.glob("flows/*/README.md")):
        out[readme.relative_to(ROOT).as_posix()] = readme
    for folder in ("infra", "data", "reports"):
        if (ROOT / folder / "README.md").is_file():
            out[f"{folder}/README.md"] = ROOT / folder / "README.md"
    for page in sorted((ROOT / "docs").glob("*.md")):
        out[page.relative_to(ROOT).as_posix()] = page
    return out


def reports() -> dict[str, Path]:
    """The reports a run has written (HTML pages with their figures inlined), if any."""
    found = [ROOT / "reports" / "index.html", *sorted(ROOT.glob("reports/*/report.html"))]
    return {p.relative_to(ROOT).as_posix(): p for p in found if p.is_file()}


def on_files(files: Files, config) -> Files:
    for file in list(files):
        if file.src_uri.endswith(".md") and "/" not in file.src_uri:
            files.remove(file)  # docs/*.md, collected from docs_dir at the site's root: added under docs/ below
    for src_uri, path in {**pages(), **reports()}.items():
        files.append(File.generated(config, src_uri, abs_src_path=str(path)))
    files.append(File.generated(config, RESULTS, content=_results()))
    return files


RESULTS = "results.md"


def _results() -> str:
    from flows.verdicts import results_page  # paperline is installed in the venv that runs mkdocs

    return results_page(ROOT)


def on_config(config):
    nav = [
        {"Home": "index.md"},
        {"Recorded results": RESULTS},
        *(config.get("nav") or []),
    ]  # mkdocs.yml's nav: the docs/ pages
    pipelines = [{_title(p): uri} for uri, p in pages().items() if uri.startswith("flows/")]
    nav.append({"Pipelines": pipelines})
    nav += [
        {folder.capitalize(): f"{folder}/README.md"}
        for folder in ("infra", "data", "reports")
        if f"{folder}/README.md" in pages()
    ]
    config["nav"] = nav
    return config


def _title(readme: Path) -> str:
    first = readme.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
    return first.split(":", 1)[0] or readme.parent.name


def gfm_lists(markdown: str) -> str:
    """The READMEs are written for GitHub's Markdown; Python-Markdown (MkDocs) needs a blank line before a list
    that follows a paragraph, and four spaces (not two) per nesting level. Code fences are left alone."""
    out: list[str] = []
    fence = False
    for line in markdown.splitlines():
        stripped = line.lstrip(" ")
        if stripped.startswith("```"):
            fence = not fence
        item = not fence and bool(_ITEM.match(stripped))
        if item:
            indent = len(line) - len(stripped)
            line = " " * (2 * indent) + stripped
            prev = out[-1] if out else ""
            if prev.strip() and not _ITEM.match(prev.lstrip(" ")) and not prev.startswith(" "):
                out.append("")
        out.append(line)
    return "\n".join(out) + ("\n" if markdown.endswith("\n") else "")


_ITEM = re.compile(r"([-*+]|\d+\.) ")


def on_page_markdown(markdown: str, page, config, files) -> str:
    return gfm_lists(markdown)
