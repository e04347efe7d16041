"""The package versions a re-evaluation depended on, and what changed between two evaluations.

Recorded beside every recurring-evaluation point, so a regression can be traced to an upgrade (a new torch
kernel, a new Gymnasium physics step) rather than only to the model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib import metadata

# Every evaluation depends on these; each paper's evaluator adds its field libraries (champion.LIBRARIES).
BASE = ("torch", "numpy", "scikit-learn", "transformers", "mlflow")


def versions(libraries: Iterable[str] = ()) -> dict[str, str]:
    """``{distribution: version}`` for the base set and ``libraries`` ("absent" where not installed)."""
    out = {}
    for name in dict.fromkeys([*BASE, *libraries]):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def changes(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """``["torch 2.13.0 -> 2.14.0", ...]`` for every package whose version differs (or appeared, or went)."""
    return [
        f"{name} {before.get(name, 'absent')} -> {after.get(name, 'absent')}"
        for name in sorted(set(before) | set(after))
        if before.get(name, "absent") != after.get(name, "absent")
    ]
