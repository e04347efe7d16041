"""Extractors for the plain Debian text packages: GCIDE, WordNet glosses, Linux docs.

Document ids:
- ``gcide/<run number>``: a run of consecutive dictionary entries (~2 KB);
- ``wordnet/<pos>/<offset of the first synset>``: a run of about 20 glosses (~2 KB);
- ``linux_docs/<path of the .rst file>#<chunk>``: one file split on paragraphs.
The part before ``#`` names the natural unit (used to hold out whole units).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from pathlib import Path

from components.data.corpus.chunking import TARGET_CHARS, chunk_text, group_units, split_oversized
from components.data.corpus.sources import debian_path
from components.errors import DataError

GCIDE_DICT = "usr/share/dictd/gcide.dict.dz"
GCIDE_INDEX = "usr/share/dictd/gcide.index"
WORDNET_DIR = "usr/share/wordnet"
LINUX_DOCS = "usr/share/doc/linux-doc-6.1/Documentation"
WORDNET_POS = {"noun": "nouns", "verb": "verbs", "adj": "adjectives", "adv": "adverbs"}
# Non-English (translations/) and build scaffolding are left out of the English corpus.
LINUX_SKIP_TOP = {"translations", "sphinx-static", "sphinx"}

_UNDERLINE = re.compile(r"([=\-~^*#+`'\"])\1{2,}")
_B64 = {c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}


def _b64_number(s: str) -> int:
    """Decode a dictd index number (base 64, most significant digit first)."""
    n = 0
    for ch in s:
        n = n * 64 + _B64[ch]
    return n


def _decode(raw: bytes) -> str:
    """UTF-8, falling back to cp1252 for the few GCIDE entries written in it."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def _gcide_entries(sources_dir: Path) -> list[tuple[str, str]]:
    """Return (headword, entry text) in file order, skipping the database's own ``00-`` records."""
    dict_path = debian_path(GCIDE_DICT, sources_dir)
    index_path = debian_path(GCIDE_INDEX, sources_dir)
    if dict_path is None or index_path is None:
        raise DataError(f"GCIDE: /{GCIDE_DICT} or /{GCIDE_INDEX} missing; install the Debian package dict-gcide")
    spans: dict[tuple[int, int], str] = {}
    with open(index_path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or parts[0].startswith("00-"):
                continue
            spans.setdefault((_b64_number(parts[1]), _b64_number(parts[2])), parts[0])
    data = gzip.decompress(Path(dict_path).read_bytes())  # dictzip is gzip-compatible
    return [(hw, _decode(data[o : o + n]).strip("\n")) for (o, n), hw in sorted(spans.items())]


def extract_gcide(sources_dir: Path) -> Iterator[dict]:
    """Runs of consecutive GCIDE entries, about 2 KB each."""
    pieces = [(hw, piece) for hw, text in _gcide_entries(sources_dir) for piece in split_oversized(text)]
    for k, run in enumerate(group_units([len(t) for _, t in pieces])):
        first, last = pieces[run.start][0], pieces[run.stop - 1][0]
        text = "\n\n".join(t for _, t in pieces[run.start : run.stop])
        yield {"id": f"gcide/{k:06d}", "source": "gcide", "text": text, "title": f"GCIDE: {first} - {last}"}


def _wordnet_gloss(line: str) -> tuple[str, str] | None:
    """Parse one ``data.*`` line into (synset offset, "word, word: gloss")."""
    if line.startswith("  ") or " | " not in line:
        return None  # license header
    head, gloss = line.split(" | ", 1)
    fields = head.split()
    n_words = int(fields[3], 16)
    words = [fields[4 + 2 * i].replace("_", " ") for i in range(n_words)]
    words = [re.sub(r"\([a-z]+\)$", "", w) for w in words]  # adjective markers such as "(a)"
    return fields[0], f"{', '.join(words)}: {gloss.strip()}"


def extract_wordnet(sources_dir: Path) -> Iterator[dict]:
    """Runs of 20 consecutive WordNet synsets as "words: gloss" lines."""
    for pos, plural in WORDNET_POS.items():
        path = debian_path(f"{WORDNET_DIR}/data.{pos}", sources_dir)
        if path is None:
            raise DataError(f"WordNet: /{WORDNET_DIR}/data.{pos} missing; install the Debian package wordnet-base")
        with open(path, encoding="utf-8", errors="replace") as fh:
            glosses = [g for g in map(_wordnet_gloss, fh) if g]
        # About 20 glosses per document, cut where the runs come out near 2 KB.
        for run in group_units([len(g) for _, g in glosses], target=TARGET_CHARS, sep_len=1):
            lines = [g for _, g in glosses[run.start : run.stop]]
            first = lines[0].split(":", 1)[0].split(",")[0]
            yield {
                "id": f"wordnet/{pos}/{glosses[run.start][0]}",
                "source": "wordnet",
                "text": "\n".join(lines),
                "title": f"WordNet {plural} from {first}",
            }


def _rst_title(text: str, fallback: str) -> str:
    """The first reStructuredText section title (a line underlined by =, -, ~, ...), else ``fallback``."""
    lines = [line.strip() for line in text.splitlines()]
    for a, b in zip(lines, lines[1:]):
        if a and not a.startswith("..") and _UNDERLINE.fullmatch(b) and len(b) >= len(a):
            return a
    return fallback


def extract_linux_docs(sources_dir: Path) -> Iterator[dict]:
    """Every English ``Documentation/**/*.rst.gz`` file, chunked on paragraph boundaries."""
    root = debian_path(LINUX_DOCS, sources_dir)
    if root is None:
        raise DataError(f"Linux docs: /{LINUX_DOCS} missing; install the Debian package linux-doc-6.1")
    files = sorted(p for p in root.rglob("*.rst.gz") if p.relative_to(root).parts[0] not in LINUX_SKIP_TOP)
    for path in files:
        rel = path.relative_to(root).as_posix()[: -len(".rst.gz")]
        text = gzip.decompress(Path(path).read_bytes()).decode("utf-8", errors="replace")
        title = _rst_title(text, rel)
        for k, chunk in enumerate(chunk_text(text)):
            yield {"id": f"linux_docs/{rel}#{k}", "source": "linux_docs", "text": chunk, "title": title}
