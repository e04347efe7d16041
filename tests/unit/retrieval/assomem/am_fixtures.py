"""Hand-built memories for AssoMem's released-code fusion tests (seeded random unit vectors, one clue per question).

``tied``: per question, 3 gold and 3 distractor utterances at exactly cos 0.5 to the query (relevance cannot tell
them apart, the card's similarity-dense case) plus 8 fillers at cos ~0.1. ``assoc`` memory: the 3 gold are
near-duplicates of each other (cos ~0.95, so the graph links them), the distractors are not linked, every
utterance is 100 days old; only PageRank separates gold from distractors. ``recent`` memory: gold are 1-2 days old,
distractors 30-60 days, fillers 30-300; only time separates them.

``hub``: per question, 3 gold at cos ~0.8 to the query, a hub at cos 0.7 that 12 "echo" utterances (cos ~0.57 to the
query, ~0.82 to the hub, ~0.67 to each other) link to, and 6 fillers. Relevance ranks the gold first; PageRank puts
the hub first (every echo's mass flows to it) and ranks the gold among the top third (they share the hub's topic),
so at the 3-bin resolution I carries the same information as R.
"""

from __future__ import annotations

import numpy as np

D, NOW = 64, 1000.0


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


class _Builder:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.utts, self.ages, self.clue, self.queries, self.gold, self.types = [], [], [], [], [], []

    def rv(self, *shape):
        return _unit(self.rng.normal(size=(*shape, D)))

    def ortho(self, a, v):
        """v with its component along a removed, unit norm."""
        v = v - np.outer(v @ a, a) if v.ndim == 2 else v - (v @ a) * a
        return _unit(v)

    def add(self, vecs, ages) -> list[int]:
        start = len(self.utts)
        self.utts.extend(np.atleast_2d(vecs))
        self.ages.extend(np.atleast_1d(ages))
        self.clue.extend([len(self.queries)] * (len(self.utts) - start))
        return list(range(start, len(self.utts)))

    def done(self, q, gold, qtype) -> None:
        self.queries.append(q), self.gold.append(gold), self.types.append(qtype)

    def memory(self) -> dict:
        utts, clue = np.asarray(self.utts, np.float32), np.asarray(self.clue)
        n_clue = len(self.queries)
        clue_embs = _unit(np.stack([utts[clue == c].mean(0) for c in range(n_clue)])).astype(np.float32)
        return {
            "utts": utts,
            "times": NOW - np.asarray(self.ages, float),
            "clue": clue,
            "clue_embs": clue_embs,
            "q": np.asarray(self.queries, np.float32),
            "gold": self.gold,
            "types": self.types,
            "calibration": np.arange(n_clue) % 2 == 0,
        }


def tied(kind: str, seed: int = 0, n_questions: int = 24) -> dict:
    """A ``tied`` memory whose questions are all of ``kind`` ("assoc" or "recent")."""
    b = _Builder(seed)
    for _ in range(n_questions):
        a = b.rv()
        if kind == "assoc":
            parts_g = b.ortho(a, b.rv() + 0.25 * b.rv(3))
            ages_g = ages_d = ages_f = np.full(3, 100.0)  # one age for all: time cannot separate anything
        else:
            parts_g = b.ortho(a, b.rv(3))
            ages_g, ages_d, ages_f = b.rng.uniform(1, 2, 3), b.rng.uniform(30, 60, 3), b.rng.uniform(30, 300, 8)
        g = b.add(0.5 * a + np.sqrt(0.75) * parts_g, ages_g)
        b.add(0.5 * a + np.sqrt(0.75) * b.ortho(a, b.rv(3)), ages_d)
        b.add(_unit(0.1 * a + b.ortho(a, b.rv(8))), np.resize(ages_f, 8))
        b.done(a, g, kind)
    return b.memory()


def hub(seed: int = 0, n_questions: int = 24) -> dict:
    b = _Builder(seed)
    for _ in range(n_questions):
        a, t = b.rv(), b.rv()
        t = b.ortho(a, t)
        h = _unit(0.7 * a + np.sqrt(1 - 0.49) * t)
        g = b.add(_unit(0.8 * a + 0.55 * t + 0.2 * b.ortho(a, b.rv(3))), b.rng.uniform(10, 300, 3))
        b.add(h, b.rng.uniform(10, 300))
        b.add(_unit(h + 0.7 * b.rv(12)), b.rng.uniform(10, 300, 12))
        b.add(_unit(0.2 * a + b.ortho(a, b.rv(6))), b.rng.uniform(10, 300, 6))
        b.done(a, g, "single-session")
    return b.memory()


# sabotages of the time signal shared by the known-answer tests of both fusions
def temporal_reversed(monkeypatch):
    """Recency turned upside down: the oldest utterance scores highest."""
    from components.retrieval.assomem import temporal

    real = temporal.temporal_signal
    monkeypatch.setattr(temporal, "temporal_signal", lambda *a, **kw: 1.0 - real(*a, **kw))


def temporal_shuffled(monkeypatch):
    """The time signal permuted across candidates (noise with the same values)."""
    from components.retrieval.assomem import temporal

    real, rng = temporal.temporal_signal, np.random.default_rng(7)
    monkeypatch.setattr(temporal, "temporal_signal", lambda *a, **kw: rng.permutation(real(*a, **kw)))
