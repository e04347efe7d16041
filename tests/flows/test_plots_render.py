"""Every DVC plot renders with data on both axes (issue 47): `dvc plots show --json` over the committed dvc.yaml
and .dvc/plots/ templates, fed with rows shaped like each report stage writes them (columns read from the
writer's code, value types as it writes them), must give a Vega-Lite spec whose x, y and colour fields exist in
every row, with numbers wherever an axis is quantitative (positive ones on a log axis)."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from flows.dvcgen import stage_entries
from tests.plot_checks import check_plot, encoding

ROOT = Path(__file__).resolve().parents[2]
DVC = ROOT / ".venv" / "bin" / "dvc"

# reports/<slug>/plots/<file> -> rows as the paper's report.py writes them (labels as it builds them).
ROWS: dict[str, list[dict]] = {
    "ofmu/tradeoff.csv": [
        {"method": m, "seed": s, "log10_fq": -3.0 + s, "mu": 0.5 + 0.1 * s} for m in ("ofmu", "npo") for s in (0, 1)
    ],
    "ofmu/cosine.csv": [{"method": m, "step": t, "abs_cos": 0.1 * t} for m in ("ofmu", "graddiff") for t in (0, 1)],
    "assomem/recall_vs_size.csv": [
        {"method": m, "size": n, "R@10": 0.5, "R@6": 0.4, "nDCG@10": 0.3}
        for m in ("fused", "bm25")
        for n in (100, 1000)
    ],
    "qualitypajama/loss_vs_compute.csv": [
        {"intervention": i, "N": 1e6, "D": d, "flops": 6e6 * d, "loss": 3.0}
        for i in ("none", "dedup")
        for d in (1e5, 1e6)
    ],
    "forestpersons/ap_by_domain.csv": [
        {"detector": d, "domain": s, "ap": 0.4} for d in ("frcnn", "yolo") for s in ("forest", "urban")
    ],
    "ebt/thinking.csv": [{"set": s, "steps": k, "ppl": 20.0 - k} for s in ("id", "ood") for k in (1, 2)],
    "ebt/best_of_n.csv": [{"set": s, "n": n, "ppl": 20.0 - n} for s in ("id", "ood") for n in (1, 4)],
    "icql/scores.csv": [
        {"group": f"t{t}/{m}", "score": 0.6, "ci_low": 0.5, "ci_high": 0.7} for t in (1, 2) for m in ("icql", "dt")
    ],
    "optimistic-o2nc/calls_vs_eps.csv": [
        {"function": "quad", "method": m, "eps_rel": e, "median_calls": 100.0 / e}
        for m in ("odog", "gd")
        for e in (0.1, 0.01)
    ],
    "cer-god/auc_by_method.csv": [
        {"graph": g, "method": m, "mean_auc": 0.7} for g in ("cora", "sbm") for m in ("cer-god", "dominant")
    ],
    "milco/pruning.csv": [
        {"method": m, "param": p, "avg_doc_dims": 10.0 * p, "ndcg10": 0.3} for m in ("milco", "splade") for p in (1, 2)
    ],
    "milco/bytes.csv": [{"model": m, "index_bytes": b, "ndcg10": 0.3} for m in ("milco", "bm25") for b in (1000, 5000)],
    "dka/accuracy.csv": [
        {"method": m, "fraction": f, "acc": 0.8, "ci_low": 0.7, "ci_high": 0.9}
        for m in ("dka", "linear")
        for f in (0.1, 1.0)
    ],
    "dka/erf.csv": [{"method": m, "erf_area": a} for m, a in (("dka", 0.4), ("full-ft", 0.2))],
    "vip/accuracy.csv": [
        {"method": m, "rollouts": r, "mean_at_k": 0.5, "lo": 0.4, "hi": 0.6}
        for m in ("vip", "uniform")
        for r in (64, 128)
    ],
    "vip/allocation.csv": [{"method": m, "n": n, "count": c} for m in ("vip", "uniform") for n, c in ((2, 5), (8, 3))],
    "daze/asr.csv": [{"method": f"{e}/{m}", "asr": 0.9} for e in ("gridworld", "cartpole") for m in ("daze", "random")],
    "daze/asr_perturbed.csv": [{"condition": f"gridworld/daze/{c}", "asr": 0.8} for c in ("clean", "noise")],
    "neuraldb/metrics_vs_m.csv": [
        {
            "m": m,
            "method": x,
            "efficacy": 0.9,
            "generalisation": 0.8,
            "specificity": 0.7,
            "ppl": 20.0,
            "ppl_rise": 0.1,
            "fluency": 5.0,
        }
        for x in ("neuraldb", "memit")
        for m in (10, 100)
    ],
    "anthrobench/turn_profile.csv": [
        {"turn": t, "behaviour": b, "prevalence": 0.1 * t} for b in ("empathy", "pronouns") for t in (1, 2, 3)
    ],
    "implicit-planning/rates.csv": [
        {"condition": f"{m}/{c}", "rf2_rate": 0.2} for m in ("positive", "smollm2") for c in ("steered", "random")
    ],
    "cdra/curves.csv": [
        {"seed": 0, "arm": a, "step": t, "pf": 0.5 + 0.01 * t, "da": 0.4}
        for a in ("grpo-outcome", "cdra")
        for t in (0, 10, 20)
    ],
    "got-r1/accuracy.csv": [
        {"task": t, "method": m, "accuracy": 0.6} for t in ("position", "counting") for m in ("got-sft", "got-r1")
    ],
    "got-r1/reward.csv": [{"step": t, "method": m, "reward": 0.3} for t in (0, 10) for m in ("got-r1", "rpi-only")],
    "medgmae/dice.csv": [
        {"fraction": f, "init": i, "dice": 0.5} for f in (0.01, 0.1, 1.0) for i in ("medgmae", "voxel-mae", "scratch")
    ],
    "medgmae/recon.csv": [{"volume": v, "start": s, "iters": 40} for v in (0, 1) for s in ("pretrained", "random")],
    "selfaug-decoding/pope.csv": [
        {"method": m, "split": s, "f1": 0.7} for m in ("greedy", "vcd", "self-aug") for s in ("random", "adversarial")
    ],
    "neuraldb/gamma_sweep.csv": [
        {"gamma": g, "efficacy": 0.9, "generalisation": 0.8, "specificity": 0.7, "score": 0.8} for g in (0.5, 1.0)
    ],
}


def _writer_columns(slug: str, name: str) -> list[str]:
    """The columns the paper's report.py passes for ``name`` (``"name.csv": (rows, [columns])``)."""
    source = (ROOT / "flows" / slug.replace("-", "_") / "report.py").read_text()
    match = re.search(rf'"{re.escape(name)}": \(.*?(\[[^\[\]]*\]),?\s*\)', source, re.S)
    assert match, f"flows/{slug}/report.py writes no {name}"
    columns = ast.literal_eval(re.sub(r"\*\w+,?", "", match.group(1)))  # a spread (*KEYS) is checked below
    return columns


