"""forestpersons's claims on hand-built detections with known verdicts, and every verdict flip caught."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from components.evaluation.claims import claims_document
from flows.forestpersons.claims import all_claims
from flows.forestpersons.params import PRESETS, Params
from flows.forestpersons.report import pooled_subsets
from flows.runtime.params import resolve
from tests.claims_checks import assert_every_verdict_flip_is_caught

GT = [("standing", 100), ("lying", 20), ("sitting", 70), ("standing", 40)]


def _doc(n=24):
    images, anns = [], []
    for i in range(n):
        images.append(
            {"id": i, "sequence": f"s{i // 4}", "tier": ("easy", "medium", "hard")[i % 3], "width": 128, "height": 128}
        )
        for j, (pose, vis) in enumerate(GT):
            anns.append(
                {"id": len(anns) + 1, "image_id": i, "bbox": [5 + 30 * j, 20, 20, 50], "pose": pose, "visibility": vis}
            )
    return {"images": images, "annotations": anns}


def _dets(doc, hit: dict, seed: int):
    """Per image: a box near each GT with probability hit[(pose, vis)] (score 0.5-1), plus a clutter box."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(len(doc["images"])):
        b, s = [], []
        for a in (a for a in doc["annotations"] if a["image_id"] == i):
            if rng.random() < hit[(a["pose"], a["visibility"])]:
                b.append(np.array(a["bbox"]) + rng.normal(0, 1, 4))
                s.append(rng.uniform(0.5, 1))
        b.append([100, 100, 20, 20])
        s.append(rng.uniform(0, 0.6))
        out.append((np.array(b, float), np.array(s)))
    return out


@pytest.fixture(scope="module")
def p():
    return resolve(
        Params,
        PRESETS,
        slug="forestpersons",
        profile="default",
        overrides=["claims.ap_resamples=300", "claims.n_resamples=1000"],
    )


def _pooled(doc, quality: dict[str, dict]):
    pooled = {}
    for name, hit in quality.items():
        pooled[name] = pooled_subsets(_dets(doc, hit, seed=zlib.crc32(name.encode())), doc)
    return pooled


STRONG = {("standing", 100): 0.95, ("standing", 40): 0.6, ("sitting", 70): 0.8, ("lying", 20): 0.3}
WEAK = {k: 0.25 for k in STRONG}
NONE = {k: 0.02 for k in STRONG}


def test_the_paper_pattern_reproduces_and_its_reverse_does_not(p):
    doc = _doc()
    seeds = p.train.seeds
    q = {
        **{f"forest-s{s}": STRONG for s in seeds["forest"]},
        **{f"urban-s{s}": WEAK for s in seeds["urban"]},
        **{f"aerial-s{s}": NONE for s in seeds["aerial"]},
        "hog": STRONG,
    }
    pooled = _pooled(doc, q)
    c1, c2, c3, c4 = all_claims(p, pooled, pooled["hog"])
    assert [c.verdict for c in (c1, c2, c3, c4)] == ["reproduced"] * 4, [c.reason for c in (c1, c2, c3, c4)]
    assert c1.n_seeds == 3 and c1.details["resampling"].startswith("two-stage") and c1.effect > 0.2
    assert c3.parts[0]["details"]["ap_by_visibility"][0] > c3.parts[0]["details"]["ap_by_visibility"][-1]
    assert c4.cluster_unit is None and c4.details["forest_standing"] > c4.details["forest_lying"]

    swapped = {
        **q,
        **{f"forest-s{s}": WEAK for s in seeds["forest"]},
        **{f"urban-s{s}": STRONG for s in seeds["urban"]},
        "hog": {k: 0.9 if k[0] == "lying" else 0.2 for k in STRONG},
    }
    pooled = _pooled(doc, swapped)
    r = all_claims(p, pooled, pooled["hog"])
    assert r[0].verdict == "not reproduced" and r[3].verdict == "not reproduced"
    doc_claims = claims_document("forestpersons", "default", r)
    assert assert_every_verdict_flip_is_caught(doc_claims) >= 2 * 6


