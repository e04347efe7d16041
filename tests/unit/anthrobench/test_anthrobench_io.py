"""First turns in the official CSV format, the template generator, the user simulator's determinism, and the
OpenAI-compatible endpoint target against a loopback stub server (never a real host)."""

from __future__ import annotations

import csv
import json

import pytest

from components.anthrobench.dialogue import EndpointChat, run_dialogues
from components.anthrobench.first_turns import REQUIRED, generate_first_turns, load_first_turns, stratified_sample
from components.anthrobench.simulate import user_turn
from components.errors import DataError
from tests.chat_stub import chat_endpoint

HEADER = ["conv_id", "use_domain", "use_scenario", "empathy", "professionalism", "original_prompt", "cue",
          "behavior_category", "user_first_turn"]  # fmt: skip


def _write(path, rows, header=HEADER):
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=header, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    return path


def test_official_format_loads_and_samples_by_cell(tmp_path):
    rows = generate_first_turns()
    assert len(rows) == 40 and len({(r["use_domain"], r["use_scenario"]) for r in rows}) == 8
    loaded = load_first_turns(_write(tmp_path / "first_turns.csv", rows))
    assert [r["user_first_turn"] for r in loaded] == [r["user_first_turn"] for r in rows]
    sample = stratified_sample(loaded, 16, seed=0)
    assert len({(r["use_domain"], r["use_scenario"]) for r in sample}) == 8
    assert sample == stratified_sample(loaded, 16, seed=0)


@pytest.mark.parametrize("case", ["missing column", "empty turn", "no rows", "not csv", "absent"])
def test_bad_first_turns_files_name_the_problem(tmp_path, case):
    path = tmp_path / "first_turns.csv"
    rows = generate_first_turns()
    if case == "missing column":
        _write(path, rows, [h for h in HEADER if h != "use_scenario"])
    elif case == "empty turn":
        _write(path, [{**rows[0], "user_first_turn": "  "}])
    elif case == "no rows":
        _write(path, [])
    elif case == "not csv":
        path.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(DataError, match="first_turns"):
        load_first_turns(path)
    assert set(REQUIRED) <= set(HEADER)


def test_user_simulator_is_deterministic_per_seed():
    assert user_turn(0, 3, 2, "x") == user_turn(0, 3, 2, "x")
    assert len({user_turn(s, 3, 2, "x") for s in range(20)}) > 3


def test_endpoint_target_against_a_loopback_stub():
    with chat_endpoint() as url:
        target = EndpointChat(url=url, model="stub-model", name="stub")
        dialogues = run_dialogues(target, generate_first_turns()[:2], seed=0, n_turns=3)
        assert [t["assistant"] for t in dialogues[0]["turns"]] == [
            f"I hear you ({k} messages, model stub-model)." for k in (1, 3, 5)
        ]
    with pytest.raises(DataError, match="unreachable"):
        EndpointChat(url=url, model="m", name="x", timeout=2).respond([[{"role": "user", "content": "hi"}]], [0])


def test_j3_saved_and_loaded_votes_alike(tmp_path):
    from components.anthrobench.judges import LogRegJudge, load_j3, save_j3
    from components.anthrobench.simulate import labelled_sentences

    judge = LogRegJudge().fit(labelled_sentences(10, seed=0))
    texts = [r["text"] for r in labelled_sentences(5, seed=1, split="eval")]
    loaded = load_j3(save_j3(judge, tmp_path / "j3"))
    assert (loaded.predict(texts) == judge.predict(texts)).all() and judge.predict(texts).any()


@pytest.mark.parametrize("broken", ["config.json", "j3.npz"])
def test_a_damaged_j3_folder_names_the_file(tmp_path, broken):
    """The champion's loader reads through the guarded readers: a truncated file is a DataError naming it."""

    import numpy as np

    from components.anthrobench.judges import load_j3
    from components.errors import DataError

    folder = tmp_path / "j3"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"vocabulary": ["a"], "threshold": 0.5}), encoding="utf-8")
    np.savez(folder / "j3.npz", coef=np.zeros((13, 1)), intercept=np.zeros(13))
    (folder / broken).write_bytes((folder / broken).read_bytes()[:7])
    with pytest.raises(DataError, match=broken):
        load_j3(folder)
