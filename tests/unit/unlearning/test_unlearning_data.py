"""Synthetic TOFU, the data suite (overlap, empty forget set), the TOFU loader, vocab checks and metrics."""

from pathlib import Path

import numpy as np
import pytest

from components.errors import DataError, OfflineError, ParamsError, ValidationFailed
from components.models.tiny_lm import TinyLM, TinyLMConfig
from components.training import qa_lm as lm
from components.training.tokenizer import load_bpe, train_bpe
from components.unlearning import metrics, tofu

FIXTURES = Path(__file__).parents[2] / "fixtures" / "ofmu"


def _rows(n_authors=6):
    return tofu.split_authors(tofu.make_authors(n_authors, 3, 2, 3, seed=0), 0.34, seed=0)


def test_synthetic_tofu_splits_by_author_with_paraphrased_and_perturbed_answers():
    rows = _rows()
    assert len(rows) == 6 * 3 * 2
    forget = {r["author"] for r in rows if r["split"] == "forget"}
    retain = {r["author"] for r in rows if r["split"] == "retain"}
    assert len(forget) == 2 and not forget & retain
    for r in rows:
        assert len(r["perturbed_answer"]) == 3 and r["paraphrased_answer"] not in r["perturbed_answer"]
        assert r["author"] in r["question"] and r["author"] in r["answer"]
    assert rows == _rows()  # seeded


def test_data_suite_detects_a_forget_set_that_overlaps_the_retain_set(tmp_path):
    from flows.ofmu.data import check_rows

    rows = _rows()
    leaked = {**next(r for r in rows if r["split"] == "forget"), "split": "retain", "id": "leak"}
    with pytest.raises(ValidationFailed, match="in_both_splits"):
        check_rows([*rows, leaked], result_path=tmp_path / "qa.json")
    check_rows(rows)  # the clean data passes


def test_empty_forget_set_is_refused():
    from flows.ofmu.data import check_rows

    with pytest.raises(DataError, match="forget set is empty"):
        check_rows([{**r, "split": "retain"} for r in _rows()])
    with pytest.raises(DataError, match="empty"):
        next(lm.batch_stream([], 4, 0, seed=0))


def test_tofu_loader_reads_local_files_in_tofu_format_and_refuses_the_hub_offline():
    rows = tofu.load_tofu(str(FIXTURES), "forget10", online=False)
    assert [r["split"] for r in rows] == ["forget", "forget", "retain"]
    assert rows[0]["perturbed_answer"][0].startswith("It was written by")
    with pytest.raises(OfflineError, match="PAPERLINE_ONLINE"):
        tofu.load_tofu("locuslab/TOFU", "forget10", online=False)
    with pytest.raises(DataError, match="missing column"):
        tofu.rows_from_tofu([{"question": "q"}], "forget", "x")


def test_checkpoint_whose_vocabulary_does_not_match_the_tokenizer_is_refused(tmp_path):
    rows = _rows()
    train_bpe([r["answer"] for r in rows] * 3, vocab_size=300, out_path=tmp_path / "tok.json")
    tok = load_bpe(tmp_path / "tok.json")
    good = TinyLM(TinyLMConfig(vocab_size=tok.get_vocab_size(), d_model=16, n_heads=2, d_ff=32))
    lm.check_vocab(good, tok)
    bad = TinyLM(TinyLMConfig(vocab_size=tok.get_vocab_size() + 7, d_model=16, n_heads=2, d_ff=32))
    with pytest.raises(DataError, match="vocab_size"):
        lm.check_vocab(bad, tok)


def test_collate_puts_the_loss_on_answer_tokens_only():
    x, y = lm.collate([([5, 6, 7, 8, 9], 3), ([5, 6, 7], 2)], pad=0)
    assert x.tolist() == [[5, 6, 7, 8], [5, 6, 0, 0]]
    assert y.tolist() == [[-100, -100, 8, 9], [-100, 7, -100, -100]]
    model = TinyLM(TinyLMConfig(vocab_size=16, d_model=16, n_heads=2, d_ff=32))
    assert lm.nll_per_example(model, (x, y)).shape == (2,)


