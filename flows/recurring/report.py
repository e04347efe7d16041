"""The recurring evaluation's report: each paper's metric history from MLflow, latest verdict first, with the
package upgrades between two evaluations marked on the row where they first appear."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from components.io import write_json, write_text
from components.registry_eval.environment import changes


def load_history(client, exp_id: str, paper: str, limit: int) -> list[dict[str, Any]]:
    """The last ``limit`` evaluations of ``paper`` (oldest first) as rows: time, version, metrics, regressed."""
    runs = client.search_runs(
        [exp_id], filter_string=f"tags.paper = '{paper}'", order_by=["attributes.start_time DESC"], max_results=limit
    )
    rows = [
        {
            "time": dt.datetime.fromtimestamp(r.info.start_time / 1000, dt.UTC).isoformat(timespec="seconds"),
            "version": r.data.tags.get("model_version", ""),
            "regressed": r.data.tags.get("regressed") == "true",
            "packages": {k.split(".", 1)[1]: v for k, v in r.data.tags.items() if k.startswith("version.")},
            **r.data.metrics,
        }
        for r in runs
    ]
    rows = rows[::-1]
    for before, row in zip([None, *rows], rows):  # upgrades since the previous evaluation
        row["environment"] = changes(before["packages"], row["packages"]) if before and row["packages"] else []
    return rows


def write_report(client, exp_id: str, folder: Path, results: dict[str, Any], *, history: int) -> Path:
    """Write ``report.md`` (history tables) and ``history.json`` into ``folder``."""
    lines = ["# Recurring evaluation", ""]
    data = {}
    for paper, res in results.items():
        if res.get("error"):
            data[paper] = {"latest": res, "history": []}
            lines += [f"## {paper}: NOT EVALUATED: {res['error']}", ""]
            continue
        rows = load_history(client, exp_id, paper, history)
        data[paper] = {"latest": res, "history": rows}
        verdict = "REGRESSED: " + "; ".join(res["regressions"]) if res["regressions"] else "within tolerance"
        took = f" in {res['seconds']:.1f} s" if "seconds" in res else ""
        lines += [
            f"## {paper} (model version {res['version']}): {verdict}",
            "",
            f"Re-evaluated{took} (load, recompute, compare).",
            "",
        ]
        metrics = sorted(res["accepted"])
        lines.append("| time (UTC) | version | " + " | ".join(metrics) + " | regressed | package changes |")
        lines.append("|---|---|" + "---|" * len(metrics) + "---|---|")
        lines.append("| accepted | | " + " | ".join(f"{res['accepted'][m]:.5g}" for m in metrics) + " | | |")
        for row in rows:
            vals = " | ".join(f"{row[m]:.5g}" if m in row else "" for m in metrics)
            lines.append(
                f"| {row['time']} | {row['version']} | {vals} | {'yes' if row['regressed'] else 'no'} | "
                f"{', '.join(row['environment'])} |"
            )
        if res.get("versions"):
            lines += [
                "",
                "Packages of the latest evaluation: "
                + ", ".join(f"{k} {v}" for k, v in sorted(res["versions"].items())),
            ]
        lines.append("")
    write_json(folder / "history.json", data)
    write_text(folder / "report.md", "\n".join(lines))
    return folder / "report.md"
