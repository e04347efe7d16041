"""The assomem stages generate -> embed -> graph -> retrieve -> evaluate on the real-format fixtures (TF-IDF)."""

import importlib
from pathlib import Path

import pytest

from components.evaluation.claims import claims_document, validate_claims_document
from components.io import read_json, read_jsonl
from flows.assomem.claims import all_claims
from flows.assomem.params import PRESETS, Params
from flows.registry import get_paper
from flows.runtime.params import resolve
from flows.runtime.settings import Paths
from flows.runtime.stages import StageContext, publish

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "assomem"


def run_stages(tmp_path, overrides) -> Params:
    p = resolve(Params, PRESETS, slug="assomem", profile="smoke", overrides=overrides)
    paper = get_paper("assomem")
    for stage in paper.stages[:5]:  # generate .. evaluate
        ctx = StageContext(paper, stage, p, "smoke", Paths(tmp_path))
        importlib.import_module(stage.module).run(ctx)
        publish(ctx)
    return p


@pytest.mark.parametrize(
    "source, path, n_questions",
    [("longmemeval", "longmemeval_small.json", 7), ("meetingqa", "meetingqa_raw_tiny.json", 7)],
)
def test_real_source_runs_per_question_metrics(tmp_path, source, path, n_questions):
    extra = [f"data.topics_path={FIX / 'meetingqa_topics_tiny.json'}"] if source == "meetingqa" else []
    p = run_stages(
        tmp_path, [f"data.source={source}", f"data.path={FIX / path}", "method.direct_top=5", "top_k=10", *extra]
    )
    data = tmp_path / "data/assomem"
    units = read_json(data / "memories/units.json")
    assert {u["fit_group"] for u in units} == {source} and len({u["size"] for u in units}) == 1
    rows = read_jsonl(data / "eval/metrics.jsonl")
    per_method = {}
    for r in rows:
        per_method.setdefault(r["method"], []).append(r)
    assert set(per_method) == set(p.methods)
    for method_rows in per_method.values():  # one metric row per question and method
        assert len(method_rows) == n_questions == len({r["qid"] for r in method_rows})
    assert all(0.0 <= r["R@10"] <= 1.0 and r["orig_type"] for r in rows)
    assert {r["split"] for r in rows} == {"calibration", "test"}
    rankings = read_jsonl(data / "runs/rankings.jsonl")
    if source == "longmemeval":  # each question is ranked over its own haystack only
        own = {
            u["unit"]: {x["id"] for x in read_jsonl(data / "memories" / u["base"] / "utterances.jsonl")} for u in units
        }
        assert len(units) == n_questions
        assert all(set(r["ranked"]) <= own[r["unit"]] for r in rankings)
    weights = read_json(data / "runs/weights.json")
    assert len({str(w["weights"]) for w in weights.values()}) == 1  # one CMI fit over the source's calibration split
    doc = claims_document("assomem", "smoke", all_claims(p, rows, weights, units))
    validate_claims_document(doc)
    c2 = doc["claims"][1]
    assert c2["verdict"] == "inconclusive" and "not applicable" in c2["details"]["not_applicable"]