def test_truth_ratio_rouge_and_forget_quality():
    tr = metrics.truth_ratio(np.array([0.1]), np.array([[1.0, 2.0]]))
    assert tr[0] == pytest.approx((np.exp(-1) + np.exp(-2)) / 2 / np.exp(-0.1))
    assert metrics.rouge_l_recall("Lima is where he was born", "He was born in Lima.") == pytest.approx(3 / 5)
    assert metrics.rouge_l_recall("", "He was born.") == 0.0
    a = np.linspace(0, 1, 50)
    assert metrics.forget_quality(a, a) == pytest.approx(1.0)
    assert metrics.forget_quality(a, a + 5) < 1e-6
    assert metrics.harmonic_mean([0.5, 0.0]) == 0.0
    assert metrics.harmonic_mean([0.5, 0.5]) == pytest.approx(0.5)


def test_model_utility_drops_when_retain_knowledge_is_lost():
    good = {"prob": np.full(5, 0.9), "rouge": np.full(5, 0.9), "tr": np.full(5, 0.2)}
    lost = {"prob": np.full(5, 0.1), "rouge": np.full(5, 0.2), "tr": np.full(5, 1.0)}
    assert metrics.model_utility({"retain": good, "general": good}) > metrics.model_utility(
        {"retain": lost, "general": good}
    )
    assert metrics.model_utility({"retain": lost, "general": good}) == 0.0  # max(0, 1 - R) = 0


def test_membership_attack_calls_high_loss_forget_samples_non_members():
    rng = np.random.default_rng(0)
    retain, test = rng.uniform(0.0, 0.1, 200), rng.uniform(1.0, 3.0, 200)
    assert metrics.mia_efficacy(retain, test, rng.uniform(1.5, 3.0, 50)) > 0.9
    assert metrics.mia_efficacy(retain, test, rng.uniform(0.0, 0.05, 50)) < 0.1


def test_vision_forget_scenarios():
    from components.unlearning import vision

    data = vision.load_digits_split(0.2, seed=0)
    mask = vision.forget_mask(data["y_train"], "class-3", seed=0)
    assert set(data["y_train"][mask]) == {3}
    rnd = vision.forget_mask(data["y_train"], "random", seed=0, frac=0.1)
    assert rnd.sum() == int(0.1 * len(rnd))
    with pytest.raises(DataError, match="scenario"):
        vision.forget_mask(data["y_train"], "blur", seed=0)


def test_params_refuse_a_zero_budget_and_a_budget_off_the_step_costs():
    from flows.ofmu.params import PRESETS, Params
    from flows.runtime.params import resolve

    with pytest.raises(ParamsError, match=r"ofmu\.unlearn\.budget"):
        resolve(Params, PRESETS, slug="ofmu", profile="smoke", overrides=["unlearn.budget=0"])
    with pytest.raises(ParamsError, match="not a multiple"):
        resolve(Params, PRESETS, slug="ofmu", profile="smoke", overrides=["unlearn.budget=21"])
    for profile in ("smoke", "default", "full"):
        resolve(Params, PRESETS, slug="ofmu", profile=profile)


def test_dev_authors_are_retain_authors_as_many_as_the_forget_authors(tmp_path):
    from flows.ofmu.data import check_rows

    rows = tofu.mark_dev(tofu.split_authors(tofu.make_authors(12, 2, 1, 3, seed=0), 0.25, seed=0), seed=0)
    dev = {r["author"] for r in rows if r["dev"]}
    forget = {r["author"] for r in rows if r["split"] == "forget"}
    assert len(dev) == len(forget) == 3 and not dev & forget
    assert all(r["split"] == "retain" for r in rows if r["dev"])
    check_rows(rows, result_path=tmp_path / "ok.json")
    bad = [{**r, "dev": True} if r["split"] == "forget" else r for r in rows]  # tuning must never see forget rows
    with pytest.raises(ValidationFailed):
        check_rows(bad, result_path=tmp_path / "bad.json")
