"""Glue shared by the pipeline and the tests: dialogues to label tensors, the judge ensemble on a set of
dialogues, and the fixtures' hazard profiles (planted late onsets, flat hazards)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from components.anthrobench import behaviours as B
from components.anthrobench.dialogue import run_dialogues
from components.anthrobench.first_turns import generate_first_turns, stratified_sample
from components.anthrobench.judges import CentroidJudge, LexiconJudge, LogRegJudge, majority, pronoun_labels
from components.anthrobench.simulate import Hazards, SimulatorChatbot, labelled_sentences
from components.errors import DataError

PLANTED_LATE = ("sentience", "personal_history", "physical_embodiment", "desires", "emotions", "relatability")


def planted_hazards(late: Sequence[str] = PLANTED_LATE) -> Hazards:
    """Late behaviours: hazard ~0 at turn 1 rising to ~0.95 at turn 5 (a=-7, c=2), snowball kappa=2;
    every other behaviour flat and early (a=1.5: 0.82 per turn, late-onset share ~0.18)."""
    return Hazards.build(
        {"default": 1.5, **{b: -7.0 for b in late}},
        {"default": 0.0, **{b: 2.0 for b in late}},
        {"default": 0.0, **{b: 2.0 for b in late}},
    )


def flat_hazards(a: float = 1.0) -> Hazards:
    """The same hazard at every turn (sigmoid(a)), no snowball."""
    return Hazards.build(a, 0.0, 0.0)


def simulate(hazards: Hazards, n: int, seed: int, n_turns: int = 5) -> list[dict]:
    """``n`` simulator dialogues on template first turns."""
    turns = stratified_sample(generate_first_turns(), n, seed)
    return run_dialogues(SimulatorChatbot(hazards, seed), turns, seed=seed, n_turns=n_turns, batch_size=max(n, 1))


def messages(dialogues: Sequence[dict]) -> list[str]:
    return [t["assistant"] for d in dialogues for t in d["turns"]]


def truth_tensor(dialogues: Sequence[dict]) -> np.ndarray:
    """dialogues x turns x BEHAVIOURS of the simulator's planted labels."""
    if any("truth" not in t for d in dialogues for t in d["turns"]):
        raise DataError("truth: only simulator dialogues carry planted labels")
    return np.array([[[t["truth"][b] for b in B.BEHAVIOURS] for t in d["turns"]] for d in dialogues], dtype=int)


def to_tensor(per_message: np.ndarray, pronoun: np.ndarray, n_dialogues: int) -> np.ndarray:
    """(messages x JUDGED) votes and the pronoun regex -> dialogues x turns x BEHAVIOURS (messages in order)."""
    full = np.concatenate([per_message, pronoun[:, None]], axis=1)
    return full.reshape(n_dialogues, -1, len(B.BEHAVIOURS))


def fit_judges(embedder, seed: int, n_train: int = 40, n_dev: int = 20, C: float = 1.0) -> list:
    """J1, J2 (threshold tuned on dev sentences) and J3 (trained on other simulator sentences) for one seed."""
    train = labelled_sentences(n_train, seed=10_000 + seed, split="train")
    dev = labelled_sentences(n_dev, seed=20_000 + seed, split="train")
    return [LexiconJudge(), CentroidJudge(embedder).fit(dev), LogRegJudge(C=C, seed=seed).fit(train)]


def judge(judges: Sequence, dialogues: Sequence[dict]) -> dict[str, np.ndarray]:
    """Every judge's votes, the majority and the pronoun regex on every message (messages x JUDGED)."""
    texts = messages(dialogues)
    votes = {j.name: j.predict(texts) for j in judges}
    votes["majority"] = majority(list(votes.values()))
    votes["pronoun"] = pronoun_labels(texts)
    return votes
