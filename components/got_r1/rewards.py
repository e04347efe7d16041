"""Rule stand-ins for the MLLM reward judges, each in [0, 1], and the total in the official README's product form.

- ``r_sem``: the chain covers the prompt's objects and attributes (the share of each group's count met, averaged
  over groups) minus contradictions (chain objects that answer no group, and for counting any excess), per
  chain object; clipped at 0.
- ``r_spa``: the chain's layout is sound: the mean of (boxes in the grid with sides >= 3), (no two boxes
  overlap) and, for a position prompt, (the relation holds between the chain's boxes).
- ``r_ri``: chain-image consistency: for each chain object, the best IoU with a detected component of the same
  colour and shape, averaged over the chain.
- ``r_pi``: the checker's score of the picture against the prompt (its share of requirements met).
- ``r_hps`` (optional factor, the paper's HPS aesthetics): the share of coloured cells that belong to a cleanly
  drawn object (a component whose named template it matches exactly).

Total (README of gogoduan/GoT-R1): ``R = R_PI * (R_sem + R_spa) * R_RI``; here ``(R_sem + R_spa) / 2`` so that
R is in [0, 1] (a constant factor 1/2), times ``R_HPS`` when ``hps`` is on.
"""

from __future__ import annotations

import numpy as np

from components.errors import ParamsError
from components.got_r1.checker import check, matches, relation_holds
from components.got_r1.render import MIN_SIDE, Detection, detect, iou

KINDS = ("full", "pi", "ri")


def r_sem(spec: dict, objects: list[dict] | None) -> float:
    if not objects:
        return 0.0
    groups = spec["include"]
    coverage = float(np.mean([min(len(matches(g, objects)), g["count"]) / g["count"] for g in groups]))
    stray = sum(1 for o in objects if not any(matches(g, [o]) for g in groups))
    excess = sum(max(0, len(matches(g, objects)) - g["count"]) for g in groups) if spec["tag"] == "counting" else 0
    return max(0.0, coverage - (stray + excess) / len(objects))


def r_spa(spec: dict, objects: list[dict] | None, size: int) -> float:
    if not objects:
        return 0.0
    boxes = [o["box"] for o in objects]
    in_grid = all(
        b[0] >= 0 and b[1] >= 0 and b[2] < size and b[3] < size and min(b[2] - b[0], b[3] - b[1]) + 1 >= MIN_SIDE
        for b in boxes
    )
    disjoint = all(iou(a, b) == 0.0 for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    checks = [float(in_grid), float(disjoint)]
    for g in spec["include"]:
        if "position" in g:
            rel, ref = g["position"]
            mine, theirs = matches(g, objects), matches(spec["include"][int(ref)], objects)
            checks.append(float(any(relation_holds(rel, a["box"], b["box"]) for a in mine for b in theirs)))
    return float(np.mean(checks))


def r_ri(objects: list[dict] | None, detections: list[Detection]) -> float:
    if not objects:
        return 0.0
    best = []
    for o in objects:
        same = [d.box for d in detections if d.colour == o["colour"] and d.shape == o["shape"]]
        best.append(max((iou(o["box"], b) for b in same), default=0.0))
    return float(np.mean(best))


def r_pi(spec: dict, detections: list[Detection]) -> float:
    return float(check(spec, detections)["score"])


def r_hps(img: np.ndarray, detections: list[Detection]) -> float:
    coloured = int((np.asarray(img) > 0).sum())
    if coloured == 0:
        return 0.0
    return sum(d.area for d in detections if d.agreement == 1.0) / coloured


def rewards(spec: dict, objects: list[dict] | None, img: np.ndarray, *, kind: str = "full", hps: bool = False) -> dict:
    """Every term and the total of ``kind``: ``full`` (the product), ``pi`` (R_PI alone, outcome only) or ``ri``
    (R_RI alone, the paper's collapse ablation)."""
    if kind not in KINDS:
        raise ParamsError(f"reward kind {kind!r} is not one of {KINDS}")
    det = detect(img)
    size = int(np.asarray(img).shape[0])
    t = {"sem": r_sem(spec, objects), "spa": r_spa(spec, objects, size), "ri": r_ri(objects, det)}
    t["pi"] = r_pi(spec, det)
    t["hps"] = r_hps(img, det)
    if kind == "full":
        total = t["pi"] * (t["sem"] + t["spa"]) / 2 * t["ri"]
        total *= t["hps"] if hps else 1.0
    else:
        total = t[kind]
    t["total"] = float(total)
    return t
