"""AssoMem's claims on small hand-built evaluated rows with known verdicts (3 seeds x 4 question types)."""

from __future__ import annotations

import pytest

from components.evaluation.claims import claims_document
from flows.assomem.claims import all_claims, claim1, claim2, claim3, claim4, table
from flows.assomem.params import PRESETS, Params
from flows.runtime.params import resolve
from tests.claims_checks import assert_every_verdict_flip_is_caught

TYPES = ("single-session", "temporal", "aggregate", "knowledge-update")
METHODS = ("assomem", "dense", "assomem-equal", "assomem-no-I")
SIZES = (1000, 10000)
PER_TYPE = 12


def params(*overrides: str) -> Params:
    return resolve(
        Params, PRESETS, slug="assomem", profile="default", overrides=["claims.n_resamples=2000", *overrides]
    )


@pytest.fixture(scope="module")
def p():
    return params()


def make_rows(value, seeds=(0, 1, 2)) -> list[dict]:
    """Test rows: ``value(method, size, qtype, seed, i)`` gives R@6 = R@10 of question i (plus a calibration row)."""
    rows = []
    for seed in seeds:
        for size in SIZES:
            for t in TYPES:
                for i in range(PER_TYPE + 1):
                    for m in METHODS:
                        v = float(value(m, size, t, seed, i))
                        rows.append(
                            {
                                "unit": f"seed{seed}-n{size}",
                                "seed": seed,
                                "size": size,
                                "method": m,
                                "qid": f"{t}-{i}",
                                "type": t,
                                "split": "calibration" if i == PER_TYPE else "test",
                                "R@6": v,
                                "R@10": v,
                            }
                        )
    return rows


GOOD_W = {
    "single-session": {"R": 0.5, "I": 0.3, "T": 0.2},
    "temporal": {"R": 0.2, "I": 0.2, "T": 0.6},
    "aggregate": {"R": 0.3, "I": 0.5, "T": 0.2},
    "knowledge-update": {"R": 0.4, "I": 0.3, "T": 0.3},
}
BAD_W = {**GOOD_W, "aggregate": {"R": 0.6, "I": 0.2, "T": 0.2}}  # w_I(aggregate) < w_I(single-session)


def units_weights(per_seed: dict, seeds=(0, 1, 2)):
    units = [{"unit": f"seed{s}-n{n}", "seed": s, "size": n} for s in seeds for n in SIZES]
    return units, {u["unit"]: {"weights": {"assomem": per_seed[u["seed"]]}} for u in units}


def jitter(size, t, seed, i):
    """Per-question noise for one arm only (so paired differences vary), mean 0 within every seed, size and type."""
    return 0.02 * ((i + seed + SIZES.index(size) + TYPES.index(t)) % 4 - 1.5)


def wins(margin=0.3):
    """AssoMem beats every other method by ``margin`` with a little per-question spread (its own jitter on top, so
    the paired differences vary); no loss with size."""
    return lambda m, size, t, seed, i: (
        (0.5 + margin + jitter(size, t, seed, i) if m == "assomem" else 0.5) + 0.05 * (i % 3 - 1)
    )


def test_c1_reproduced_clustered_by_seed_and_stratified_by_type(p):
    c = claim1(p, table(make_rows(wins())), list(SIZES))
    assert c.verdict == "reproduced" and c.n_seeds == 3 and c.n_units == 3 * 4 * PER_TYPE
    assert c.per_seed_signs == [1, 1, 1] and c.details["strata"] == sorted(TYPES)
    assert c.details["resampling"].startswith("two-stage") and "84.96" in c.paper_value


def test_c1_not_reproduced_and_inconclusive(p):
    c = claim1(p, table(make_rows(wins(-0.3))), list(SIZES))
    assert c.verdict == "not reproduced" and "lies below 0" in c.reason

    def split(m, size, t, seed, i):
        return wins(0.3 if seed < 2 else -0.5)(m, size, t, seed, i)

    c = claim1(p, table(make_rows(split)), list(SIZES))
    assert c.verdict == "inconclusive" and c.per_seed_signs == [1, 1, -1] and "spans 0" in c.reason


def test_c1_single_seed_is_decided_for_one_trained_model_and_a_real_source_is_not_clustered(p):
    c = claim1(p, table(make_rows(wins(), seeds=(0,))), list(SIZES))
    assert c.verdict == "reproduced" and c.n_seeds == 1 and "one trained model" in c.reason
    real = params("data.source=meetingqa", "data.path=meeting_qa_raw.json")
    c = claim1(real, table(make_rows(wins(), seeds=(0,))), list(SIZES))
    assert c.verdict == "reproduced" and c.n_seeds == 0 and c.cluster_unit is None


def test_c2_drop_of_recall(p):
    def dense_drops(m, size, t, seed, i):
        return wins(0.0)(m, size, t, seed, i) - (0.3 if m == "dense" and size == 10000 else 0.0)

    c = claim2(p, table(make_rows(dense_drops)), list(SIZES))
    assert c.verdict == "reproduced" and c.details["drop_dense"] == pytest.approx(0.3)
    c = claim2(p, table(make_rows(wins())), list(SIZES))
    assert c.verdict == "not reproduced" and "no practical effect" in c.reason
    c = claim2(p, table(make_rows(wins())), [10000])
    assert c.verdict == "inconclusive" and "not applicable" in c.details["not_applicable"]


