"""King James and World English Bibles from the Debian SWORD packages, read with pysword.

One document per chapter; chapters over 4 KB are split on verse boundaries into
balanced parts. Ids: ``<kjv|web>/<OSIS book>.<chapter>#<part>``, the same for
both translations, so the pair is easy to line up as natural near-duplicates.

Speed: pysword's zText reader decompresses the whole book buffer again for
every verse (168 s for a Bible). Caching the decompressed buffer on the reader
instance brings a whole Bible to about 1.5 s with identical output. pysword has
no public switch for this, so we wrap its ``_decompressed_text`` method.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path

from components.data.corpus.chunking import MAX_CHARS, group_units, split_oversized
from components.data.corpus.sources import debian_path
from components.errors import DataError

SWORD_ROOT = "usr/share/sword"
MODULES = {"kjv": ("engKJV2006eb", "King James Version"), "web": ("engWEB2015eb", "World English Bible")}
# OSIS markup. pysword's own cleaner runs about 100 regex passes per verse (4 s of
# the 5 s a Bible took) and glues words where a footnote sat between them
# ("knew<note>..</note>Eve" -> "knewEve"), so we strip the tags ourselves: the
# elements whose content is not Bible text (the same list as pysword's), then
# every remaining tag, keeping its content. Footnotes become a space.
_DROP_CONTENT = re.compile(
    r"<(note|title|abbr|catchWord|index|rdg|rdgGroup|figure|milestone)\b[^>]*?(?:/>|>.*?</\1>)",
    re.DOTALL | re.IGNORECASE,
)
_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r" +([,.;:!?’”)])")


def _open_bible(source: str, sources_dir: Path):  # -> pysword.bible.SwordBible
    """Open the SWORD module of ``source`` with a cached decompressor."""
    from pysword.modules import SwordModules  # the `text` extra; presence checked by the registry

    root = debian_path(SWORD_ROOT, sources_dir)
    module, _ = MODULES[source]
    if root is None or not (root / "mods.d").is_dir():
        raise DataError(f"{source}: /{SWORD_ROOT}/mods.d missing; install the Debian package sword-text-{source}")
    modules = SwordModules(str(root))
    found = modules.parse_modules()
    if module not in found:
        raise DataError(
            f"{source}: SWORD module {module} not found under {root}; install the Debian package sword-text-{source}"
        )
    bible = modules.get_bible_from_module(module)
    bible._decompressed_text = functools.lru_cache(maxsize=4)(bible._decompressed_text)
    return bible


def clean_verse(raw: str) -> str:
    """Strip OSIS markup from one verse and normalise its spacing."""
    text = _TAG.sub("", _DROP_CONTENT.sub(" ", raw)) if "<" in raw else raw
    text = _SPACE.sub(" ", text.replace("¶", " ")).strip()
    return _SPACE_BEFORE_PUNCT.sub(r"\1", text)


def _extract(source: str, sources_dir: Path) -> Iterator[dict]:
    bible = _open_bible(source, sources_dir)
    name = MODULES[source][1]
    for _testament, books in bible.get_structure().get_books().items():
        for book in books:
            for chapter in range(1, book.num_chapters + 1):
                raw = bible.get_iter(books=[book.name], chapters=[chapter], clean=False)
                # A few Greek-Esther "verses" in WEB run to 17 KB: split those on spaces.
                verses = [p for r in raw for p in split_oversized(clean_verse(r)) if p]
                total = sum(len(v) + 1 for v in verses)
                parts = max(1, -(-total // MAX_CHARS))  # ceil: split only chapters over 4 KB
                runs = group_units([len(v) for v in verses], target=-(-total // parts), sep_len=1) if verses else []
                for k, run in enumerate(runs):
                    yield {
                        "id": f"{source}/{book.osis_name}.{chapter}#{k}",
                        "source": source,
                        "text": " ".join(verses[run.start : run.stop]),
                        "title": f"{name}, {book.name} {chapter}" + (f" (part {k + 1})" if len(runs) > 1 else ""),
                    }


def extract_kjv(sources_dir: Path) -> Iterator[dict]:
    """King James Version, one document per chapter (long chapters split)."""
    return _extract("kjv", sources_dir)


def extract_web(sources_dir: Path) -> Iterator[dict]:
    """World English Bible, one document per chapter (long chapters split)."""
    return _extract("web", sources_dir)
