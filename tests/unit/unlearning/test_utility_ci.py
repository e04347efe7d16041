"""The paired bootstrap CI of a model-utility difference (components/unlearning/utility_ci.py)."""

from __future__ import annotations

import numpy as np
import pytest

from components.errors import DataError
from components.unlearning.metrics import model_utility
from components.unlearning.utility_ci import utility_difference_ci, utility_resampled


def _splits(rng, n=40, shift=0.0):
    return {
        s: {
            "prob": np.clip(rng.uniform(0.2, 0.8, n) + shift, 0.01, 1),
            "rouge": rng.uniform(0.1, 0.9, n),
            "tr": rng.uniform(0.3, 1.5, n),
        }
        for s in ("retain", "general")
    }


def test_the_identity_resample_gives_model_utility():
    d = _splits(np.random.default_rng(0))
    picks = {s: np.arange(40)[None, :] for s in d}
    assert utility_resampled(d, picks)[0] == pytest.approx(model_utility(d))


def test_a_model_against_itself_has_a_zero_difference_and_a_zero_width_ci():
    d = _splits(np.random.default_rng(1))
    pt, lo, hi, per_seed = utility_difference_ci([d, d], [d, d], n_resamples=200, level=0.95, seed=0)
    assert pt == lo == hi == 0.0 and per_seed == [0.0, 0.0]


def test_higher_answer_probabilities_give_a_ci_above_zero():
    rng = np.random.default_rng(2)
    base = [_splits(rng) for _ in range(2)]
    better = [{s: {**v, "prob": np.clip(v["prob"] + 0.15, 0, 1)} for s, v in b.items()} for b in base]
    pt, lo, hi, _ = utility_difference_ci(better, base, n_resamples=500, level=0.95, seed=0)
    assert 0 < lo <= pt <= hi


def test_models_scored_on_different_questions_are_an_error():
    rng = np.random.default_rng(3)
    with pytest.raises(DataError, match="different questions"):
        utility_difference_ci([_splits(rng, n=40)], [_splits(rng, n=30)], n_resamples=10, level=0.95, seed=0)


def test_resampling_seeds_widens_the_ci_when_seeds_disagree():
    """Clusters (two-stage: seeds, then questions): a seed-level effect that flips sign shows in the CI."""
    rng = np.random.default_rng(4)
    base = [_splits(rng) for _ in range(3)]
    shifts = (0.3, 0.3, -0.1)
    moved = [{s: {**v, "prob": np.clip(v["prob"] + d, 0.01, 1)} for s, v in b.items()} for b, d in zip(base, shifts)]
    pt, lo, hi, per_seed = utility_difference_ci(moved, base, n_resamples=2000, level=0.95, seed=0)
    pt2, lo2, hi2, per_seed2 = utility_difference_ci(
        moved, base, n_resamples=2000, level=0.95, seed=0, clusters=[0, 1, 2]
    )
    assert pt == pt2 and per_seed == per_seed2 and [np.sign(x) for x in per_seed] == [1, 1, -1]
    assert lo > 0  # seeds held fixed: the CI excludes 0
    assert lo2 < 0 < hi2 and hi2 - lo2 > 2 * (hi - lo)


def test_one_label_per_seed_is_required():
    d = _splits(np.random.default_rng(5))
    with pytest.raises(DataError, match="clusters"):
        utility_difference_ci([d, d], [d, d], n_resamples=10, level=0.95, seed=0, clusters=[0])


def test_a_simulated_run_keeps_the_run_s_seeds_with_new_seed_effects():
    """The power check's MU simulator: every seed of the run once (its own questions resampled, paired), moved
    to the seeds' mean plus a new seed effect; seeds are not redrawn with replacement."""
    from components.unlearning.utility_ci import simulated_seeds

    rng = np.random.default_rng(6)
    base = [_splits(rng) for _ in range(3)]
    method = [
        {s: {**v, "prob": np.clip(v["prob"] + d, 0.01, 1)} for s, v in b.items()} for b, d in zip(base, (0.0, 0.1, 0.2))
    ]
    diffs = np.array([model_utility(m) - model_utility(b) for m, b in zip(method, base)])
    offs = []
    for _ in range(400):
        dm, db, off = simulated_seeds(method, base, rng, seed_sd=0.05)
        assert len(dm) == 3
        for i in range(3):  # seed i's rows come from seed i, the same rows for both models
            assert set(dm[i]["retain"]["rouge"]) <= set(method[i]["retain"]["rouge"])
            assert np.array_equal(dm[i]["retain"]["rouge"], db[i]["retain"]["rouge"])  # paired
        offs.append(off)
    effects = np.array(offs) + diffs - diffs.mean()  # each seed's new effect around the seeds' mean
    assert abs(effects.mean()) < 0.01 and effects.std() == pytest.approx(0.05, rel=0.1)
    _, _, off0 = simulated_seeds(method, base, rng, seed_sd=0.0)
    assert np.allclose(off0, diffs.mean() - diffs)


def test_between_seed_variance_is_zero_for_copies_and_the_spread_of_planted_seed_effects():
    from components.unlearning.utility_ci import between_seed_variance

    rng = np.random.default_rng(7)
    b = _splits(rng, n=400)
    same = [b, b, b]
    assert between_seed_variance(same, same) == 0.0
    moved = [{s: {**v, "prob": np.clip(v["prob"] + d, 0.01, 1)} for s, v in b.items()} for d in (0.0, 0.1, 0.2)]
    diffs = [model_utility(m) - model_utility(b) for m in moved]
    assert between_seed_variance(moved, same) == pytest.approx(np.var(diffs, ddof=1), rel=0.05)


def test_offsets_need_one_value_per_seed():
    d = _splits(np.random.default_rng(8))
    with pytest.raises(DataError, match="offsets: 1 values but 2 seeds"):
        utility_difference_ci([d, d], [d, d], n_resamples=10, level=0.95, seed=0, offsets=[0.1])


def test_a_simulated_run_s_ci_holds_the_small_sample_interval_on_its_seeds(monkeypatch):
    """The power check decides each simulated run with the claim's own CI: the two-stage bootstrap widened to
    the hull with a t-interval (k - 1 df) on the run's per-seed MU differences. With seeds that differ a lot and
    few questions per seed, the t-interval is the wider, so the simulated CI is that interval exactly."""
    from scipy import stats as st

    import components.unlearning.utility_ci as U

    rng = np.random.default_rng(9)
    base = [_splits(rng) for _ in range(3)]
    method = [
        {s: {**v, "prob": np.clip(v["prob"] + d, 0.01, 1)} for s, v in b.items()} for b, d in zip(base, (0.0, 0.1, 0.3))
    ]
    drawn = []
    real = U.simulated_seeds

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        drawn.append(out)
        return out

    monkeypatch.setattr(U, "simulated_seeds", spy)
    simulate = U.utility_difference_simulator(method, base, n_resamples=400, level=0.95)
    for i in range(5):
        pt, lo, hi = simulate(np.random.default_rng(i))
        dm, db, off = drawn[-1]
        effects = np.array([model_utility(m) - model_utility(b) for m, b in zip(dm, db)]) + off
        half = st.t.ppf(0.975, 2) * effects.std(ddof=1) / np.sqrt(3)
        assert pt == pytest.approx(effects.mean())
        assert lo <= effects.mean() - half + 1e-12 and hi >= effects.mean() + half - 1e-12
