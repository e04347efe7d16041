"""Where a run with overrides puts its report: ``reports/<paper>/variants/<name>/``, beside the default's.

A ``paperline run <paper> --set key=value`` (or a deployment with overrides) is a variant of the paper's
configuration. Its report, claims.json, metrics.json and figures go to a variant folder named for its overrides,
so the default report stays what it was (``--replace-default`` writes over it instead). Params changed in
``params.yaml`` (``dvc exp run -S``) are not overrides: DVC experiments compare their variants through the
default paths it tracks. A variant run moves neither ``@champion`` nor the accepted verdicts
(``flows.runtime.accepted``): those follow the paper's own configuration.

Only the outputs under ``reports/<paper>/`` move; a variant run's intermediate data (``data/<paper>/``) replaces
the previous run's as any run's does, and the next default run recomputes it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

MAX_NAME = 80


def variant_name(overrides: Sequence[str]) -> str:
    """A folder name for a set of overrides, the same for the same set in any order: ``training.lr-3e-4``,
    several joined by ``__``; characters other than letters, digits, ``.``, ``_``, ``-`` and ``+`` become
    ``-`` (a run of them one); a name longer than ``MAX_NAME`` is cut and ends with a hash of the whole set."""
    parts = sorted(re.sub(r"[^A-Za-z0-9._+]+", "-", item.strip()) for item in overrides)
    name = "__".join(p.strip("-.") or "x" for p in parts)
    if len(name) > MAX_NAME:
        digest = hashlib.md5("\n".join(sorted(overrides)).encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9].rstrip('-._')}-{digest}"
    return name


# Params that change how a run executes, never what it computes: overrides of these alone make no variant.
NOT_RESULTS = ("resources.", "progress")


def run_variant(slug: str, overrides: Sequence[str], *, replace_default: bool) -> str | None:
    """The variant a run of ``slug`` writes its report to: None for a run without overrides (execution-only ones,
    ``NOT_RESULTS``, do not count), or with ``--replace-default``."""
    counted = [item for item in overrides if not _key(slug, item).startswith(NOT_RESULTS)]
    return variant_name(counted) if counted and not replace_default else None


def _key(slug: str, item: str) -> str:
    key = item.split("=", 1)[0].strip()
    return key[len(slug) + 1 :] if key.startswith(f"{slug}.") else key


def route(slug: str, variant: str | None, rel: str) -> str:
    """The path a declared output ``rel`` is written to: under the variant folder when ``rel`` lies in
    ``reports/<slug>/`` and the run is a variant, else ``rel`` itself."""
    base = f"reports/{slug}/"
    if variant is None or not rel.startswith(base):
        return rel
    return f"{base}variants/{variant}/{rel[len(base) :]}"


def report_rel(slug: str, variant: str | None) -> str:
    """The report folder of a run, relative to the checkout."""
    return f"reports/{slug}" if variant is None else f"reports/{slug}/variants/{variant}"
