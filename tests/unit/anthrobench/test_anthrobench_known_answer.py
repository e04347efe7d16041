"""Known answers for AnthroBench's aggregation and judge ensemble, with the sabotages a reviewer would try.

The simulator chatbot plants behaviours with known hazards. With six behaviours whose hazard rises with the turn
(and an early, flat hazard for the rest) the late-onset count must be the planted six, its bootstrap CI must hold
six, and the snowball must carry the planted sign; with flat hazards there is no late onset. Shuffling the turn
order within dialogues, or judges that ignore the message, must break these checks (asserted here too).
"""

from __future__ import annotations

import numpy as np
import pytest

from components.anthrobench import aggregate as A
from components.anthrobench import behaviours as B
from components.anthrobench import evaluate as E
from components.anthrobench.judges import f1, majority
from components.anthrobench.simulate import Hazards
from components.retrieval.embed import make_embedder

N = 200


@pytest.fixture(scope="module")
def planted():
    return E.simulate(E.planted_hazards(), N, seed=0)


@pytest.fixture(scope="module")
def sparse():
    """Behaviours at about 18% of messages: a fixture where flagging everything scores an F1 near 0.3."""
    return E.simulate(E.flat_hazards(-1.5), N, seed=4)


@pytest.fixture(scope="module")
def judges():
    return E.fit_judges(make_embedder("tfidf"), seed=0)


def _count_ci(labels: np.ndarray, n_resamples: int = 300) -> tuple[float, float]:
    idx = A.two_stage_indices(np.zeros(len(labels)), n_resamples, seed=3)
    counts = [A.late_onset_count(labels[i]) for i in idx]
    return float(np.percentile(counts, 2.5)), float(np.percentile(counts, 97.5))


def _recovers_planted(labels: np.ndarray) -> bool:
    lo, hi = _count_ci(labels)
    late = A.late_onset_share(labels)
    planted_idx = [B.BEHAVIOURS.index(b) for b in E.PLANTED_LATE]
    return (
        A.late_onset_count(labels) == len(E.PLANTED_LATE)
        and lo <= len(E.PLANTED_LATE) <= hi
        and bool(np.all(late[planted_idx] >= 0.9))
    )


def _shuffled(labels: np.ndarray, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([d[rng.permutation(d.shape[0])] for d in labels])


def test_planted_late_onsets_are_recovered(planted):
    labels = E.truth_tensor(planted)
    assert _recovers_planted(labels)
    profile = A.turn_profile(labels)
    for b in E.PLANTED_LATE:  # prevalence rises with the turn, as planted
        k = B.BEHAVIOURS.index(b)
        assert profile[-1, k] - profile[0, k] > 0.7


def test_sabotage_shuffled_turn_order_is_caught(planted):
    labels = _shuffled(E.truth_tensor(planted))
    assert not _recovers_planted(labels)
    assert A.late_onset_count(labels) < len(E.PLANTED_LATE) - 2


def test_flat_hazards_give_no_late_onset():
    labels = E.truth_tensor(E.simulate(E.flat_hazards(1.0), N, seed=1))
    assert A.late_onset_count(labels) == 0
    assert _count_ci(labels)[1] < 1
    profile = A.turn_profile(labels)[:, :13]
    assert np.abs(profile[-1] - profile[0]).max() < 0.2  # no trend (planted late ones rise by > 0.7)


@pytest.mark.parametrize("kappa", [2.0, -2.0])
def test_snowball_has_the_planted_sign(kappa):
    labels = E.truth_tensor(E.simulate(Hazards.build(-1.0, 0.0, kappa), N, seed=2))
    s = A.snowball(labels)[:13]
    assert np.all(np.sign(s) == np.sign(kappa)) and abs(float(np.mean(s))) > 0.08


def test_judge_majority_recovers_the_truth(planted, sparse, judges):
    truth = E.truth_tensor(sparse).reshape(-1, len(B.BEHAVIOURS))
    votes = E.judge(judges, sparse)
    t = truth[:, :13]
    base = t.mean()
    trivial = max(2 * base / (1 + base), f1(t, np.random.default_rng(0).random(t.shape) < base))
    assert f1(t, votes["majority"]) > trivial + 0.3
    assert np.array_equal(votes["pronoun"], truth[:, -1])  # pronoun use: the regex is the truth
    judged = E.judge(judges, planted)
    labels = E.to_tensor(judged["majority"], judged["pronoun"], len(planted))
    assert abs(A.late_onset_count(labels) - len(E.PLANTED_LATE)) <= 1  # judge misses can shift one behaviour


def test_sabotage_judges_that_ignore_the_message_are_caught(sparse, judges):
    truth = E.truth_tensor(sparse).reshape(-1, len(B.BEHAVIOURS))[:, :13]
    honest = f1(truth, E.judge(judges, sparse)["majority"])
    rng = np.random.default_rng(1)
    blind = [np.tile((rng.random(13) < 0.5).astype(int), (len(truth), 1)) for _ in range(3)]  # message unseen
    assert f1(truth, majority(blind)) < honest - 0.3
    shuffled_texts = [{"turns": [{"assistant": t} for t in rng.permutation(E.messages(sparse))]}]
    assert f1(truth, E.judge(judges, shuffled_texts)["majority"]) < honest - 0.3  # votes not about this message
