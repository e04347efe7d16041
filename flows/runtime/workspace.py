"""Scratch copies of a paperline checkout, for benchmarks and tests that run pipelines."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

IGNORE = (".venv", ".git", ".paperline", "data", "reports", "__pycache__", ".pytest_cache", "*.egg-info", "mlflow.db", "mlruns")


def copy_project(src: Path, dest: Path, *, share_sources: bool = True) -> Path:
    """Copy the code, params and dvc.yaml of ``src`` into a fresh git repo at ``dest``.

    Data, reports and runtime state are left behind; the fetched non-Debian
    sources (``.paperline/sources``) are copied so the copy runs offline.
    """
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(*IGNORE), dirs_exist_ok=True)
    for data_readme in ("data/README.md", "reports/README.md"):
        if (src / data_readme).is_file():
            (dest / data_readme).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / data_readme, dest / data_readme)
    git = ["git", "-c", "user.email=paperline@localhost", "-c", "user.name=paperline"]
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], [*git, "commit", "-qm", "scratch copy"]):
        subprocess.run(cmd, cwd=dest, check=True, capture_output=True)
    sources = src / ".paperline" / "sources"
    if share_sources and sources.is_dir():
        shutil.copytree(sources, dest / ".paperline" / "sources", dirs_exist_ok=True)
    return dest


def set_profile(root: Path, profile: str) -> None:
    """Set the top-level ``profile`` in a checkout's params.yaml (keeps comments)."""
    path = root / "params.yaml"
    lines = path.read_text().splitlines()
    lines = [f"profile: {profile}" if line.startswith("profile:") else line for line in lines]
    path.write_text("\n".join(lines) + "\n")
