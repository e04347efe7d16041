"""Claims 2-4 are only judged when the edits measurably took effect (a null edit is trivially 'local')."""

from __future__ import annotations

import numpy as np

from components.evaluation.claims import INCONCLUSIVE, REPRODUCED
from flows.neuraldb.claims import all_claims
from flows.neuraldb.params import PRESETS, Params

GAMMA = {"gamma": 0.9, "tuned": True, "dev": []}


def _rows(p, neuraldb_efficacy: float, rng) -> list[dict]:
    big, rows = max(p.editing.m), []
    for s in p.editing.seeds:
        for m in p.editing.m:
            for meth in ("memit", "alphaedit", "neuraldb"):
                eff = neuraldb_efficacy if meth == "neuraldb" else 0.5
                rows.append({"seed": s, "m": m, "method": meth,
                             "efficacy": (rng.random(m) < eff).astype(float).tolist(),
                             "generalisation": (rng.random(m) < 0.5).astype(float).tolist(),
                             "specificity": (rng.random(m) < 0.8).astype(float).tolist(),
                             "ppl_nll": (3.0 + 0.01 * rng.random(20)).tolist()})
        rows.append({"seed": s, "m": big, "method": "unedited", "efficacy": (rng.random(big) < 0.5).astype(float).tolist(),
                     "generalisation": [0.5] * big, "specificity": [0.8] * big, "ppl_nll": [3.0] * 20})
    return rows


def test_null_edits_make_locality_and_generalisation_inconclusive():
    p = Params.model_validate(PRESETS["smoke"])
    claims = all_claims(p, _rows(p, 0.5, np.random.default_rng(0)), GAMMA)
    for c in claims[1:]:
        assert c.verdict == INCONCLUSIVE, c.id
        assert c.details["precondition"]["verdict"] != REPRODUCED


def test_effective_edits_are_judged_on_their_numbers():
    p = Params.model_validate(PRESETS["smoke"])
    claims = all_claims(p, _rows(p, 1.0, np.random.default_rng(0)), GAMMA)
    for c in claims[1:]:
        assert c.details["precondition"]["verdict"] == REPRODUCED
        assert "verdict_before_precondition" not in c.details
