"""Hardening, round 4 (issue 55): corrupt stage inputs of four more pipelines are one line each.

One module-scoped checkout runs the smoke profiles of CER-GOD, ICQL, ViP and Optimistic-O2NC (the cheapest smoke
runs with model files, arrays and JSON/JSONL between their stages). Each case plants a corrupt, truncated, empty,
wrong-shape, wrong-type or dangling file where a stage reads another stage's output, reruns that next stage through
the real entry point (``paperline stage PAPER STAGE --force``) and restores the file: the stage must exit 2 with
one ``error:`` line under 300 characters naming the file; nothing else in the checkout may change and the file
outside it stays as it was. The harness (``run_case``, ``outcome``) is round 3's, so each failure message starts
with its outcome (clean / traceback / accepted / lost / other) and a run against older code counts them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from flows.runtime.workspace import set_profile
from tests.conftest import copy_project, paperline
from tests.integration.test_hardening_round3 import _bytes, _dup_first, _jsonl, _rewrite, _set_first, run_case

pytestmark = [pytest.mark.slow, pytest.mark.integration]

PAPERS = ("cer-god", "icql", "vip", "optimistic-o2nc")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, prefect_api, shared_cache) -> tuple[Path, Path]:
    """(one checkout with the four smoke runs, a file outside it that no case may change)."""
    base = tmp_path_factory.mktemp("round4")
    root = copy_project(base / "proj")
    set_profile(root, "smoke")
    for paper in PAPERS:
        proc = paperline("run", paper, "--no-track", cwd=root, timeout=600)
        assert proc.returncode == 0, paper + proc.stdout[-2000:] + proc.stderr[-2000:]
    outside = base / "outside.txt"
    outside.write_text("outside\n")
    return root, outside


# ---- planting helpers -------------------------------------------------------------------------------------------


def _json(rel: str, change: Callable[[object], object]) -> Callable[[Path], None]:
    def plant(root: Path) -> None:
        (root / rel).write_text(json.dumps(change(json.loads((root / rel).read_text()))))

    return plant


def _drop(field: str) -> Callable[[list[dict]], list[dict]]:
    return lambda rows: [{k: v for k, v in rows[0].items() if k != field}, *rows[1:]]


def _npy(rel: str, make: Callable[[np.ndarray], np.ndarray]) -> Callable[[Path], None]:
    def plant(root: Path) -> None:
        arr = np.load(root / rel, allow_pickle=False)
        with open(root / rel, "wb") as fh:
            np.save(fh, make(arr))

    return plant


def _nan_first(key: str) -> Callable[[dict], dict]:
    def change(a: dict) -> dict:
        arr = a[key].astype(np.float32 if a[key].dtype.kind != "f" else a[key].dtype).copy()
        arr.reshape(-1)[0] = np.nan
        return {**a, key: arr}

    return change


def _first_key(root: Path, rel: str, suffix: str) -> str:
    with np.load(root / rel, allow_pickle=False) as z:
        return next(k for k in z.files if k.endswith(suffix))


def _scores(change: Callable[[np.ndarray], np.ndarray]) -> Callable[[Path], None]:
    def plant(root: Path) -> None:
        key = _first_key(root, CG_SCORES, "/scores")
        _rewrite(CG_SCORES, lambda a: {**a, key: change(a[key])})(root)

    return plant


# ---- CER-GOD: build -> clean graphs -> inject -> graphs -> fit -> runs -> evaluate -> metrics -> report ---------

CG_CLEAN = "data/cer-god/clean/sbm.npz"
CG_GRAPH = "data/cer-god/graphs/sbm.npz"
CG_RUNS = "data/cer-god/runs/runs.jsonl"
CG_SCORES = "data/cer-god/runs/scores.npz"
CG_METRICS = "data/cer-god/eval/metrics.jsonl"
CG_INJECT = ("stage", "cer-god", "inject", "--force")
CG_EVAL = ("stage", "cer-god", "evaluate", "--force")
CG_REPORT = ("stage", "cer-god", "report", "--force")

# ---- ICQL: data -> datasets -> train -> models -> evaluate -> eval -> report -----------------------------------

IQ_TRANS = "data/icql/datasets/t1/transitions.npz"
IQ_META = "data/icql/datasets/t1/meta.json"
IQ_CTX = "data/icql/datasets/t1/ctx_nearest.npy"
IQ_SUMMARY = "data/icql/datasets/summary.json"
IQ_RUNS = "data/icql/models/runs.json"
IQ_CONFIG = "data/icql/models/t1-iql-s0/config.json"
IQ_WEIGHTS = "data/icql/models/t1-iql-s0/model.pt"
IQ_HISTORY = "data/icql/models/t1-iql-s0/history.json"
IQ_EPISODES = "data/icql/eval/episodes.jsonl"
IQ_EVRUNS = "data/icql/eval/runs.jsonl"
IQ_Q = "data/icql/eval/q_t4.npz"
IQ_EVAL = ("stage", "icql", "evaluate", "--force")
IQ_REPORT = ("stage", "icql", "report", "--force")


def _runs_entry(field: str, value) -> Callable[[object], object]:
    def change(runs):
        runs[0][field] = value
        return runs

    return change


# ---- ViP: data -> sft -> rl -> report ---------------------------------------------------------------------------

VP_FEATURES = "data/vip/data/features.npz"
VP_TRAIN = "data/vip/data/train.jsonl"
VP_HELD = "data/vip/data/heldout.jsonl"
VP_SFT_WEIGHTS = "data/vip/sft/model/model.safetensors"
VP_SFT_CONFIG = "data/vip/sft/model/config.json"
VP_SFT_JSON = "data/vip/sft/sft.json"
VP_CURVES = "data/vip/runs/curves.jsonl"
VP_SUMMARY = "data/vip/runs/summary.json"
VP_PREDS = "data/vip/runs/predictions.jsonl"
VP_RL = ("stage", "vip", "rl", "--force")
VP_REPORT = ("stage", "vip", "report", "--force")

# ---- Optimistic-O2NC: measure -> runs -> report -----------------------------------------------------------------

O2_RUNS = "data/optimistic-o2nc/runs/runs.jsonl"
O2_REPORT = ("stage", "optimistic-o2nc", "report", "--force")

CASES: dict[str, tuple[str, Callable[[Path], None], tuple[str, ...]]] = {
    # CER-GOD
    "cg-clean-truncated": (CG_CLEAN, _bytes(CG_CLEAN, lambda b: b[: len(b) // 2]), CG_INJECT),
    "cg-clean-nan-feature": (CG_CLEAN, _rewrite(CG_CLEAN, _nan_first("x")), CG_INJECT),
    "cg-clean-edge-out-of-range": (
        CG_CLEAN,
        _rewrite(CG_CLEAN, lambda a: {**a, "edge_index": a["edge_index"] + 100_000}),
        CG_INJECT,
    ),
    "cg-clean-features-1d": (CG_CLEAN, _rewrite(CG_CLEAN, lambda a: {**a, "x": a["x"][:, 0]}), CG_INJECT),
    "cg-clean-float-edges": (
        CG_CLEAN,
        _rewrite(CG_CLEAN, lambda a: {**a, "edge_index": a["edge_index"] + 0.5}),
        CG_INJECT,
    ),
    "cg-graph-kind-short": (CG_GRAPH, _rewrite(CG_GRAPH, lambda a: {**a, "kind": a["kind"][:7]}), CG_EVAL),
    "cg-graph-name-missing": (
        CG_GRAPH,
        _rewrite(CG_GRAPH, lambda a: {k: v for k, v in a.items() if k != "name"}),
        CG_EVAL,
    ),
    "cg-runs-graph-missing": (CG_RUNS, _jsonl(CG_RUNS, _drop("graph")), CG_EVAL),
    "cg-runs-graph-unknown": (CG_RUNS, _jsonl(CG_RUNS, _set_first("graph", "no-such-graph")), CG_EVAL),
    "cg-runs-has-labels-text": (CG_RUNS, _jsonl(CG_RUNS, _set_first("has_labels", "maybe")), CG_EVAL),
    "cg-runs-duplicate-ids": (CG_RUNS, _jsonl(CG_RUNS, _dup_first), CG_EVAL),
    "cg-runs-seed-text": (CG_RUNS, _jsonl(CG_RUNS, _set_first("seed", "zero")), CG_REPORT),
    "cg-scores-truncated": (CG_SCORES, _bytes(CG_SCORES, lambda b: b[: len(b) // 2]), CG_EVAL),
    "cg-scores-short": (CG_SCORES, _scores(lambda s: s[:10]), CG_EVAL),
    "cg-scores-nan": (CG_SCORES, _scores(lambda s: np.full_like(s, np.nan)), CG_EVAL),
    "cg-scores-2d": (CG_SCORES, _scores(lambda s: np.stack([s, s], 1)), CG_EVAL),
    "cg-scores-key-missing": (CG_SCORES, _rewrite(CG_SCORES, lambda a: dict(list(a.items())[2:])), CG_EVAL),
    "cg-metrics-auc-missing": (CG_METRICS, _jsonl(CG_METRICS, _drop("auc")), CG_REPORT),
    "cg-metrics-auc-text": (CG_METRICS, _jsonl(CG_METRICS, _set_first("auc", "high")), CG_REPORT),
    "cg-metrics-auc-null": (CG_METRICS, _jsonl(CG_METRICS, _set_first("auc", None)), CG_REPORT),
    "cg-metrics-empty": (CG_METRICS, _bytes(CG_METRICS, lambda b: b""), CG_REPORT),
    "cg-metrics-duplicate-ids": (CG_METRICS, _jsonl(CG_METRICS, _dup_first), CG_REPORT),
    # ICQL
    "iq-transitions-truncated": (IQ_TRANS, _bytes(IQ_TRANS, lambda b: b[: len(b) // 2]), IQ_EVAL),
    "iq-transitions-rows-short": (
        IQ_TRANS,
        _rewrite(IQ_TRANS, lambda a: {**a, "observations": a["observations"][:10]}),
        IQ_EVAL,
    ),
    "iq-transitions-nan": (IQ_TRANS, _rewrite(IQ_TRANS, _nan_first("rewards")), IQ_EVAL),
    "iq-transitions-obs-columns": (
        IQ_TRANS,
        _rewrite(IQ_TRANS, lambda a: {**a, "observations": a["observations"][:, :2]}),
        IQ_EVAL,
    ),
    "iq-context-wrong-shape": (IQ_CTX, _npy(IQ_CTX, lambda a: a[:5, :1]), IQ_EVAL),
    "iq-meta-references-missing": (
        IQ_META,
        _json(IQ_META, lambda m: {k: v for k, v in m.items() if k != "references"}),
        IQ_EVAL,
    ),
    "iq-meta-not-an-object": (IQ_META, _json(IQ_META, lambda m: [m]), IQ_EVAL),
    "iq-runs-not-a-list": (IQ_RUNS, _json(IQ_RUNS, lambda r: {"runs": r}), IQ_EVAL),
    "iq-runs-name-missing": (IQ_RUNS, _json(IQ_RUNS, _drop("name")), IQ_EVAL),
    "iq-runs-name-outside": (IQ_RUNS, _json(IQ_RUNS, _runs_entry("name", "../../../../outside")), IQ_EVAL),
    "iq-runs-task-text": (IQ_RUNS, _json(IQ_RUNS, _runs_entry("task", "one")), IQ_EVAL),
    "iq-weights-truncated": (IQ_WEIGHTS, _bytes(IQ_WEIGHTS, lambda b: b[: len(b) // 2]), IQ_EVAL),
    "iq-weights-garbage": (IQ_WEIGHTS, _bytes(IQ_WEIGHTS, lambda b: os.urandom(2048)), IQ_EVAL),
    "iq-config-truncated": (IQ_CONFIG, _bytes(IQ_CONFIG, lambda b: b[: len(b) // 2]), IQ_EVAL),
    "iq-config-wrong-dims": (IQ_CONFIG, _json(IQ_CONFIG, lambda c: {**c, "obs_dim": 9}), IQ_EVAL),
    "iq-episodes-score-missing": (IQ_EPISODES, _jsonl(IQ_EPISODES, _drop("score")), IQ_REPORT),
    "iq-episodes-score-text": (IQ_EPISODES, _jsonl(IQ_EPISODES, _set_first("score", "good")), IQ_REPORT),
    "iq-evruns-empty": (IQ_EVRUNS, _bytes(IQ_EVRUNS, lambda b: b""), IQ_REPORT),
    "iq-history-not-json": (IQ_HISTORY, _bytes(IQ_HISTORY, lambda b: b[: len(b) // 2]), IQ_REPORT),
    "iq-q-truncated": (IQ_Q, _bytes(IQ_Q, lambda b: b[: len(b) // 3]), IQ_REPORT),
    "iq-summary-not-an-object": (IQ_SUMMARY, _json(IQ_SUMMARY, lambda s: list(s)), IQ_REPORT),
    # ViP
    "vp-features-truncated": (VP_FEATURES, _bytes(VP_FEATURES, lambda b: b[: len(b) // 2]), VP_RL),
    "vp-train-field-missing": (VP_TRAIN, _jsonl(VP_TRAIN, lambda rows: [{"x": 1}, *rows[1:]]), VP_RL),
    "vp-held-duplicate-ids": (VP_HELD, _jsonl(VP_HELD, _dup_first), VP_RL),
    "vp-sft-weights-truncated": (VP_SFT_WEIGHTS, _bytes(VP_SFT_WEIGHTS, lambda b: b[: len(b) // 2]), VP_RL),
    "vp-sft-config-not-json": (VP_SFT_CONFIG, _bytes(VP_SFT_CONFIG, lambda b: b"{"), VP_RL),
    "vp-sft-json-truncated": (VP_SFT_JSON, _bytes(VP_SFT_JSON, lambda b: b[: len(b) // 2]), VP_REPORT),
    "vp-summary-not-a-list": (VP_SUMMARY, _json(VP_SUMMARY, lambda s: {"runs": s}), VP_REPORT),
    "vp-features-rows-short": (
        VP_FEATURES,
        _rewrite(VP_FEATURES, lambda a: {k: v[:5] for k, v in a.items()}),
        VP_RL,
    ),
    "vp-features-nan": (VP_FEATURES, _rewrite(VP_FEATURES, _nan_first("hashed")), VP_RL),
    "vp-predictions-observed-text": (VP_PREDS, _jsonl(VP_PREDS, _set_first("observed", "half")), VP_REPORT),
    "vp-curves-field-missing": (VP_CURVES, _jsonl(VP_CURVES, lambda rows: [{"x": 1}, *rows[1:]]), VP_REPORT),
    "vp-predictions-empty": (VP_PREDS, _bytes(VP_PREDS, lambda b: b""), VP_REPORT),
    # Optimistic-O2NC
    "o2-runs-field-missing": (O2_RUNS, _jsonl(O2_RUNS, _drop("method")), O2_REPORT),
    "o2-runs-reached-text": (O2_RUNS, _jsonl(O2_RUNS, _set_first("reached", "yes")), O2_REPORT),
    "o2-runs-calls-null": (O2_RUNS, _jsonl(O2_RUNS, _set_first("calls", None)), O2_REPORT),
    "o2-runs-empty": (O2_RUNS, _bytes(O2_RUNS, lambda b: b""), O2_REPORT),
    "o2-runs-duplicate-ids": (O2_RUNS, _jsonl(O2_RUNS, _dup_first), O2_REPORT),
}


# One case per reader and kind of damage runs in `make test` (the suite's time is bounded by CI's 40 minutes:
# each case is a real `paperline stage` process); PAPERLINE_HARDENING_ALL=1 runs every case above.
CORE = frozenset(
    {
        "cg-clean-truncated",
        "cg-clean-nan-feature",
        "cg-clean-edge-out-of-range",
        "cg-runs-graph-unknown",
        "cg-runs-duplicate-ids",
        "cg-scores-short",
        "cg-metrics-auc-text",
        "cg-metrics-empty",
        "iq-transitions-truncated",
        "iq-transitions-obs-columns",
        "iq-context-wrong-shape",
        "iq-meta-not-an-object",
        "iq-runs-name-outside",
        "iq-weights-garbage",
        "iq-config-wrong-dims",
        "iq-episodes-score-text",
        "vp-features-nan",
        "vp-held-duplicate-ids",
        "vp-sft-weights-truncated",
        "vp-summary-not-a-list",
        "vp-predictions-observed-text",
        "o2-runs-reached-text",
        "o2-runs-duplicate-ids",
        "o2-runs-empty",
    }
)
ALL = os.environ.get("PAPERLINE_HARDENING_ALL") == "1"


def test_the_core_cases_exist():
    assert set(CASES) >= CORE


@pytest.mark.parametrize("case", [c if c in CORE or ALL else pytest.param(c, marks=pytest.mark.skip(
    reason="not a core case: PAPERLINE_HARDENING_ALL=1 runs it")) for c in CASES])  # fmt: skip
def test_corrupt_stage_input_is_one_line(smoke, case):
    rel, plant, command = CASES[case]
    run_case(smoke, plant, command, (rel,), touched=(rel,))