def _plots() -> dict[str, dict]:
    out = {}
    for entry in stage_entries().values():
        for plot in entry.get("plots", []):
            out.update(plot)
    return out


def test_fixture_rows_cover_every_plot_with_the_writers_columns():
    assert {f"reports/{k.replace('/', '/plots/', 1)}" for k in ROWS} == set(_plots())
    for key, rows in ROWS.items():
        slug, name = key.split("/")
        for column in _writer_columns(slug, name):
            assert all(column in row for row in rows), (key, column)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("plots")
    subprocess.run([str(DVC), "init", "--no-scm", "-q"], cwd=root, check=True)
    shutil.copy(ROOT / "dvc.yaml", root / "dvc.yaml")
    shutil.copytree(ROOT / ".dvc" / "plots", root / ".dvc" / "plots", dirs_exist_ok=True)
    for key, rows in ROWS.items():
        slug, name = key.split("/")
        path = root / "reports" / slug / "plots" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        columns = list(rows[0])
        lines = [",".join(columns)] + [",".join(str(r[c]) for c in columns) for r in rows]
        path.write_text("\n".join(lines) + "\n")
    proc = subprocess.run([str(DVC), "plots", "show", "--json"], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert not out.get("errors"), out["errors"]
    return out["data"]


@pytest.mark.parametrize("path", sorted(_plots()))
def test_every_dvc_plot_has_data_on_both_axes(rendered, path):
    (plot,) = rendered[path]
    check_plot(path, plot["content"])


def test_series_plots_colour_by_their_column_not_by_revision(rendered):
    for path, props in _plots().items():
        (plot,) = rendered[path]
        color = encoding(plot["content"]).get("color", {})
        rows = plot["content"]["data"]["values"]
        series = [c for c in ("method", "set", "model", "intervention", "graph", "domain") if c in rows[0]]
        if series and series[0] not in (props["x"], props["y"]):
            assert color.get("field") == series[0], f"{path}: coloured by {color.get('field')!r}, not {series[0]!r}"