def test_equal_detectors_give_no_practical_effect(p):
    """Every detector finds the same boxes; the non-forest ones rank them with a little seeded score noise, so the
    paired AP differences vary (identical detections everywhere cannot discriminate: not testable here)."""
    doc = _doc(40)
    seeds = p.train.seeds
    base = _dets(doc, STRONG, seed=0)

    def rescored(name):
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        return [(b, s + rng.normal(0, 0.01, s.size)) for b, s in base]

    names = [f"{d}-s{s}" for d in ("forest", "urban", "aerial") for s in seeds[d]]
    pooled = {n: pooled_subsets(base if n.startswith("forest-") else rescored(n), doc) for n in names}
    pooled["hog"] = pooled_subsets(base, doc)
    c1 = all_claims(p, pooled, pooled["hog"])[0]
    assert abs(c1.effect) < p.claims.delta / 5 and c1.verdict == "not reproduced" and "no practical effect" in c1.reason
    identical = {n: pooled["hog"] for n in [*names, "hog"]}
    c1 = all_claims(p, identical, identical["hog"])[0]
    assert c1.effect == 0 and c1.verdict == "inconclusive" and c1.ci_low == c1.ci_high == 0


def test_the_default_profile_draws_the_standard_10000_ap_resamples_and_the_audit_accepts_it():
    """Issue: the AP claims (C1, C2, C3's parts) used 400 resamples and said no reason. The default profile now
    draws the standard rule's 10,000 (every claim's record says so), a claim not reproduced says why it has no
    power simulation, and the record audit finds nothing (12 images: C2 is inconclusive here)."""
    from tests.flows.test_verdict_records import problems, walk

    default = resolve(Params, PRESETS, slug="forestpersons", profile="default")
    assert default.claims.ap_resamples == 10_000 and default.claims.n_resamples == 10_000
    doc = _doc(12)
    seeds = default.train.seeds
    q = {
        **{f"forest-s{s}": STRONG for s in seeds["forest"]},
        **{f"urban-s{s}": WEAK for s in seeds["urban"]},
        **{f"aerial-s{s}": NONE for s in seeds["aerial"]},
        "hog": STRONG,
    }
    pooled = _pooled(doc, q)
    record = claims_document("forestpersons", "default", all_claims(default, pooled, pooled["hog"]))
    leaves = {where: c for top in record["claims"] for where, c in walk(top) if c["parts"] == []}
    assert {w: c["details"]["n_resamples"] for w, c in leaves.items()} == dict.fromkeys(
        ("C1", "C2", "C3 > C3/visibility", "C3 > C3/pose", "C4"), 10_000
    )
    missed = {w: c for w, c in leaves.items() if c["verdict"] != "reproduced"}
    assert list(missed) == ["C2"]
    assert missed["C2"]["details"]["power_not_applicable"].startswith("not simulated: AP is not a mean over images")
    assert "600,000 recomputations, against 60,000" in missed["C2"]["details"]["power_not_applicable"]
    assert all("power_not_applicable" not in c["details"] for c in leaves.values() if c["verdict"] == "reproduced")
    assert problems(record) == []
    del record["claims"][1]["details"]["power_not_applicable"]
    assert problems(record) == ["C2: inconclusive without a power check or a reason why none applies"]
    smoke = resolve(Params, PRESETS, slug="forestpersons", profile="smoke")
    assert smoke.claims.ap_resamples == 100  # the smoke profile checks the wiring only (its report says so)


def test_subset_aps_without_a_spearman_make_c3_not_testable_not_not_reproduced(p):
    """A forest detector that finds nobody has AP 0 in every visibility bin: no resample has a Spearman, and the
    occlusion part must say "not testable here" instead of counting the undefined resamples as failures."""
    doc = _doc()
    seeds = p.train.seeds
    blind = {k: 0.0 for k in STRONG}
    q = {
        **{f"forest-s{s}": blind for s in seeds["forest"]},
        **{f"urban-s{s}": WEAK for s in seeds["urban"]},
        **{f"aerial-s{s}": NONE for s in seeds["aerial"]},
        "hog": STRONG,
    }
    pooled = _pooled(doc, q)
    c3 = all_claims(p, pooled, pooled["hog"])[2]
    occlusion = c3.parts[0]
    assert occlusion["id"] == "C3/visibility" and occlusion["details"]["n_finite"] == 0
    assert occlusion["verdict"] == "inconclusive" and occlusion["effect"] is None
    assert [t["passed"] for t in occlusion["testability"]] == [False]
    assert c3.verdict != "not reproduced"
