"""AnthroBench's champion (J3 of the first seed) for the recurring evaluation: the logged folder loads back through
the allow-listed loader to the same votes and metrics, a fitted J3 scores far above a broken one, and the
recurring rule flags the broken one as a regression."""

from __future__ import annotations

import numpy as np
import pytest

from components.anthrobench.judges import LogRegJudge, save_j3
from components.anthrobench.simulate import labelled_sentences
from flows.anthrobench import champion
from flows.anthrobench.params import PRESETS, Params
from flows.runtime.mlflow_model import ALLOWED_LOADERS, resolve_loader
from flows.runtime.params import resolve

SETTINGS = {"n_per_behaviour": 20, "seed": champion.EVAL_SEED}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    j3 = LogRegJudge(C=1.0, seed=0).fit(labelled_sentences(20, seed=10_000, split="train"))
    return j3, save_j3(j3, tmp_path_factory.mktemp("j3") / "seed-0")


def test_loader_round_trips_the_folder_and_the_metrics(saved, tmp_path):
    j3, folder = saved
    assert champion.LOADER in ALLOWED_LOADERS
    loaded = resolve_loader(champion.LOADER)(folder)
    texts = [r["text"] for r in labelled_sentences(5, seed=1, split="eval")]
    assert np.array_equal(loaded.predict(texts), j3.predict(texts))
    got = champion.evaluate(loaded, SETTINGS, tmp_path)
    assert got == champion.evaluate(j3, SETTINGS, tmp_path) and set(got) == set(champion.RULES)
    assert got["f1_train_bank"] > 0.8 and got["f1_eval_bank"] > 0.3  # unseen phrasings are harder, not hopeless


def test_a_broken_j3_scores_clearly_worse_and_is_a_regression(saved, tmp_path):
    _, folder = saved
    good = champion.evaluate(resolve_loader(champion.LOADER)(folder), SETTINGS, tmp_path)
    shuffled = resolve_loader(champion.LOADER)(folder)  # coefficients moved to the wrong behaviours
    shuffled.coef = np.roll(shuffled.coef, 1, axis=0)
    bad = champion.evaluate(shuffled, SETTINGS, tmp_path)
    for metric, rule in champion.RULES.items():
        assert bad[metric] < good[metric] - 0.3, (metric, bad, good)
        assert rule.higher_is_better and bad[metric] < good[metric] - rule.tolerance  # the recurring rule fires


def test_the_champion_is_the_first_seed():
    p = resolve(Params, PRESETS, slug="anthrobench", profile="smoke")
    assert champion.choose(p) == p.data.seeds[0]
    assert champion.settings_for(p)["seed"] == champion.EVAL_SEED
