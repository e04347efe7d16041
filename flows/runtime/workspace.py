"""Scratch copies of a paperline checkout, for benchmarks and tests that run pipelines."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def project_files(src: Path) -> list[str]:
    """Files git would carry: tracked plus untracked-but-not-ignored (so data, state and venvs stay behind), less
    the untracked reports of runs (``reports/<paper>/metrics.json``, which git does not ignore so that DVC
    experiments commit it): a scratch copy starts with no results."""

    def listed(*args: str) -> list[str]:
        out = subprocess.run(["git", "ls-files", *args, "-z"], cwd=src, check=True, capture_output=True, text=True)
        return [f for f in out.stdout.split("\0") if f]

    untracked = [f for f in listed("--others", "--exclude-standard") if not f.startswith("reports/")]
    return [f for f in dict.fromkeys([*listed("--cached"), *untracked]) if (src / f).is_file()]


def copy_project(src: Path, dest: Path, *, share_sources: bool = True) -> Path:
    """Copy the code, params and dvc.yaml of ``src`` into a fresh git repo at ``dest``.

    Data, reports and runtime state (git-ignored) are left behind; the fetched
    non-Debian sources (``.paperline/sources``) are copied so the copy runs offline.
    """
    for rel in project_files(src):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, target)
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
