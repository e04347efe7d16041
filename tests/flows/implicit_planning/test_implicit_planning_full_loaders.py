"""The full profile's loaders, offline: the rhyme-family file in its released form (``{family: [line, ...]}``,
keys with or without the dash) read into the data stage's rows and re-judged by its GX check; bad files fail with
one error naming the file; Gemma3-270M behind ``steer.gemma3`` fails at once offline naming its id, before
SmolLM2 is loaded."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from components.errors import DataError, PaperlineError
from components.implicit_planning import rhymes as R
from flows.implicit_planning import real
from flows.implicit_planning.data import _checks, split_lines
from flows.implicit_planning.params import PRESETS, Params
from flows.runtime.params import resolve

FIXTURE = Path(__file__).parents[2] / "fixtures" / "implicit_planning" / "rhyme_families.json"


def test_rhyme_file_rows_pass_the_data_stage_checks(tmp_path):
    found = R.load_rhyme_file(FIXTURE, ["ight", "ee"])
    assert {f: len(v) for f, v in found.items()} == {"ight": 3, "ee": 3}
    assert found["ee"][1] == {"line": "A bird was singing in the tree", "family": "ee", "source": "file", "doc": None}
    rows = split_lines({f: [r["line"] for r in v] for f, v in found.items()}, n_train=2, n_test=1, seed=1)
    _checks("real_lines", rows, list(R.FAMILIES), tmp_path, judge=True)  # every line re-judged by the CMU dict
    assert json.loads((tmp_path / "_checks/real_lines.json").read_text())["success"] is True


def test_a_line_outside_its_family_fails_the_check(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"ight": ["The stars were burning through the day", "a kite in flight"], "ee": ["a tree"]})
    )
    found = R.load_rhyme_file(bad, ["ight", "ee"])
    rows = [{"family": f, "split": "train", "line": r["line"]} for f, v in found.items() for r in v]
    with pytest.raises(DataError, match="real_lines"):
        _checks("real_lines", rows, list(R.FAMILIES), tmp_path, judge=True)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[1, 2]", "expected a JSON object"),
        ('{"ight": ["a kite"], "ough": ["though"]}', r"unknown rhyme families \['ough'\]"),
        ('{"ight": ["a kite"]}', "family 'ee': needs a non-empty list"),
        ('{"ight": ["a kite"], "ee": ["", "a tree"]}', "family 'ee': every first line"),
        ('{"ight": ["a kite"', "not valid JSON"),
    ],
)
def test_bad_rhyme_files_name_the_file(tmp_path, text, match):
    path = tmp_path / "families.json"
    path.write_text(text)
    with pytest.raises(DataError, match=rf"families.json: .*{match}|families.json: {match}"):
        R.load_rhyme_file(path, ["ight", "ee"])
    with pytest.raises(DataError, match="nowhere.json"):
        R.load_rhyme_file(tmp_path / "nowhere.json", ["ight", "ee"])


def test_gemma3_flag_fails_at_once_offline_naming_the_id(tmp_path):
    p = resolve(Params, PRESETS, slug="implicit-planning", profile="default", overrides=["steer.gemma3=true"])
    models = real.real_models(p.steer)
    assert models == [("smollm2", "smollm2-135m-instruct"), ("gemma3-270m", "google/gemma-3-270m")]
    assert real.real_models(resolve(Params, PRESETS, slug="implicit-planning", profile="default").steer) == models[:1]
    start = time.perf_counter()
    with pytest.raises(PaperlineError, match="google/gemma-3-270m"):
        real.load_models(models, tmp_path / "cache", offline=True)
    assert time.perf_counter() - start < 30  # at once: the hub id is tried before SmolLM2 is converted or loaded
    assert not (tmp_path / "cache").exists()
