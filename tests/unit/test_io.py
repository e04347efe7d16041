"""Atomic writes and validated JSONL reading."""

import pytest

from components.errors import DataError
from components.io import atomic_path, read_jsonl, write_jsonl


def test_failed_write_keeps_the_old_file(tmp_path):
    target = tmp_path / "out.jsonl"
    write_jsonl(target, [{"id": "1"}])
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("partial")
        raise RuntimeError
    assert read_jsonl(target) == [{"id": "1"}]
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"id": "1", "text": "a"}\n{"id": "2", "te', "out.jsonl:2: not valid JSON"),
        ('{"id": "1"}\n', "out.jsonl:1: missing field(s) 'text'"),
        ("[1, 2]\n", "expected a JSON object"),
        ("", "no records"),
    ],
)
def test_corrupt_jsonl_names_file_and_line(tmp_path, content, message):
    path = tmp_path / "out.jsonl"
    path.write_text(content)
    with pytest.raises(DataError) as err:
        read_jsonl(path, required=("id", "text"))
    assert message in str(err.value)


def test_read_model_config_names_the_file_for_another_model_type_or_an_unknown_field(tmp_path):
    import dataclasses

    from components.io import read_model_config

    @dataclasses.dataclass
    class Cfg:
        width: int = 8

    path = tmp_path / "config.json"
    path.write_text('{"model_type": "tiny", "width": 16}')
    assert read_model_config(path, "tiny", Cfg) == Cfg(width=16)
    path.write_text('{"model_type": "other", "width": 16}')
    with pytest.raises(DataError, match=f"{path}: not a tiny config"):
        read_model_config(path, "tiny", Cfg)
    path.write_text('{"model_type": "tiny", "depth": 2}')
    with pytest.raises(DataError, match="unknown field\\(s\\) depth"):
        read_model_config(path, "tiny", Cfg)
