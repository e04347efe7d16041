"""Parallel English-Spanish text: LibreOffice help paragraphs aligned by (file, HTML id) and SWORD Bible verses
aligned by (book, chapter, verse); queries cut from the Spanish side; the entity flag of a query.

The stdlib HTML parser is used (lxml is not installed); one help file takes about a millisecond.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser
from pathlib import Path

import numpy as np

from components.errors import DataError

BLOCKS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "td"}
WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
TOKEN = re.compile(r"[\w.$#()-]+", re.UNICODE)


class _IdText(HTMLParser):
    """Text of every block element that carries an ``id``, nested markup included."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: dict[str, str] = {}
        self._stack: list[tuple[str, str | None, list[str]]] = []

    def handle_starttag(self, tag, attrs):
        if tag in BLOCKS:
            self._stack.append((tag, dict(attrs).get("id"), []))

    def handle_endtag(self, tag):
        if tag in BLOCKS and self._stack and self._stack[-1][0] == tag:
            _, pid, parts = self._stack.pop()
            text = " ".join("".join(parts).split())
            if pid and text and pid not in self.out:
                self.out[pid] = text
            if self._stack:
                self._stack[-1][2].append(" " + text + " ")

    def handle_data(self, data):
        if self._stack:
            self._stack[-1][2].append(data)


def paragraphs(path: Path) -> dict[str, str]:
    parser = _IdText()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return parser.out


def libreoffice_pairs(en_root: Path, es_root: Path, *, min_words: int = 4, max_files: int | None = None) -> list[dict]:
    """Paragraph pairs present in both languages under the same relative file and HTML id; untranslated pairs
    (identical text) and very short ones are dropped; each pair id is ``lo:<file>#<id>``."""
    en_root, es_root = Path(en_root), Path(es_root)
    for root in (en_root, es_root):
        if not (root / "text").is_dir():
            raise DataError(
                f"{root}: not a LibreOffice help folder (no text/); install libreoffice-help-en-us "
                "and libreoffice-help-es (scripts/apt-packages.txt)"
            )
    files = sorted(p.relative_to(en_root) for p in (en_root / "text").rglob("*.html"))
    if max_files is not None:
        files = files[:max_files]
    pairs, seen = [], set()
    for rel in files:
        es_file = es_root / rel
        if not es_file.is_file():
            continue
        en, es = paragraphs(en_root / rel), paragraphs(es_file)
        for pid, en_text in en.items():
            es_text = es.get(pid)
            if not es_text or es_text == en_text or len(WORD.findall(es_text)) < min_words:
                continue
            if len(WORD.findall(en_text)) < min_words or (en_text, es_text) in seen:
                continue
            seen.add((en_text, es_text))
            pairs.append({"id": f"lo:{rel.as_posix()}#{pid}", "source": "libreoffice", "en": en_text, "es": es_text})
    return pairs


def bible_pairs(
    sword_root: Path, books: Iterable[str], *, en_module: str = "engWEB2015eb", es_module: str = "spaRV1909eb"
) -> list[dict]:
    """Verse pairs (``bible:<Book>.<chapter>.<verse>``) of the named OSIS books, both modules' versification."""
    from pysword.modules import SwordModules

    mods = SwordModules(str(sword_root))
    found = mods.parse_modules()
    for m in (en_module, es_module):
        if m not in found:
            raise DataError(f"{sword_root}: SWORD module {m!r} not installed (found {sorted(found)})")
    en, es = mods.get_bible_from_module(en_module), mods.get_bible_from_module(es_module)
    structure = en.get_structure().get_books()
    by_name = {b.osis_name: b for part in structure.values() for b in part}
    pairs = []
    for name in books:
        if name not in by_name:
            raise DataError(f"bible book {name!r}: not an OSIS book name (e.g. {sorted(by_name)[:5]})")
        book = by_name[name]
        en_v = list(en.get_iter(books=[name], clean=True))
        es_v = list(es.get_iter(books=[name], clean=True))
        refs = [(c, v) for c in range(1, book.num_chapters + 1) for v in range(1, book.chapter_lengths[c - 1] + 1)]
        for (c, v), e, s in zip(refs, en_v, es_v):
            e, s = " ".join(e.split()), " ".join(s.split())
            if len(WORD.findall(e)) >= 3 and len(WORD.findall(s)) >= 3:
                pairs.append({"id": f"bible:{name}.{c}.{v}", "source": "bible", "en": e, "es": s})
    return pairs


def make_query(es_text: str, rng: np.random.Generator, *, min_words: int = 6, max_words: int = 12) -> str:
    """The first sentence of the Spanish paragraph when it has 6-12 words, else a random 6-12-word span."""
    first = re.split(r"(?<=[.!?;:])\s", es_text, maxsplit=1)[0]
    if min_words <= len(first.split()) <= max_words:
        return first
    words = es_text.split()
    n = int(rng.integers(min_words, max_words + 1))
    if len(words) <= n:
        return es_text
    start = int(rng.integers(0, len(words) - n + 1))
    return " ".join(words[start : start + n])


def entity_tokens(text: str, english_vocab: set[str]) -> list[str]:
    """Identifiers (a digit, underscore, dot or inner capital) and capitalised tokens not in the English
    vocabulary (lower-cased), sentence-initial words excepted."""
    out = []
    for i, tok in enumerate(TOKEN.findall(text)):
        core = tok.strip(".()-")
        if len(core) < 2 or core.lower() in english_vocab:
            continue
        ident = bool(re.search(r"[\d_]|[a-z][A-Z]|\w\.\w", core)) or (core.isupper() and len(core) >= 3)
        capital = core[0].isupper() and i > 0
        if ident or capital:
            out.append(core)
    return out


def iter_split(ids: list[str], fractions: dict[str, int], rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    """(id, split) with exactly ``fractions[split]`` ids per split (in order), drawn without replacement."""
    need = sum(fractions.values())
    if need > len(ids):
        raise DataError(f"splits need {need} pairs but only {len(ids)} are available")
    order = rng.permutation(len(ids))
    start = 0
    for split, n in fractions.items():
        for j in order[start : start + n]:
            yield ids[j], split
        start += n
