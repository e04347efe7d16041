"""Known answers and sabotage checks for QualityPajama's methods (dedup, filters, scaling fit, allocation).

Fixture (built here, seeded): 90 natural prose documents (30 random sentences each; 10 of them are
heavily rewritten relatives of others, Jaccard far below 0.7, which must *not* be removed), into which the
pipeline's own ``inject_noise`` plants 22 near-copies (1-2% of words edited: true duplicates at threshold
0.7) and 22 junk documents of all five ``JUNK_KINDS``.

- MinHash-LSH dedup at 0.7 (the default intervention): precision and recall >= 0.95 on the planted copies
  (measured 1.0 / 1.0, both backends), F1 at least 0.5 above a random remover of as many documents
  (measured 0.32).
- The Gopher filters (the pipeline's default filter set): precision and recall >= 0.95 on the planted junk
  (measured 1.0 / 1.0), precision at least 0.5 above a random dropper of as many documents.
- The approach-3 fit on a synthetic law (A 400, B 2000, E 1.8, alpha 0.34, beta 0.28, 6 x 6 grid, 0.5%
  log-normal noise): alpha and beta within 0.03 (measured errors 0.010, 0.003), E within 10%, where
  log-log least squares without E misses them by more than 0.1.
- Compute-optimal allocation from that fit: N_opt within 10% of the brute-force optimum of the true law at
  C = 1e18 and 1e21, and d log N_opt / d log C within 0.02 of beta / (alpha + beta); the Chinchilla
  rule of thumb D = 20 N misses N_opt by more than 2x.

Sabotage: random or constant MinHash signatures, an inverted verification threshold, an inverted Gopher rule,
a shuffled loss column inside the fitter, swapped exponents in the allocation; each must fail its check.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from components.data.corpus import JUNK_KINDS, inject_noise, near_copy
from components.data.dedup import DedupResult, minhash_dedup, minhash_numpy, score_dedup
from components.data.filters import (
    Decision,
    FilterResult,
    GopherQuality,
    GopherRepetition,
    apply_filters,
    get_rules,
    score_filters,
)
from components.scaling import allocation, chinchilla
from components.scaling.chinchilla import default_grid, fit_chinchilla

ADJ = ["quiet", "bright", "old", "young", "heavy", "gentle", "dark", "narrow", "broad", "ancient", "modern", "small"]
NOUN = [
    "river",
    "stone",
    "garden",
    "window",
    "letter",
    "market",
    "bridge",
    "forest",
    "harbour",
    "village",
    "teacher",
    "doctor",
    "farmer",
    "sailor",
    "painter",
    "singer",
    "road",
    "tower",
    "field",
    "lamp",
]
VERB = ["carried", "opened", "closed", "found", "kept", "gave", "watched", "followed", "painted", "crossed"]


def _sentence(r: random.Random) -> str:
    return (
        f"The {r.choice(ADJ)} {r.choice(NOUN)} {r.choice(VERB)} the {r.choice(NOUN)} of {r.choice(NOUN)}"
        f"{r.randint(1, 999)} and {r.choice(NOUN)}{r.randint(1, 999)} with the {r.choice(ADJ)} {r.choice(NOUN)}."
    )


def _prose(seed: int, n_sentences: int = 30) -> str:
    r = random.Random(seed)
    return " ".join(_sentence(r) for _ in range(n_sentences))


@pytest.fixture(scope="module")
def corpus() -> list[dict]:
    natural = [{"id": f"n{i}", "source": "prose", "title": f"t{i}", "text": _prose(i)} for i in range(80)]
    r = random.Random(7)
    far = [
        {"id": f"far{i}", "source": "prose", "title": "far", "text": near_copy(natural[i]["text"], 0.5, r)}
        for i in range(10)
    ]  # relatives, not duplicates: removing one is a false positive
    docs = inject_noise(natural + far, near_dup_frac=0.25, junk_frac=0.25, seed=0, edit_rate=(0.01, 0.02))
    assert sum(d["label"] == "near_dup" for d in docs) == 22 and sum(d["label"] == "junk" for d in docs) == 22
    return docs


def _random_ids(docs: list[dict], k: int, seed: int = 1) -> list[str]:
    return random.Random(seed).sample([d["id"] for d in docs], k)


# -- MinHash dedup --------------------------------------------------------------------------------------------


def dedup_known_answer(docs: list[dict], backend: str = "numpy") -> tuple[bool, str]:
    result = minhash_dedup(docs, threshold=0.7, backend=backend)
    got = score_dedup(result, docs)
    rand = score_dedup(DedupResult([], [], _random_ids(docs, max(1, len(result.removed_ids)))), docs)
    ok = got["precision"] >= 0.95 and got["recall"] >= 0.95 and got["f1"] >= rand["f1"] + 0.5
    return ok, f"minhash {got}, random remover {rand}"


@pytest.mark.parametrize("backend", ["numpy", "datasketch"])
def test_minhash_finds_the_planted_near_copies_and_beats_a_random_remover(corpus, backend):
    if backend == "datasketch":
        pytest.importorskip("datasketch")
    ok, msg = dedup_known_answer(corpus, backend)
    assert ok, msg


def _random_signatures(texts, *, num_perm, **kw):
    return np.random.default_rng(0).integers(0, 2**32 - 1, (len(texts), num_perm), dtype=np.uint32)


def _constant_signatures(texts, *, num_perm, **kw):
    return np.zeros((len(texts), num_perm), dtype=np.uint32)


def _inverted_verification(sig, pairs, threshold, chunk=1 << 15):
    keep = (sig[pairs[:, 0]] == sig[pairs[:, 1]]).mean(axis=1) < threshold
    return pairs[keep]


@pytest.mark.parametrize(
    "attr,fake",
    [
        ("signatures", _random_signatures),
        ("signatures", _constant_signatures),
        ("verify_pairs", _inverted_verification),
    ],
    ids=["random-signatures", "constant-signatures", "inverted-threshold"],
)
def test_sabotaged_minhash_fails_the_dedup_known_answer(corpus, monkeypatch, attr, fake):
    monkeypatch.setattr(minhash_numpy, attr, fake)
    ok, msg = dedup_known_answer(corpus)
    assert not ok, f"sabotage {fake.__name__} went unnoticed: {msg}"


# -- heuristic filters ----------------------------------------------------------------------------------------


def filter_known_answer(docs: list[dict]) -> tuple[bool, str]:
    result = apply_filters(docs, get_rules(["gopher"]))
    got = score_filters(result, docs)
    drop = set(_random_ids(docs, max(1, len(result.dropped))))
    rand = score_filters(
        FilterResult([d for d in docs if d["id"] not in drop], [d for d in docs if d["id"] in drop]), docs
    )
    kinds = {d["junk_kind"] for d in result.dropped if d["label"] == "junk"}
    ok = (
        got["precision"] >= 0.95
        and got["recall"] >= 0.95
        and kinds == set(JUNK_KINDS)
        and got["precision"] >= rand["precision"] + 0.5
    )
    return ok, (
        f"gopher P {got['precision']:.3f} R {got['recall']:.3f} kinds {sorted(kinds)}; random P {rand['precision']:.3f}"
    )


def test_gopher_filters_drop_the_planted_junk_and_beat_a_random_dropper(corpus):
    ok, msg = filter_known_answer(corpus)
    assert ok, msg


@pytest.mark.parametrize("rule", [GopherQuality, GopherRepetition], ids=lambda r: r.name)
def test_an_inverted_gopher_rule_fails_the_filter_known_answer(corpus, monkeypatch, rule):
    original = rule.check_text

    def inverted(self, text):
        d = original(self, text)
        return Decision(True) if not d.keep else Decision(False, "inverted")

    monkeypatch.setattr(rule, "check_text", inverted)
    ok, msg = filter_known_answer(corpus)
    assert not ok, f"inverting {rule.name} went unnoticed: {msg}"


# -- scaling-law fit and compute-optimal allocation -----------------------------------------------------------

TRUTH = SimpleNamespace(A=400.0, B=2000.0, E=1.8, alpha=0.34, beta=0.28)
GRID = default_grid()[::30]  # 150 of Epoch's 4,500 starts keep the test fast


def synthetic_law(noise: float = 0.005, seed: int = 0):
    n, d = (x.ravel() for x in np.meshgrid(np.geomspace(1e6, 1e9, 6), np.geomspace(1e8, 1e11, 6)))
    loss = TRUTH.E + TRUTH.A / n**TRUTH.alpha + TRUTH.B / d**TRUTH.beta
    return n, d, loss * np.exp(noise * np.random.default_rng(seed).standard_normal(loss.size))


def fit_known_answer() -> tuple[bool, str, object]:
    n, d, loss = synthetic_law()
    fit = fit_chinchilla(n, d, loss, grid=GRID, polish_top=1)
    ols = np.linalg.lstsq(np.c_[np.ones_like(n), np.log(n), np.log(d)], np.log(loss), rcond=None)[0]
    err = (abs(fit.alpha - TRUTH.alpha), abs(fit.beta - TRUTH.beta))
    base_err = (abs(-ols[1] - TRUTH.alpha), abs(-ols[2] - TRUTH.beta))
    ok = max(err) <= 0.03 and abs(fit.E / TRUTH.E - 1) <= 0.10 and min(base_err) > 0.1
    return ok, f"fit {fit.to_dict()}, exponent errors {err}, log-log OLS errors {base_err}", fit


@pytest.fixture(scope="module")
def fitted():
    ok, msg, fit = fit_known_answer()
    return ok, msg, fit


def test_the_fitter_recovers_the_exponents_of_a_synthetic_law(fitted):
    ok, msg, _ = fitted
    assert ok, msg


def test_a_fitter_that_shuffles_its_loss_column_fails_the_fit_known_answer(monkeypatch):
    original = chinchilla.validate_arrays

    def shuffled(N, D, L):
        n, d, loss = original(N, D, L)
        return n, d, np.random.default_rng(0).permutation(loss)

    monkeypatch.setattr(chinchilla, "validate_arrays", shuffled)
    ok, msg, _ = fit_known_answer()
    assert not ok, f"shuffled loss column went unnoticed: {msg}"


def brute_force_n_opt(law, c: float) -> float:
    """argmin over N of the law's loss on C = 6 N D, by bounded scalar search in log N."""
    k = c / 6.0
    res = minimize_scalar(
        lambda u: law.A * np.exp(-law.alpha * u) + law.B * (k / np.exp(u)) ** -law.beta,
        bounds=(np.log(1e2), np.log(k / 1e2)),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return float(np.exp(res.x))


def allocation_known_answer(fit) -> tuple[bool, str]:
    budgets = (1e18, 1e21)
    n_fit = [allocation.compute_optimal(fit, c)[0] for c in budgets]
    n_true = [brute_force_n_opt(TRUTH, c) for c in budgets]
    n_rule = [np.sqrt(c / (6 * 20)) for c in budgets]  # Chinchilla's rule of thumb D = 20 N
    slope = np.diff(np.log(n_fit))[0] / np.diff(np.log(budgets))[0]
    want = TRUTH.beta / (TRUTH.alpha + TRUTH.beta)
    ok = (
        all(abs(a / b - 1) <= 0.10 for a, b in zip(n_fit, n_true))
        and abs(slope - want) <= 0.02
        and all(max(a / b, b / a) > 2 for a, b in zip(n_rule, n_true))
    )
    return ok, f"N_opt fit {n_fit}, truth {n_true}, D=20N {n_rule}; slope {slope:.4f} vs {want:.4f}"


def test_the_compute_optimal_allocation_follows_from_the_fit(fitted):
    ok, msg = allocation_known_answer(fitted[2])
    assert ok, msg


def test_an_allocation_with_swapped_exponents_fails_the_allocation_known_answer(fitted, monkeypatch):
    original = allocation.compute_optimal

    def swapped(fit, C):
        return original(SimpleNamespace(A=fit.A, B=fit.B, E=fit.E, alpha=fit.beta, beta=fit.alpha), C)

    monkeypatch.setattr(allocation, "compute_optimal", swapped)
    ok, msg = allocation_known_answer(fitted[2])
    assert not ok, f"swapped exponents went unnoticed: {msg}"
