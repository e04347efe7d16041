"""Rhyme families judged with the CMU pronouncing dictionary (``pronouncing``), and real first lines from text.

A word belongs to a family when one of its CMU pronunciations has the family's rhyming part (the last stressed
vowel and everything after it), stress digits ignored. The card's ten families are named by spelling; each is pinned
by a reference word whose rhyming part defines it ("-ow" is the /OW/ of "go", not the /AW/ of "now").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache, lru_cache

from components.errors import ParamsError

FAMILY_REFERENCE = {
    "ing": "sing",
    "air": "air",
    "ip": "ship",
    "oat": "boat",
    "ird": "bird",
    "ee": "see",
    "ight": "night",
    "ake": "cake",
    "ow": "go",
    "it": "sit",
}
FAMILIES = tuple(FAMILY_REFERENCE)
_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")
_STRESS = re.compile(r"\d")


def _pronouncing():
    try:
        import pronouncing
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ParamsError("Python package `pronouncing` is not installed: pip install pronouncing==0.3.0") from exc
    return pronouncing


@cache
def family_part(family: str) -> str:
    """The rhyming part (stress-free) that defines ``family``."""
    if family not in FAMILY_REFERENCE:
        raise ParamsError(f"rhyme family {family!r} unknown; choose from {', '.join(FAMILIES)}")
    P = _pronouncing()
    return _STRESS.sub("", P.rhyming_part(P.phones_for_word(FAMILY_REFERENCE[family])[0]))


@lru_cache(maxsize=200_000)
def rhyme_parts(word: str) -> frozenset[str]:
    P = _pronouncing()
    return frozenset(_STRESS.sub("", P.rhyming_part(p)) for p in P.phones_for_word(word.lower()))


def families_of(word: str, families: Iterable[str] = FAMILIES) -> list[str]:
    """The families (of ``families``) that ``word`` rhymes with; empty if none or not in the CMU dictionary."""
    parts = rhyme_parts(word)
    return [f for f in families if family_part(f) in parts]


def in_family(word: str, family: str) -> bool:
    return family_part(family) in rhyme_parts(word)


def last_word(text: str) -> str | None:
    words = _WORD.findall(text)
    return words[-1].lower() if words else None


def article_initial(text: str) -> str | None:
    """``"a"`` or ``"an"`` if ``text`` (an answer) starts with that article, else None."""
    words = _WORD.findall(text)
    if not words:
        return None
    w = words[0].lower()
    return w if w in ("a", "an") else None


_SPLIT = re.compile(r"(?<=[.;:!?])\s+|\n")
_CLEAN = re.compile(r"[^A-Za-z' ,]")


def candidate_lines(text: str, *, min_words: int = 4, max_words: int = 12) -> Iterator[str]:
    """Verse lines and sentence pieces of ``text`` as first lines: end punctuation stripped, 4-12 words, letters."""
    for piece in _SPLIT.split(text):
        piece = piece.strip().rstrip(".,;:!?'\"-) ").lstrip("'\"(- ")
        if not piece or _CLEAN.search(piece):
            continue
        n = len(piece.split())
        if min_words <= n <= max_words and piece[-1].isalpha():
            yield piece


def first_lines_by_family(
    docs: Iterable[dict], families: Iterable[str], *, per_family: int, min_words: int = 4, max_words: int = 12
) -> dict[str, list[dict]]:
    """Up to ``per_family`` distinct lines per family whose last word rhymes with it (in exactly one family).

    ``docs`` are ``{"id", "source", "text"}`` corpus documents; each line keeps its source and document id.
    """
    families = list(families)
    out: dict[str, list[dict]] = {f: [] for f in families}
    seen: set[str] = set()
    for doc in docs:
        for line in candidate_lines(doc["text"], min_words=min_words, max_words=max_words):
            key = line.lower()
            if key in seen:
                continue
            fams = families_of(last_word(line) or "", families)
            if len(fams) != 1 or len(out[fams[0]]) >= per_family:
                continue
            seen.add(key)
            out[fams[0]].append({"line": line, "family": fams[0], "source": doc.get("source"), "doc": doc.get("id")})
        if all(len(v) >= per_family for v in out.values()):
            break
    return out


def load_rhyme_file(path, families: Iterable[str]) -> dict[str, list[dict]]:
    """First lines per family from a JSON file ``{family: [line, ...]}`` (the paper's rhyme-family prompt file as
    we read its released form; keys ``"ight"`` or ``"-ight"``), in the corpus extraction's row form. The file is
    read through ``components.io`` (one error naming it); a family of ``families`` missing from it, an unknown
    family, or a line that is not a non-empty string is a DataError naming the file and the family. Whether each
    line ends in its family is left to the data stage's GX check (it re-judges every line with the CMU dictionary).
    """
    from components.errors import DataError
    from components.io import read_json

    doc = read_json(path)
    if not isinstance(doc, dict):
        raise DataError(f"{path}: expected a JSON object {{family: [line, ...]}}")
    by = {str(k).lstrip("-"): v for k, v in doc.items()}
    unknown = sorted(set(by) - set(FAMILIES))
    if unknown:
        raise DataError(f"{path}: unknown rhyme families {unknown}; known: {list(FAMILIES)}")
    out: dict[str, list[dict]] = {}
    for fam in families:
        lines = by.get(fam)
        if not isinstance(lines, list) or not lines:
            raise DataError(f"{path}: family {fam!r}: needs a non-empty list of first lines")
        if not all(isinstance(x, str) and x.strip() for x in lines):
            raise DataError(f"{path}: family {fam!r}: every first line must be a non-empty string")
        out[fam] = [{"line": x.strip(), "family": fam, "source": "file", "doc": None} for x in lines]
    return out
