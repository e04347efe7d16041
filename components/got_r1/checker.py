"""The GenEval-style rule checker: a prompt's spec against the objects detected in a picture (or planned in a
chain: anything with ``colour``, ``shape`` and ``box``).

GenEval (``evaluate_images.py``) counts the detections of each required class, checks their colour where one is
asked for, and for the position task asks that some detection of a group lie in the named relation to some
detection of its reference group. Counting asks for exactly ``count``; the other tasks for at least ``count``.
Relations here are strict: "a left of b" means a's box ends before b's starts (x1_a < x0_b), and likewise for
right of, above and below; GenEval uses box centres with a margin (see the README's choices table).
"""

from __future__ import annotations

from components.errors import ParamsError
from components.got_r1.world import RELATIONS


def _get(o, key):
    return o[key] if isinstance(o, dict) else getattr(o, key)


def relation_holds(rel: str, a, b) -> bool:
    """Does box ``a`` lie ``rel`` box ``b`` (inclusive cell boxes (x0, y0, x1, y1))?"""
    if rel == "left of":
        return a[2] < b[0]
    if rel == "right of":
        return a[0] > b[2]
    if rel == "above":
        return a[3] < b[1]
    if rel == "below":
        return a[1] > b[3]
    raise ParamsError(f"relation {rel!r} is not one of {RELATIONS}")


def matches(group: dict, objects) -> list:
    """The objects of the group's shape (and colour, where the group names one)."""
    return [
        o
        for o in objects
        if _get(o, "shape") == group["class"] and ("color" not in group or _get(o, "colour") == group["color"])
    ]


def count_score(tag: str, n: int, count: int) -> float:
    """Share of a group's count requirement met: exact for counting, at least ``count`` otherwise."""
    if tag == "counting":
        return max(0.0, 1.0 - abs(n - count) / count)
    return min(n, count) / count


def check(spec: dict, objects) -> dict:
    """``correct`` (GenEval's binary verdict), ``score`` (the share of requirements met, in [0, 1]) and the
    per-requirement scores. Requirements: each group's count, and each group's position relation."""
    parts = []
    found = [matches(g, objects) for g in spec["include"]]
    for g, m in zip(spec["include"], found):
        parts.append(count_score(spec["tag"], len(m), int(g["count"])))
    for g, m in zip(spec["include"], found):
        if "position" in g:
            rel, ref = g["position"]
            ok = any(relation_holds(rel, _get(a, "box"), _get(b, "box")) for a in m for b in found[int(ref)])
            parts.append(1.0 if ok else 0.0)
    return {"correct": all(p == 1.0 for p in parts), "score": sum(parts) / len(parts), "parts": parts}
