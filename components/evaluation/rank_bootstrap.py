"""A two-stage bootstrap of a Spearman-correlation gap, vectorised over resamples.

Two critics' Q estimates are ranked against Monte-Carlo returns on the same
trajectories; a resample draws seeds, then whole trajectories within each
drawn seed. Ranking every resample with ``rankdata`` would cost a sort per
resample; here the ranks of a resample follow from how often each trajectory
was drawn, as one matrix product (see ``_Ranker``), so 10,000 resamples of a
few thousand rows take seconds. Hand-written: scipy's bootstrap has no nested
resampling and no way to share one trajectory draw between two statistics.

:func:`spearman_gap_simulator` draws whole simulated runs of the same design for the power check
(:func:`components.evaluation.power.shifted_power`): a rank-correlation gap is not a mean of units, so no
effect can be planted unit by unit; each simulated run's gap and CI are recomputed and then shifted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.stats import rankdata

from components.evaluation.seed_ci import t_interval
from components.evaluation.stats import percentile_ci


def spearman(q: np.ndarray, g_rank: np.ndarray) -> float:
    """Spearman correlation of ``q`` with precomputed ranks ``g_rank`` (0 when undefined, e.g. constant q)."""
    r = rankdata(q)
    c = np.corrcoef(r, g_rank)[0, 1]
    return float(c) if np.isfinite(c) else 0.0


class _Ranker:
    """Mid-ranks of one fixed array when whole trajectories are drawn with replacement.

    A resample is given by how often each trajectory was drawn (``counts``, resamples x trajectories); the ranks
    equal ``rankdata`` of the array with each trajectory's rows repeated that often, computed as one matrix
    product with the per-trajectory counts of smaller and equal values (so many resamples are ranked at once).
    """

    def __init__(self, x: np.ndarray, traj: np.ndarray, n_traj: int):
        below = np.empty((n_traj, x.size))
        equal = np.empty((n_traj, x.size))
        for t in range(n_traj):
            xt = np.sort(x[traj == t])
            left = np.searchsorted(xt, x, side="left")
            below[t], equal[t] = left, np.searchsorted(xt, x, side="right") - left
        self.offset = (below + equal / 2.0).astype(np.float32)  # float32: ranks are exact half-integers

    def ranks(self, counts: np.ndarray) -> np.ndarray:
        return (counts.astype(np.float32) @ self.offset).astype(float) + 0.5


class _Moments:
    """Weighted sums of one rank matrix (the G ranks of a resample), reused by every critic compared with it."""

    def __init__(self, w: np.ndarray, r: np.ndarray):
        self.w, self.r, self.n = w, r, w.sum(axis=1)
        wr = w * r
        self.s, self.ss = wr.sum(axis=1), (wr * r).sum(axis=1)

    def corr(self, q: np.ndarray) -> np.ndarray:
        """Weighted Pearson correlation of rank matrix ``q`` with this one, row by row (0 where undefined)."""
        wq = self.w * q
        sq, sqq, sqr = wq.sum(axis=1), (wq * q).sum(axis=1), (wq * self.r).sum(axis=1)
        cov, vq, vr = sqr - sq * self.s / self.n, sqq - sq * sq / self.n, self.ss - self.s * self.s / self.n
        with np.errstate(invalid="ignore", divide="ignore"):
            c = cov / np.sqrt(vq * vr)
        return np.where(np.isfinite(c) & (vq > 1e-9 * np.maximum(sqq, 1.0)), c, 0.0)


def spearman_gap_samples(
    qa: list[np.ndarray],
    qb: list[np.ndarray],
    g: np.ndarray,
    episode: np.ndarray,
    *,
    n_resamples: int,
    seed: int,
    block: int = 200,
    offsets: Sequence[float] | np.ndarray | None = None,
) -> np.ndarray:
    """Two-stage bootstrap of mean over seeds of Spearman(qa_s, G) - Spearman(qb_s, G).

    Each resample draws the seeds with replacement, then, for each drawn seed, the dataset trajectories with
    replacement (one draw for that seed's ICQL and IQL critics, which are paired on the same trajectories).
    ``offsets[s]`` (default 0) is added to seed s's gap wherever it is drawn: a simulated run's seed effects.
    """
    _, traj = np.unique(episode, return_inverse=True)
    n_traj, n_seeds = int(traj.max()) + 1, len(qa)
    rg = _Ranker(g, traj, n_traj)
    ra, rb = [_Ranker(q, traj, n_traj) for q in qa], [_Ranker(q, traj, n_traj) for q in qb]
    add = np.zeros(n_seeds) if offsets is None else np.asarray(offsets, dtype=float)
    if add.shape != (n_seeds,):
        raise ValueError(f"offsets: expected {n_seeds} values (one per seed), got shape {add.shape}")
    rng = np.random.default_rng(seed)
    out = np.zeros(n_resamples)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        drawn = rng.integers(0, n_seeds, size=(rows, n_seeds))
        total = np.zeros(rows)
        for j in range(n_seeds):
            picks = rng.integers(0, n_traj, size=(rows, n_traj))
            counts = (picks[:, :, None] == np.arange(n_traj)).sum(axis=1).astype(float)
            w, gr = counts[:, traj], rg.ranks(counts)
            for s in range(n_seeds):
                m = drawn[:, j] == s
                if m.any():
                    c, mom = counts[m], _Moments(w[m], gr[m])
                    total[m] += mom.corr(ra[s].ranks(c)) - mom.corr(rb[s].ranks(c)) + add[s]
        out[start : start + rows] = total / n_seeds
    return out


def spearman_gaps(qa: Sequence[np.ndarray], qb: Sequence[np.ndarray], g: np.ndarray) -> np.ndarray:
    """Per seed: Spearman(qa_s, G) - Spearman(qb_s, G) on the given rows."""
    g_rank = rankdata(g)
    return np.array([spearman(a, g_rank) - spearman(b, g_rank) for a, b in zip(qa, qb)], dtype=float)


def spearman_gap_simulator(
    qa: Sequence[np.ndarray],
    qb: Sequence[np.ndarray],
    g: np.ndarray,
    episode: np.ndarray,
    *,
    n_resamples: int,
    level: float,
    n_spread: int = 200,
    seed: int = 0,
) -> Callable[[np.random.Generator], tuple[float, float, float]]:
    """One simulated run of the Spearman-gap claim per call (for ``shifted_power``): (gap, CI low, CI high).

    A simulated run draws the dataset's trajectories with replacement (one draw for every seed: in the run all
    critics are scored on the same trajectories), recomputes each seed's gap on them, and gives every seed a
    new seed effect: seed s's value is the run's mean gap plus its own resampling error plus N(0, sd^2), where
    sd is the between-seed spread (the variance of the run's per-seed gaps less the part that trajectory
    resampling explains, estimated on ``n_spread`` shared draws; 0 with one seed), as
    :func:`components.evaluation.power.simulated_units` does for a mean. Its CI is the claim's: the two-stage
    bootstrap (``n_resamples``) with those seed effects, and with two or more seeds the hull with a t-interval
    on the per-seed values. The spread is estimated lazily (on the first call) and kept in ``simulate.spread``.
    """
    qa = [np.asarray(q, dtype=float) for q in qa]
    qb = [np.asarray(q, dtype=float) for q in qb]
    g, episode = np.asarray(g, dtype=float), np.asarray(episode)
    if len(qa) != len(qb) or not qa:
        raise ValueError(f"qa and qb: one critic per seed on each side, got {len(qa)} and {len(qb)}")
    _, traj = np.unique(episode, return_inverse=True)
    n_traj, k = int(traj.max()) + 1, len(qa)
    rows_of = [np.flatnonzero(traj == t) for t in range(n_traj)]
    observed = spearman_gaps(qa, qb, g)

    def draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        picks = rng.integers(0, n_traj, size=n_traj)
        rows = np.concatenate([rows_of[t] for t in picks])
        labels = np.repeat(np.arange(n_traj), [rows_of[t].size for t in picks])  # a trajectory drawn twice: 2 units
        return rows, labels

    spread: dict[str, float] = {}

    def seed_sd() -> float:
        if "sd" not in spread:
            noise = 0.0
            if k > 1:
                rng = np.random.default_rng(seed)
                errors = []
                for _ in range(n_spread):
                    rows, _ = draw(rng)
                    errors.append(spearman_gaps([q[rows] for q in qa], [q[rows] for q in qb], g[rows]) - observed)
                noise = float(np.mean(np.var(errors, axis=1, ddof=1)))
            between = float(np.var(observed, ddof=1)) - noise if k > 1 else 0.0
            spread.update(sd=float(np.sqrt(max(between, 0.0))), resampling_var=noise)
        return spread["sd"]

    def simulate(rng: np.random.Generator) -> tuple[float, float, float]:
        sd = seed_sd()
        rows, labels = draw(rng)
        sa, sb, sg = [q[rows] for q in qa], [q[rows] for q in qb], g[rows]
        redrawn = spearman_gaps(sa, sb, sg)
        values = redrawn - observed + observed.mean() + sd * rng.standard_normal(k)
        boots = spearman_gap_samples(
            sa, sb, sg, labels, n_resamples=n_resamples, seed=int(rng.integers(1 << 31)), offsets=values - redrawn
        )
        lo, hi = percentile_ci(boots, level)
        small = t_interval(values, level) if k > 1 else None
        if small is not None:
            lo, hi = min(lo, small[0]), max(hi, small[1])
        return float(values.mean()), float(lo), float(hi)

    simulate.spread = spread  # type: ignore[attr-defined]
    return simulate
