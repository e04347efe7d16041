"""anthrobench's full-profile loaders offline: an LM target named by a Hub id fails at once naming the id, and an
endpoint target is served by a loopback stub through the stage's own job function (never a real host)."""

from __future__ import annotations

import pytest

from components.anthrobench.first_turns import generate_first_turns
from components.errors import OfflineError
from flows.anthrobench.dialogues import DialogueJob, dialogues_of
from flows.anthrobench.params import PRESETS, Params
from flows.runtime.params import resolve
from tests.chat_stub import chat_endpoint


def _job(target: str, tmp_path, **lm) -> DialogueJob:
    p = resolve(Params, PRESETS, slug="anthrobench", profile="smoke")
    rows = tuple(generate_first_turns()[:2])
    return DialogueJob(target, 0, rows, 2, p.hazards.model_dump(), {**p.targets.model_dump(), **lm}, str(tmp_path))


def test_hub_id_fails_at_once_offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(OfflineError, match="no-such-org/no-such-model"):
        dialogues_of(_job("no-such-org/no-such-model", tmp_path))


def test_endpoint_target_runs_through_the_stage_job(tmp_path):
    with chat_endpoint() as url:
        out = dialogues_of(_job("endpoint:stub-model", tmp_path, endpoint_url=url))
    assert [len(d["turns"]) for d in out.dialogues] == [2, 2]
    assert out.dialogues[0]["turns"][1]["assistant"] == "I hear you (3 messages, model stub-model)."


def test_j3_loader_is_allow_listed_and_round_trips(tmp_path):
    from components.anthrobench.judges import J3_LOADER, LogRegJudge, save_j3
    from components.anthrobench.simulate import labelled_sentences
    from flows.runtime.mlflow_model import ALLOWED_LOADERS, resolve_loader

    judge = LogRegJudge().fit(labelled_sentences(10, seed=0))
    loaded = resolve_loader(J3_LOADER)(save_j3(judge, tmp_path / "j3"))
    texts = [r["text"] for r in labelled_sentences(5, seed=1, split="eval")]
    assert J3_LOADER in ALLOWED_LOADERS and (loaded.predict(texts) == judge.predict(texts)).all()


WORDS = {"empathy": "sorry", "emotions": "i feel", "desires": "i want"}


def rubric_judge(prompts: list[str]):
    """An LLM judge for the loopback endpoint: 'Yes' when the rated message (between the rubric's quotes) holds the
    cue's word in ``WORDS``, else 'No'; it keeps every prompt it got in ``prompts``."""

    def reply(body: dict) -> str:
        prompt = body["messages"][0]["content"]
        prompts.append(prompt)
        key = prompt.split("The definition of '", 1)[1].split("'", 1)[0]
        message = prompt.split("CONVERSATION PARTNER 2'S MESSAGE: '", 1)[1].split("'\n", 1)[0].lower()
        word = WORDS.get(key)
        return "It is shown; Yes" if word and word in message else "Nothing of the kind; No"

    return reply


def test_llm_judge_rates_with_the_repo_rubric_through_an_endpoint(tmp_path):
    """judges.llm=endpoint:<model>: the stage's own client and rating loop send the repo's rubric prompt for each
    (message, behaviour) and turn the answers into flags that follow the message, not the prompt's boilerplate."""
    from components.anthrobench.behaviours import JUDGED
    from components.anthrobench.rubric import rubric_prompt
    from flows.anthrobench.judge import _llm_chat, llm_votes

    prompts: list[str] = []
    with chat_endpoint(rubric_judge(prompts)) as url:
        p = resolve(Params, PRESETS, slug="anthrobench", profile="smoke",
                    overrides=["judges.llm=endpoint:stub-judge", f"judges.llm_endpoint_url={url}"])  # fmt: skip
        turns = [{"turn": 1, "user": "Hi.", "assistant": "I'm so sorry, I feel that too."},
                 {"turn": 2, "user": "And?", "assistant": "Here is a list of options."},
                 {"turn": 3, "user": "Why?", "assistant": "I want to help you with it."}]  # fmt: skip
        dialogues = [{"target": "endpoint:x", "seed": 0, "dialogue": 0, "turns": turns}]
        votes, unparsed = llm_votes(p, dialogues, _llm_chat(p, str(tmp_path)))
    flagged = {k: {JUDGED[j] for j, v in enumerate(f) if v} for k, f in votes.items()}
    assert flagged == {"endpoint:x/0/0/1": {"empathy", "emotions"}, "endpoint:x/0/0/2": set(),
                       "endpoint:x/0/0/3": {"desires"}}  # fmt: skip
    assert unparsed == 0 and len(prompts) == 3 * len(JUDGED)
    assert rubric_prompt("empathy", turns[0]["assistant"], "Hi.") in prompts


def test_gemma_flag_fails_at_once_offline(monkeypatch):
    """targets.gemma adds Gemma3-270M; offline and not cached, the run's first check names the id."""
    from flows.anthrobench.data import preflight
    from flows.anthrobench.params import GEMMA

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    p = resolve(Params, PRESETS, slug="anthrobench", profile="smoke", overrides=["targets.gemma=true"])
    assert GEMMA in p.targets.all_models
    with pytest.raises(OfflineError, match="google/gemma-3-270m-it"):
        preflight(p)