@pytest.mark.parametrize(
    "bad_seeds, verdict, direction",
    [
        ((), "reproduced", "reproduced"),
        ((0, 1, 2), "not reproduced", "not reproduced"),
        ((2,), "inconclusive", "inconclusive"),
    ],
)
def test_c3_fusion_and_weight_directions(p, bad_seeds, verdict, direction):
    units, weights = units_weights({s: BAD_W if s in bad_seeds else GOOD_W for s in (0, 1, 2)})
    c = claim3(p, table(make_rows(wins(0.05))), list(SIZES), weights, units)
    part_a, part_b = c.parts
    assert part_a["verdict"] == "reproduced" and part_b["rule"] == "probability"
    assert part_b["verdict"] == direction and c.verdict == verdict
    assert part_b["effect"] == pytest.approx(1 - len(bad_seeds) / 3)


def test_c3_direction_part_not_applicable_without_temporal_questions(p):
    no_temporal = {t: w for t, w in GOOD_W.items() if t != "temporal"}
    units, weights = units_weights({s: no_temporal for s in (0, 1, 2)})
    c = claim3(p, table(make_rows(wins(0.05))), list(SIZES), weights, units)
    assert c.verdict == "inconclusive" and "temporal" in c.parts[1]["details"]["not_applicable"]


def removing_i(loss_agg, loss_fact, flip_seed=None):
    """R@10 of assomem-no-I is assomem's minus the loss of its question's group (plus its own mean-0 jitter, so the
    paired differences vary)."""

    def value(m, size, t, seed, i):
        base = 0.6 + 0.05 * (i % 3 - 1)
        if m != "assomem-no-I":
            return base
        la, lf = (loss_fact, loss_agg) if seed == flip_seed else (loss_agg, loss_fact)
        return base + jitter(size, t, seed, i) - (la if t == "aggregate" else lf if t == "single-session" else 0.0)

    return value


def test_c4_interaction_is_one_clustered_bootstrap(p):
    c = claim4(p, table(make_rows(removing_i(0.3, 0.0))), list(SIZES))
    hurts, more = c.parts
    assert c.verdict == "reproduced" and c.rule == "composite" and c.effect == pytest.approx(0.3)
    assert hurts["verdict"] == "reproduced" and hurts["effect"] == pytest.approx(0.3)
    assert more["effect"] == pytest.approx(more["details"]["loss_aggregate"] - more["details"]["loss_single_session"])
    assert more["n_seeds"] == 3 and more["per_seed_signs"] == [1, 1, 1] and more["n_units"] == 3 * 2 * PER_TYPE
    assert "share one seed draw" in more["details"]["resampling"]


def test_c4_follows_the_card_wording_removing_i_must_hurt_aggregate_questions(p):
    """Removing I raises recall in both groups, aggregate less: the interaction is positive, the claim is not."""
    c = claim4(p, table(make_rows(removing_i(-0.1, -0.4))), list(SIZES))
    hurts, more = c.parts
    assert more["verdict"] == "reproduced" and more["effect"] == pytest.approx(0.3)
    assert hurts["verdict"] == "not reproduced" and hurts["effect"] == pytest.approx(-0.1)
    assert c.verdict == "not reproduced" and "relative only" in c.details["note"]
    assert "raises R@k on aggregate questions (+0.100)" in c.details["note"]
    assert c.details["loss_aggregate"] == pytest.approx(-0.1) and c.details["loss_single_session"] == pytest.approx(
        -0.4
    )


def test_c4_not_reproduced_inconclusive_and_not_applicable(p):
    assert claim4(p, table(make_rows(removing_i(0.0, 0.3))), list(SIZES)).verdict == "not reproduced"
    c = claim4(p, table(make_rows(removing_i(0.3, -0.3, flip_seed=2))), list(SIZES))
    assert c.verdict == "inconclusive" and c.per_seed_signs == [1, 1, -1]
    rows = [
        r
        for r in make_rows(removing_i(0.3, 0.0))  # one aggregate test question left
        if r["type"] != "aggregate" or (r["qid"], r["seed"]) == ("aggregate-0", 0)
    ]
    c = claim4(p, table(rows), list(SIZES))
    assert c.verdict == "inconclusive" and "fewer than 2" in c.details["not_applicable"]


def test_every_verdict_flip_is_caught(p):
    units, weights = units_weights({0: GOOD_W, 1: GOOD_W, 2: BAD_W})
    doc = claims_document("assomem", "default", all_claims(p, make_rows(removing_i(0.3, 0.0)), weights, units))
    assert [c["id"] for c in doc["claims"]] == ["C1", "C2", "C3", "C4"]
    assert assert_every_verdict_flip_is_caught(doc) >= 2 * 6
