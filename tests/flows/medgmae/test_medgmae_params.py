"""medgmae's params refuse bad values with a message naming the field, and its claims decide planted effects."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from flows.medgmae import claims as C
from flows.medgmae.params import PRESETS, Params


def _params(**changes) -> Params:
    base = Params().model_dump()
    for key, value in changes.items():
        section, field = key.split(".")
        base[section][field] = value
    return Params.model_validate(base)


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("pretrain.objectives", ["medgmae", "spark"], "unknown objective"),
        ("finetune.fractions", [0.0, 1.0], "fractions"),
        ("finetune.inits", ["medgmae", "imagenet"], "unknown init"),
        ("data.source", "dicom", "unknown source"),
        ("data.size", 36, "does not divide data.size"),
        ("pretrain.mask_ratio", 1.0, "mask_ratio"),
        ("model.dec_heads", 5, "does not split"),
        ("finetune.lrs", [2.0], "learning rates"),
        ("finetune.seeds", [], "at least 1 item"),
        ("data.test_share", 0.9, "test_share"),
    ],
)
def test_bad_values_name_their_field(key, value, needle):
    with pytest.raises(ValidationError, match=needle):
        _params(**{key: value})


def test_claim_fractions_and_arms_must_be_run():
    with pytest.raises(ValidationError, match="claims.low_fraction"):
        _params(**{"claims.low_fraction": 0.05})
    with pytest.raises(ValidationError, match="must include 'voxel-mae'"):
        _params(**{"finetune.inits": ["medgmae", "scratch"]})
    with pytest.raises(ValidationError, match="needs path"):
        _params(**{"data.source": "nifti"})


def test_profiles_validate():
    for name, preset in PRESETS.items():
        assert Params.model_validate(preset) if isinstance(preset, dict) else preset, name


def _runs(effect_low: float, effect_high: float, seeds=(0, 1, 2), n=30, noise=0.02) -> list[dict]:
    rng = np.random.default_rng(0)
    out = []
    for s in seeds:
        base = rng.uniform(0.4, 0.6, n)
        for fr, eff in ((0.01, effect_low), (1.0, effect_high)):
            for init, add in (("medgmae", eff), ("voxel-mae", 0.0), ("scratch", -0.05)):
                d = np.clip(base + add + rng.normal(0, noise, n), 0, 1)
                out.append({"kind": "run", "init": init, "fraction": fr, "seed": s, "dice": d.tolist(),
                            "mean_dice": float(d.mean())})  # fmt: skip
    return out


PRE = [
    {"objective": "medgmae", "seed": 0, "masked_loss_untrained": 0.2, "masked_loss_trained": 0.05},
    {"objective": "voxel-mae", "seed": 0, "masked_loss_untrained": 0.3, "masked_loss_trained": 0.04},
]


def test_claims_decide_planted_effects_both_ways():
    p = Params()
    assert C.claim1(p, _runs(0.08, 0.01), PRE).verdict == "reproduced"
    assert C.claim1(p, _runs(-0.08, 0.0), PRE).verdict == "not reproduced"
    assert C.claim2(p, _runs(0.08, 0.01), PRE).verdict == "reproduced"
    assert C.claim2(p, _runs(0.0, 0.08), PRE).verdict == "not reproduced"
    # pretraining that did not lower the masked loss: the mechanism never engaged -> inconclusive
    flat = [dict(r, masked_loss_trained=r["masked_loss_untrained"]) for r in PRE]
    assert C.claim1(p, _runs(0.08, 0.01), flat).verdict == "inconclusive"


def _fits(pre_iters, rand_iters, cap=150):
    rows = []
    for v, (a, b) in enumerate(zip(pre_iters, rand_iters)):
        for start, it in (("pretrained", a), ("random", b)):
            rows.append({"volume": v, "start": start, "iters": it, "censored": it is None, "start_psnr": 10.0,
                         "final_psnr": 20.0})  # fmt: skip
    return rows


def test_claim3_median_ratio_and_censoring():
    p = Params()
    assert C.claim3(p, _fits([20, 25, 30, 22, 18, 24], [60, 70, 55, 80, 66, 59])).verdict == "reproduced"
    assert C.claim3(p, _fits([60, 70, 55, 80, 66, 59], [20, 25, 30, 22, 18, 24])).verdict == "not reproduced"
    both_capped = C.claim3(p, _fits([None] * 6, [None] * 6))
    assert both_capped.verdict == "inconclusive" and both_capped.n_censored == 6
