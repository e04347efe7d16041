"""Each extractor on the real installed package (installed by scripts/setup.sh).

The fast tests read the first documents of each source; the ``slow`` ones
extract every source in full, in this process and in a fresh one with another
hash seed, and compare.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from components.data.corpus.chunking import MAX_CHARS
from components.data.corpus.sources import MIN_CHARS, SOURCES, available_sources, extract
from tests.conftest import ROOT

SOURCES_DIR = Path(os.environ.get("PAPERLINE_SOURCES_DIR", ROOT / ".paperline/sources"))
AVAILABLE = available_sources(SOURCES_DIR)
PREFIX = 150
NAMES = sorted(SOURCES)
SLOW_TO_OPEN = {"gcide", "austen"}  # parse the whole package before the first document (3-4 s each)


def _skip_if_absent(name: str) -> None:
    if not AVAILABLE[name]:
        spec = SOURCES[name]
        pytest.skip(f"{name}: {spec.package} not installed here ({spec.install_hint()})")


def _digest(docs) -> str:
    h = hashlib.sha256()
    for d in docs:
        h.update(json.dumps([d["id"], d["title"], d["text"]]).encode())
    return h.hexdigest()


def _in_fresh_process(names: list[str], limit: int | None) -> dict[str, str]:
    """Digests of the extraction in a new interpreter with a different string-hash seed."""
    code = (
        "import itertools, json, hashlib, sys\n"
        "from components.data.corpus.sources import extract\n"
        "names, limit, d = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]\n"
        "out = {}\n"
        "for n in names:\n"
        "    h = hashlib.sha256()\n"
        "    for doc in itertools.islice(extract(n, sources_dir=d), limit):\n"
        "        h.update(json.dumps([doc['id'], doc['title'], doc['text']]).encode())\n"
        "    out[n] = h.hexdigest()\n"
        "print(json.dumps(out))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    res = subprocess.run(
        [sys.executable, "-c", code, json.dumps(names), json.dumps(limit), str(SOURCES_DIR)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def prefixes() -> dict[str, list[dict]]:
    return {n: list(itertools.islice(extract(n, sources_dir=SOURCES_DIR), PREFIX)) for n in NAMES if AVAILABLE[n]}


def _check_docs(name: str, docs: list[dict]) -> None:
    assert docs, f"{name}: no documents"
    for d in docs:
        assert set(d) == {"id", "source", "text", "title"}
        assert d["source"] == name and d["id"].startswith(f"{name}/")
        assert len(d["text"].strip()) >= MIN_CHARS and len(d["text"]) <= MAX_CHARS + 200
        assert d["title"].strip()
    assert len({d["id"] for d in docs}) == len(docs), f"{name}: duplicate ids"


@pytest.mark.parametrize("name", NAMES)
def test_first_documents_are_well_formed(prefixes, name):
    _skip_if_absent(name)
    _check_docs(name, prefixes[name])
    assert 700 <= statistics.median(len(d["text"]) for d in prefixes[name]) <= 4096


def test_first_documents_are_identical_in_a_fresh_process(prefixes):
    names = [n for n in NAMES if AVAILABLE[n] and n not in SLOW_TO_OPEN]  # those two: the slow test
    if not names:
        pytest.skip("no corpus source installed here (run scripts/setup.sh)")
    assert _in_fresh_process(names, PREFIX) == {n: _digest(prefixes[n]) for n in names}


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_full_extraction_is_complete_sized_and_repeatable(name):
    _skip_if_absent(name)
    docs = list(extract(name, sources_dir=SOURCES_DIR))
    _check_docs(name, docs)
    sizes = [len(d["text"]) for d in docs]
    assert 1500 <= statistics.median(sizes) <= 3000, "documents should be roughly 1-4 KB, most near 2 KB"
    assert sum(sizes) / 1e6 >= 0.8 * SOURCES[name].approx_mb
    assert _in_fresh_process([name], None) == {name: _digest(docs)}
