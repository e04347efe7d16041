"""stream_hf_text: local files stream offline; hub ids fail at once when offline."""

from __future__ import annotations

import pytest

from components.data.corpus.hf import is_offline, stream_hf_text
from components.errors import DataError, OfflineError
from tests.conftest import ROOT

FIXTURE = ROOT / "tests/fixtures/corpus/hf_tiny.jsonl"


@pytest.fixture
def offline_env(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))


def test_hub_id_offline_raises_on_the_call_naming_the_dataset(offline_env):
    with pytest.raises(OfflineError, match="HuggingFaceFW/fineweb.*HF_HUB_OFFLINE"):
        stream_hf_text("HuggingFaceFW/fineweb", limit=10)


def test_offline_argument_overrides_the_environment(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    assert is_offline() is False
    assert is_offline(True) is True
    with pytest.raises(OfflineError, match="togethercomputer/RedPajama-Data-V2"):
        stream_hf_text("togethercomputer/RedPajama-Data-V2", config="sample", offline=True, limit=1)


def test_local_json_streams_offline_skipping_empty_texts(offline_env):
    docs = list(stream_hf_text("json", data_files=str(FIXTURE), source="tiny"))
    assert [d["id"] for d in docs] == ["tiny/0", "tiny/2", "tiny/3"]
    assert all(set(d) == {"id", "source", "text", "title"} and d["source"] == "tiny" for d in docs)
    assert docs[0]["title"] == "one" and docs[2]["title"] == "https://example.org/3"


def test_local_file_path_and_limit(offline_env):
    docs = list(stream_hf_text(str(FIXTURE), limit=2))
    assert len(docs) == 2
    assert docs[1]["text"].startswith("A second document")


def test_missing_text_field_names_the_field_and_the_real_ones(offline_env):
    with pytest.raises(DataError, match=r"no field 'content'.*\['text', 'title', 'url'\]"):
        list(stream_hf_text("json", data_files=str(FIXTURE), text_field="content"))
