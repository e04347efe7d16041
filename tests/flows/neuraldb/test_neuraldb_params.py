"""The neuraldb pipeline's params: profiles validate, bad values are refused naming the key."""

from __future__ import annotations

import copy

import pytest
from pydantic import ValidationError

from flows.neuraldb.params import PRESETS, Params


@pytest.mark.parametrize("profile", ["smoke", "default", "full"])
def test_every_profile_validates(profile):
    Params(**copy.deepcopy(PRESETS[profile]))


def test_default_tunes_memit_lambda_and_uses_name_part_subjects():
    p = Params(**copy.deepcopy(PRESETS["default"]))
    assert p.editing.mom2_weight is None and p.data.subject_tokens == "parts" and p.editing.layer is None
    # issue 16: the target residual's rate is tuned on dev
    assert p.editing.v_lr is None and p.data.neighbours == "random"


@pytest.mark.parametrize(
    "key,value",
    [
        ("mom2_grid", [-1.0]),
        ("mom2_grid", []),
        ("v_kl_factor", -0.1),
        ("v_lr_grid", []),
        ("v_lr_grid", [0.0]),
        ("v_lr", 0.0),
        ("v_lr_facts", 0),
    ],
)
def test_bad_editing_values_are_refused_naming_the_key(key, value):
    raw = copy.deepcopy(PRESETS["smoke"])
    raw["editing"][key] = value
    with pytest.raises(ValidationError, match=key):
        Params(**raw)


def test_unknown_subject_tokenisation_is_refused():
    raw = copy.deepcopy(PRESETS["smoke"])
    raw["data"]["subject_tokens"] = "letters"
    with pytest.raises(ValidationError, match="subject_tokens"):
        Params(**raw)


def test_unknown_neighbour_choice_is_refused():
    raw = copy.deepcopy(PRESETS["smoke"])
    raw["data"]["neighbours"] = "nearest"
    with pytest.raises(ValidationError, match="neighbours"):
        Params(**raw)


def test_every_default_subject_has_a_last_name_of_its_own():
    """Issue 16: pooled last names (~32 subjects each) made the subjects' keys collide at the last token; the
    default profile's facts must give every subject a distinct last name (the smoke keeps pools: wiring only)."""
    from components.editing.facts import generate_facts

    p = Params(**copy.deepcopy(PRESETS["default"]))
    subjects = {f["subject"] for f in generate_facts(p.data.n_subjects, p.seed, p.data.relations, p.data.last_names)}
    assert len({s.split(" ")[1] for s in subjects}) == len(subjects) == p.data.n_subjects


def test_last_names_beyond_the_subjects_are_refused():
    raw = copy.deepcopy(PRESETS["smoke"])
    raw["data"]["last_names"] = raw["data"]["n_subjects"] + 1
    with pytest.raises(ValidationError, match="last_names"):
        Params(**raw)
