"""IR metrics through ``ir_measures`` (pytrec_eval): Recall@k, nDCG@k (binary gains), MRR; utterance and session level.

Rankings are lists of ids, best first; they are handed to ir_measures with
strictly decreasing scores so its tie-breaking never reorders them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from components.errors import DataError

K_VALUES = (6, 10)


def _measures(ks: Sequence[int]):
    import ir_measures
    from ir_measures import RR, R, nDCG

    names = {}
    for k in ks:
        names[R @ k] = f"R@{k}"
    names[nDCG @ max(ks)] = f"nDCG@{max(ks)}"
    names[RR] = "MRR"
    return ir_measures, names


def per_query(
    qrels: Mapping[str, Sequence[str]], run: Mapping[str, Sequence[str]], ks: Sequence[int] = K_VALUES
) -> dict[str, dict[str, float]]:
    """{qid: {"R@6", "R@10", "nDCG@10", "MRR"}} for every query in ``qrels`` (absent runs score 0)."""
    empty = [q for q, g in qrels.items() if not g]
    if empty:
        raise DataError(f"metrics: question(s) {empty[:3]} have no gold ids")
    irm, names = _measures(ks)
    q = {qid: {d: 1 for d in gold} for qid, gold in qrels.items()}
    r = {qid: {d: float(len(ids) - i) for i, d in enumerate(ids)} for qid, ids in run.items() if ids}
    out = {qid: {n: 0.0 for n in names.values()} for qid in qrels}
    for m in irm.iter_calc(list(names), q, r):
        if m.query_id in out:
            out[m.query_id][names[m.measure]] = float(m.value)
    return out


def to_sessions(ranked_ids: Sequence[str], session_of: Mapping[str, str]) -> list[str]:
    """A session ranking from an utterance ranking: sessions in order of their first retrieved utterance."""
    seen, out = set(), []
    for u in ranked_ids:
        s = session_of[u]
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out
