"""Jane Austen's six novels from the Debian package r-cran-janeaustenr.

The novels are R character vectors (one element per printed line) in R's
lazy-load database; PyPI ``rdata`` parses it without R. Each chapter is split
into ~2 KB chunks on paragraph boundaries. Ids: ``austen/<novel>/ch<NN>#<chunk>``
(chapters numbered in reading order; ``ch00`` is the front matter).
"""

from __future__ import annotations

import gzip
import re
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path

from components.data.corpus.chunking import chunk_text
from components.data.corpus.sources import debian_path
from components.errors import DataError

DATA_DIR = "usr/lib/R/site-library/janeaustenr/data"
TITLES = {
    "sensesensibility": "Sense and Sensibility",
    "prideprejudice": "Pride and Prejudice",
    "mansfieldpark": "Mansfield Park",
    "emma": "Emma",
    "northangerabbey": "Northanger Abbey",
    "persuasion": "Persuasion",
}
_CHAPTER = re.compile(r"^\s*chapter\s+([ivxlc]+|\d+)\.?\s*$", re.IGNORECASE)


def _load_novels(sources_dir: Path) -> dict[str, list[str]]:
    """Return {novel name: lines} read from the R lazy-load database."""
    import rdata  # the `text` extra; presence checked by the registry

    data_dir = debian_path(DATA_DIR, sources_dir)
    if data_dir is None:
        raise DataError(f"Austen: /{DATA_DIR} missing; install the Debian package r-cran-janeaustenr")
    rdb = (data_dir / "Rdata.rdb").read_bytes()
    with warnings.catch_warnings():  # rdata warns "Unknown file type: assumed RDS" for these blobs
        warnings.simplefilter("ignore")
        index = rdata.conversion.convert(
            rdata.parser.parse_data(gzip.decompress((data_dir / "Rdata.rdx").read_bytes()))
        )
        novels = {}
        for name, (offset, length) in index["variables"].items():
            # Each record is a 4-byte length header followed by a zlib stream.
            blob = zlib.decompress(rdb[int(offset) + 4 : int(offset) + int(length)])
            novels[str(name)] = [str(line) for line in rdata.conversion.convert(rdata.parser.parse_data(blob))]
    return novels


def _chapters(lines: list[str]) -> list[str]:
    """Split a novel's lines at chapter headings; element 0 is the front matter."""
    chapters: list[list[str]] = [[]]
    for line in lines:
        if _CHAPTER.match(line):
            chapters.append([])
        chapters[-1].append(line)
    return ["\n".join(ch).strip() for ch in chapters]


def extract_austen(sources_dir: Path) -> Iterator[dict]:
    """Chapters of the six novels, in ~2 KB chunks on paragraph boundaries."""
    novels = _load_novels(sources_dir)
    for name in sorted(novels):
        title = TITLES.get(name, name)
        for c, chapter in enumerate(_chapters(novels[name])):
            for k, chunk in enumerate(chunk_text(chapter)):
                yield {
                    "id": f"austen/{name}/ch{c:02d}#{k}",
                    "source": "austen",
                    "text": chunk,
                    "title": f"{title}, chapter {c}" if c else f"{title}, front matter",
                }
