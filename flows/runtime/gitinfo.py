"""Git facts for run tags: the commit and whether the tree was dirty."""

from __future__ import annotations

import subprocess
from pathlib import Path


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def git_state(root: Path) -> dict[str, str]:
    """``{"git_commit": sha or "none", "git_dirty": "true"|"false"|"unknown"}``."""
    commit = _git(root, "rev-parse", "HEAD")
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    dirty = "unknown" if status is None else str(bool(status)).lower()
    return {"git_commit": commit or "none", "git_dirty": dirty}
