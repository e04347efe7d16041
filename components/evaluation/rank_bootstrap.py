"""A two-stage bootstrap of a Spearman-correlation gap, vectorised over resamples.

Two critics' Q estimates are ranked against Monte-Carlo returns on the same
trajectories; a resample draws seeds, then whole trajectories within each
drawn seed. Ranking every resample with ``rankdata`` would cost a sort per
resample; here the ranks of a resample follow from how often each trajectory
was drawn, as one matrix product (see ``_Ranker``), so 10,000 resamples of a
few thousand rows take seconds. Hand-written: scipy's bootstrap has no nested
resampling and no way to share one trajectory draw between two statistics.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


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
) -> np.ndarray:
    """Two-stage bootstrap of mean over seeds of Spearman(qa_s, G) - Spearman(qb_s, G).

    Each resample draws the seeds with replacement, then, for each drawn seed, the dataset trajectories with
    replacement (one draw for that seed's ICQL and IQL critics, which are paired on the same trajectories).
    """
    _, traj = np.unique(episode, return_inverse=True)
    n_traj, n_seeds = int(traj.max()) + 1, len(qa)
    rg = _Ranker(g, traj, n_traj)
    ra, rb = [_Ranker(q, traj, n_traj) for q in qa], [_Ranker(q, traj, n_traj) for q in qb]
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
                    total[m] += mom.corr(ra[s].ranks(c)) - mom.corr(rb[s].ranks(c))
        out[start : start + rows] = total / n_seeds
    return out
