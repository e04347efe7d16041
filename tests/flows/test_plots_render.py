"""Every DVC plot renders with data on both axes (issue 47): `dvc plots show --json` over the committed dvc.yaml
and .dvc/plots/ templates, fed with rows shaped like each report stage writes them (columns read from the
writer's code, value types as it writes them), must give a Vega-Lite spec whose x, y and colour fields exist in
every row, with numbers wherever an axis is quantitative (positive ones on a log axis)."""

from __future__ import annotations

import ast
import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from flows.dvcgen import stage_entries

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


def _numeric(value) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _encoding(spec: dict) -> dict:
    """The spec's encoding channels, a layered spec's (DVC's ``linear``) merged from its layers, outer first."""
    enc = dict(spec.get("encoding", {}))
    for layer in spec.get("layer", []):
        for channel, value in _encoding(layer).items():
            enc.setdefault(channel, value)
    return enc


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


def test_a_smoke_runs_real_plot_renders_with_data_on_both_axes(smoke_run):
    root, _ = smoke_run
    path = "reports/qualitypajama/plots/loss_vs_compute.csv"
    proc = subprocess.run([str(DVC), "plots", "show", "--json", path], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (plot,) = json.loads(proc.stdout)["data"][path]
    check_plot(path, plot["content"])
    assert _encoding(plot["content"])["color"]["field"] == "intervention"


def check_plot(path: str, spec: dict) -> None:
    """The rendered Vega-Lite ``spec`` has rows, and x, y, colour and offset fields in every row; quantitative
    axes hold numbers (positive on a log scale); a category axis of numbers is ordered (bins, not classes)."""
    rows = spec["data"]["values"]
    assert rows, f"{path}: no data"
    enc = _encoding(spec)
    for channel in ("x", "y", "color", "xOffset", "yOffset"):
        field = enc.get(channel, {}).get("field")
        if not field:
            continue
        assert all(field in row and str(row[field]) != "" for row in rows), f"{path}: {channel} field {field!r}"
        if channel in ("x", "y") and enc[channel]["type"] == "quantitative":
            bad = [row[field] for row in rows if not _numeric(row[field])]
            assert not bad, f"{path}: {channel} is quantitative but {field!r} holds {bad[:3]}"
            if enc[channel].get("scale", {}).get("type") == "log":
                assert all(float(row[field]) > 0 for row in rows), f"{path}: log {channel} with values <= 0"
    types = {enc["x"]["type"], enc["y"]["type"]}
    assert "quantitative" in types, f"{path}: no quantitative axis"
    if types != {"quantitative"}:  # a bar chart: the category axis must not be all numbers counted as classes
        cat = "x" if enc["x"]["type"] != "quantitative" else "y"
        assert enc[cat]["type"] in ("nominal", "ordinal")
        if all(_numeric(row[enc[cat]["field"]]) for row in rows):  # bins, not classes: ordered, e.g. a histogram
            assert enc[cat]["type"] == "ordinal", f"{path}: numbers {enc[cat]['field']!r} shown as unordered classes"


def test_series_plots_colour_by_their_column_not_by_revision(rendered):
    for path, props in _plots().items():
        (plot,) = rendered[path]
        color = _encoding(plot["content"]).get("color", {})
        rows = plot["content"]["data"]["values"]
        series = [c for c in ("method", "set", "model", "intervention", "graph", "domain") if c in rows[0]]
        if series and series[0] not in (props["x"], props["y"]):
            assert color.get("field") == series[0], f"{path}: coloured by {color.get('field')!r}, not {series[0]!r}"
