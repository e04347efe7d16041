"""Lint and format: ``ruff check .`` and ``ruff format --check .`` find nothing (config: pyproject.toml's [tool.ruff]).

``make lint`` (or ``make format``) applies ruff's safe fixes and its formatter; what is left needs a hand.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _ruff(*args: str) -> subprocess.CompletedProcess:
    # A missing ruff is a broken dev install, not an optional extra: fail (a skip would let style drift unseen).
    if importlib.util.find_spec("ruff") is None:
        pytest.fail("ruff is not installed in this environment; run `make setup` (it installs the dev extra)")
    # --no-cache: the test leaves no .ruff_cache in the tree; the whole repo takes well under a second anyway.
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--no-cache", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_ruff_check_finds_nothing():
    result = _ruff("check")
    if result.returncode != 0:
        pytest.fail(f"`ruff check .` found problems (`make lint` fixes the safe ones):\n{result.stdout}{result.stderr}")


def test_ruff_format_finds_nothing_to_reformat():
    result = _ruff("format", "--check")
    if result.returncode != 0:
        pytest.fail(f"`ruff format --check .` would reformat (`make format` does it):\n{result.stdout}{result.stderr}")
