"""got-r1 params: every preset validates; bad values fail naming the key; the GenEval metadata loader reads the
real format from a fixture and names a file in the wrong format or with classes outside this world."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.errors import DataError, ParamsError
from flows.got_r1.data import read_geneval
from flows.got_r1.params import PRESETS, Params
from flows.runtime.params import resolve

FIXTURE = Path(__file__).parents[2] / "fixtures" / "got_r1" / "evaluation_metadata.jsonl"


@pytest.mark.parametrize("profile", list(PRESETS))
def test_presets_validate(profile):
    p = resolve(Params, PRESETS, slug="got-r1", profile=profile)
    assert set(p.rl.methods) == {"full", "pi", "ri"}


@pytest.mark.parametrize(
    "override, key",
    [
        ("data.image_size=4", "got-r1.data.image_size"),  # a picture too small for the shapes
        ("rl.seeds=[]", "got-r1.rl.seeds"),  # an empty set
        ("data.relation_noise=1.0", "got-r1.data.relation_noise"),  # out of range
        ("rl.methods=[full,pi,ri,hps]", "got-r1.rl: .*unknown reward kind"),  # an unknown name
        ("rl.methods=[full]", "got-r1.rl: .*must include"),
        ("data.source=coco", "got-r1.data: .*source"),
        ("data.source=geneval", "got-r1.data: .*geneval_file"),
        ("model.n_heads=3", "got-r1.model: .*heads"),
        ("rl.group=1", "got-r1.rl.group"),  # a group of one has no baseline
        ("rl.prompts_per_step=100", "got-r1: .*exceeds data.n_rl"),
    ],
)
def test_bad_values_name_the_key(override, key):
    with pytest.raises(ParamsError, match=key):
        resolve(Params, PRESETS, slug="got-r1", profile="smoke", overrides=[override])


def test_geneval_metadata_fixture_loads_and_bad_files_are_named(tmp_path):
    rows = read_geneval(FIXTURE)
    assert [r["tag"] for r in rows] == ["single_object", "two_object", "counting", "colors", "position", "color_attr"]
    assert rows[4]["include"][1]["position"] == ["right of", 0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a photo of a square"}\n')
    with pytest.raises(DataError, match="bad.jsonl: row 0 lacks prompt/tag/include"):
        read_geneval(bad)
    dog = tmp_path / "dog.jsonl"
    dog.write_text(
        '{"tag": "single_object", "include": [{"class": "dog", "count": 1}], "prompt": "a photo of a dog"}\n'
    )
    with pytest.raises(DataError, match="class 'dog'"):
        read_geneval(dog)


def test_the_full_profile_names_the_janus_id_and_stops_at_once():
    from flows.got_r1.sft import check_model_source

    p = resolve(Params, PRESETS, slug="got-r1", profile="full")
    with pytest.raises(DataError, match="deepseek-ai/Janus-Pro-1B"):
        check_model_source(p.model)
    check_model_source(resolve(Params, PRESETS, slug="got-r1", profile="default").model)
