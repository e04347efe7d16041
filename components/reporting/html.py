"""Self-contained HTML building blocks: page shell, tables, verdict badges, Markdown.

Every page carries its CSS inline and its images as data URIs, and never
references an external URL, so a report opens offline from a file or an
archive. All text passes through :func:`html.escape`.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Mapping, Sequence
from html.parser import HTMLParser

from markdown_it import MarkdownIt

from components.reporting.claims_doc import claim_row

CSS = """
:root { --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg-alt:#f6f8fa; --accent:#0b4f8a; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: #fff;
  font: 15px/1.55 "Source Serif 4", "Charter", "Georgia", "DejaVu Serif", serif; }
main { max-width: 1120px; margin: 0 auto; padding: 2rem 2.2rem 4rem; }
h1, h2, h3, th, .badge, .meta, .summary, nav, figcaption, .small {
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
h1 { font-size: 1.7rem; margin: 0 0 .3rem; line-height: 1.25; }
h2 { font-size: 1.25rem; margin: 2.2rem 0 .7rem; padding-bottom: .3rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.05rem; margin: 1.4rem 0 .5rem; }
a { color: var(--accent); }
.meta { color: var(--muted); font-size: .88rem; margin-bottom: 1rem; }
.meta code, td code { font-size: .85em; background: var(--bg-alt); padding: 0 .25em; border-radius: 3px; }
.summary { display: flex; gap: .6rem; flex-wrap: wrap; margin: .8rem 0 1.2rem; }
table { border-collapse: collapse; width: 100%; margin: .6rem 0 1.2rem; font-size: .9rem; }
th { text-align: left; font-weight: 600; font-size: .8rem; color: var(--muted);
  text-transform: uppercase; letter-spacing: .03em; border-bottom: 2px solid var(--line); padding: .45rem .6rem; }
table.compact { width: auto; min-width: 45%; }
th.num { text-align: right; }
table.claims td:nth-child(2) { min-width: 17rem; }
table.overview td:first-child { min-width: 19rem; }
td { border-bottom: 1px solid var(--line); padding: .5rem .6rem; vertical-align: top; }
tbody tr:nth-child(even) td { background: #fbfcfd; }
td.num { font-variant-numeric: tabular-nums; white-space: nowrap; text-align: right; }
.small, .nowrap { white-space: nowrap; }
.small { font-size: .8rem; color: var(--muted); }
.note { display: block; font-size: .82rem; color: var(--muted); margin-top: .2rem; }
.badge { display: inline-block; padding: .12rem .55rem; border-radius: 999px; font-size: .78rem;
  font-weight: 600; white-space: nowrap; border: 1px solid transparent; }
.verdict-reproduced { background: #dafbe1; color: #116329; border-color: #8fd5a0; }
.verdict-not-reproduced { background: #ffebe9; color: #a40e26; border-color: #f5a3a3; }
.verdict-inconclusive { background: #fff8c5; color: #7d4e00; border-color: #e6c95a; }
.verdict-not-run { background: #eef1f4; color: #59636e; border-color: #d1d9e0; }
.verdict-error { background: #fff0e0; color: #953800; border-color: #f0b37a; }
.error { color: #953800; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .85rem; }
figure { margin: 1.2rem 0; text-align: center; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 4px; }
figcaption { font-size: .85rem; color: var(--muted); margin-top: .4rem; }
details { margin: .4rem 0; }
.banner { margin: .8rem 0 1rem; padding: .6rem .9rem; border: 1px solid #e6c95a; background: #fff8c5;
  color: #7d4e00; border-radius: 6px; font-family: system-ui, sans-serif; font-size: .92rem; }
details summary { cursor: pointer; font-family: system-ui, sans-serif; font-size: .88rem; }
pre { background: var(--bg-alt); padding: .7rem .9rem; border-radius: 4px; overflow-x: auto; font-size: .82rem; }
.paper { margin-bottom: 2.4rem; }
footer { margin-top: 3rem; color: var(--muted); font-size: .8rem; font-family: system-ui, sans-serif; }
"""

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def esc(value: object) -> str:
    """HTML-escape any value's text (quotes included)."""
    return html.escape(str(value), quote=True)


def verdict_class(verdict: str) -> str:
    """CSS class for a verdict, e.g. ``verdict-not-reproduced``."""
    return "verdict-" + re.sub(r"[^a-z0-9]+", "-", verdict.lower()).strip("-")


def badge(verdict: str, text: str | None = None) -> str:
    """A coloured pill carrying the verdict text itself (colour is never the only cue)."""
    return f'<span class="badge {verdict_class(verdict)}">{esc(text if text is not None else verdict)}</span>'


def png_data_uri(png: bytes) -> str:
    """PNG bytes as a ``data:`` URI for an inline ``<img>``."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def figure_html(png: bytes, caption: str, alt: str) -> str:
    """An inline-image figure with an escaped caption."""
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return f'<figure><img src="{png_data_uri(png)}" alt="{esc(alt)}">{cap}</figure>'


def is_local_link(url: str) -> bool:
    """True for a relative link or an in-page anchor (no scheme, no host)."""
    # Only relative links and in-page anchors: an external URL (or an image
    # from one) would break the offline, self-contained promise.
    return not _SCHEME.match(url) and not url.startswith("//")


_MD = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")
_MD.validateLink = is_local_link


def markdown_to_html(text: str) -> str:
    """Render Markdown safely: raw HTML is escaped, external links stay literal text."""
    return _MD.render(text or "")


def table_html(
    rows: Sequence[Mapping[str, object]],
    columns: Sequence[str] | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    numeric: Iterable[str] = (),
    raw: Iterable[str] = (),
    cls: str = "",
) -> str:
    """An HTML table from row dicts.

    Cells are escaped, except columns named in ``raw`` (already-built HTML such
    as badges); ``numeric`` columns are right-aligned with tabular digits.
    ``cls`` sets the table's CSS class (``compact``: only as wide as its content).
    """
    columns = list(columns or (list(rows[0]) if rows else []))
    headers = dict(headers or {})
    numeric, raw = set(numeric), set(raw)
    num = ' class="num"'
    head = "".join(f"<th{num if c in numeric else ''}>{esc(headers.get(c, c))}</th>" for c in columns)
    body = []
    for row in rows:
        cells = []
        for c in columns:
            value = row.get(c, "")
            text = str(value) if c in raw else esc(value)
            cells.append(f"<td{num if c in numeric else ''}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    attr = f' class="{esc(cls)}"' if cls else ""
    return f"<table{attr}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def claims_table_html(claims: Sequence[Mapping], *, show_rule: bool = True) -> str:
    """The claims table: statement, the paper's number, ours with its CI and δ, counts, signs, verdict and reason.

    Every verdict gets the same badge shape and size, so a claim that was not
    reproduced is as visible as one that was.
    """
    rows = []
    for claim in claims:
        r = claim_row(claim)
        metric = f'<span class="note">metric: {esc(r["metric"])}</span>' if r["metric"] else ""
        scale = f'<span class="note">{esc(r["scale_note"])}</span>' if r["scale_note"] else ""
        has_ci = claim.get("ci_low") is not None or claim.get("ci_high") is not None
        ci_note = f'<span class="note">{esc(r["ci_level"])}</span>' if has_ci else ""
        delta = f'<span class="note">{esc(r["delta"])}</span>' if r["delta"] else ""
        signs = f'<span class="note">per seed: {esc(r["signs"])}</span>' if r["signs"] else ""
        reason = f'<span class="note">{esc(r["reason"])}</span>' if r["reason"] else ""
        rows.append(
            {
                "id": f"<strong>{esc(r['id'])}</strong>",
                "statement": esc(r["statement"]) + scale,
                "comparison": esc(r["comparison"]) + metric,
                "paper": esc(r["paper"] or "—"),
                "effect": esc(r["effect"]) + ci_note + delta,
                "n": esc(r["n"]) + signs,
                "rule": esc(r["rule_text"] or r["rule"]),
                "verdict": badge(r.get("verdict_key", r["verdict"]), r["verdict"]) + reason,
            }
        )
    columns = ["id", "statement", "comparison", "paper", "effect", "n"] + (["rule"] if show_rule else []) + ["verdict"]
    headers = {
        "id": "ID",
        "statement": "Claim",
        "comparison": "Method vs baseline",
        "paper": "Paper",
        "effect": "Ours [CI]",
        "n": "n",
        "rule": "Rule",
        "verdict": "Verdict",
    }
    return table_html(rows, columns, headers=headers, numeric=["effect"], raw=columns, cls="claims")


def banner(text: str) -> str:
    """A visible warning strip (smoke-profile reports, degenerate fits)."""
    return f'<div class="banner">{esc(text)}</div>'


def summary_badges(counts: Mapping[str, int]) -> str:
    """One badge per verdict with its count, zeros included."""
    return '<div class="summary">' + "".join(badge(v, f"{n} {v}") for v, n in counts.items()) + "</div>"


def page(title: str, body: str, *, footer: str = "") -> str:
    """A complete HTML document with the report CSS inline."""
    foot = f"<footer>{footer}</footer>" if footer else ""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n"
        f"<body><main>\n{body}\n{foot}</main></body>\n</html>\n"
    )


# A URL attribute pointing off the page: any scheme but an inline PNG, or //host.
_EXTERNAL_URL = re.compile(r"^\s*(?:(?!data:image/png;base64,)[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)
_URL_ATTRS = {"src", "href", "srcset", "action", "formaction", "poster", "data", "background"}
_LOADING_TAGS = {"link", "iframe", "object", "embed", "base"}


class _RefCollector(HTMLParser):
    """Collects real tag attributes and CSS (escaped text is never a reference)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str, str]] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_style = tag == "style"
        if tag in _LOADING_TAGS:
            self.refs.append((tag, "tag", ""))
        for name, value in attrs:
            if (
                value
                and name in _URL_ATTRS
                and _EXTERNAL_URL.match(value)
                or value
                and name == "style"
                and re.search(r"url\(|@import", value)
            ):
                self.refs.append((tag, name, value))

    def handle_data(self, data: str) -> None:
        if self._in_style and re.search(r"url\(|@import", data):
            self.refs.append(("style", "css", data.strip()[:80]))

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False


def external_references(page_html: str) -> list[tuple[str, str, str]]:
    """(tag, attribute, value) for everything in a page that points off it; ``[]`` if self-contained.

    Parses the markup rather than grepping, so a URL shown as escaped text does not count.
    """
    parser = _RefCollector()
    parser.feed(page_html)
    parser.close()
    return parser.refs
