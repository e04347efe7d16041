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


@pytest.mark.parametrize(
    ("value", "kind", "ok"),
    [
        (3, int, True),
        (True, int, False),  # a bool is not an integer
        ("3", int, False),
        (2.5, float, True),
        (2, float, True),
        (float("nan"), float, False),  # a float field is a finite number
        (None, float, False),
        (None, (float, None), True),
        ("x", str, True),
        ([1], list, True),
        ({"a": 1}, list, False),
    ],
)
def test_typed_fields_accept_only_their_type(tmp_path, value, kind, ok):
    import json

    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"id": "a", "v": value}) + "\n")
    if ok:
        assert read_jsonl(path, {"id": str, "v": kind})[0]["v"] == value
    else:
        with pytest.raises(DataError, match=r"rows.jsonl:1: field 'v' is "):
            read_jsonl(path, {"id": str, "v": kind})


def test_duplicate_ids_and_json_records_name_the_file(tmp_path):
    from components.io import read_json, read_json_records

    path = tmp_path / "runs.jsonl"
    write_jsonl(path, [{"id": "a"}, {"id": "b"}, {"id": "a"}])
    assert len(read_jsonl(path, {"id": str})) == 3
    with pytest.raises(DataError, match=r"runs.jsonl: duplicate id 'a' \(record 3\)"):
        read_jsonl(path, {"id": str}, unique="id")
    doc = tmp_path / "runs.json"
    doc.write_text('{"runs": []}')
    with pytest.raises(DataError, match=r"runs.json: a JSON dict, expected a JSON list"):
        read_json_records(doc, {"name": str})
    doc.write_text('[{"name": "a", "seed": 0}, {"name": "b"}]')
    with pytest.raises(DataError, match=r"runs.json: record 2: missing field\(s\) 'seed'"):
        read_json_records(doc, {"name": str, "seed": int})
    obj = tmp_path / "obj.json"
    obj.write_text('{"a": 1}')
    assert read_json(obj, {"a": int}) == {"a": 1}
    with pytest.raises(DataError, match=r"obj.json: missing field\(s\) 'x'"):
        read_json(obj, ["x"])
