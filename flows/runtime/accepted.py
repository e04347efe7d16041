"""What a passing run is accepted as: its champion (``@champion``) and its claims' verdicts, in the model registry.

A run that is not a smoke run and passes every stage registers each stage's champion and stores its
verdicts as the registered model's tag ``accepted.verdicts`` (JSON ``{claim id: verdict}``; a paper
without a trained champion gets a registered model that holds only tags). A scheduled rerun of the whole
paper (``paperline schedule <paper>``) runs in ``compare`` mode: when a verdict differs from the accepted
one, nothing is accepted and the flow fails with one line naming each claim, the accepted and the new
verdict: a regression of the reproduction. A run by hand (``paperline run``) accepts, and logs the changes.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from components.errors import PaperlineError

log = logging.getLogger("paperline")
TAG = "accepted.verdicts"
# the registered model's accepted.* tags that are not accepted metric values (the champion's metrics are the rest)
NOT_METRICS = frozenset({TAG, "accepted.run_id", "accepted.version"})
MODES = ("accept", "compare")


class VerdictChanged(PaperlineError):
    """A scheduled rerun's verdicts differ from the accepted ones."""


def verdicts_of(claims_json: Path) -> dict[str, str]:
    """``{claim id: verdict}`` of a report's claims.json (parts included: ``C1/ndcg``)."""
    doc = json.loads(Path(claims_json).read_text())
    claims = doc["claims"] if isinstance(doc, dict) else doc
    return {str(c["id"]): str(c["verdict"]) for c in claims}


def changes(accepted: dict[str, str], new: dict[str, str]) -> list[str]:
    """One line per claim whose verdict differs, appeared or went: ``C2: reproduced -> not reproduced``."""
    return [
        f"{cid}: {accepted.get(cid, '(none)')} -> {new.get(cid, '(none)')}"
        for cid in sorted(set(accepted) | set(new))
        if accepted.get(cid) != new.get(cid)
    ]


def accepted_verdicts(client, paper: str) -> dict[str, str] | None:
    """The verdicts last accepted for ``paper``; None when none were (no registered model, or no tag)."""
    try:
        model = client.get_registered_model(paper)
    except Exception:
        return None
    raw = (model.tags or {}).get(TAG)
    return json.loads(raw) if raw else None


def accept_verdicts(client, paper: str, verdicts: dict[str, str], run_id: str) -> None:
    """Store ``verdicts`` as ``paper``'s accepted ones (creating the registered model if it has no champion)."""
    try:
        client.get_registered_model(paper)
    except Exception:
        client.create_registered_model(paper, description=f"{paper}: accepted verdicts (and @champion where trained)")
    client.set_registered_model_tag(paper, TAG, json.dumps(verdicts, sort_keys=True))
    client.set_registered_model_tag(paper, "accepted.run_id", run_id)


def settle(
    tracker,
    slug: str,
    results: dict[str, Any],
    profile: str,
    claims_json: Path | None,
    mode: str,
    *,
    variant: str | None = None,
) -> None:
    """After every stage passed: compare the verdicts with the accepted ones, then accept the run (champions and
    verdicts), unless it is a smoke run or a variant (a run with overrides, ``flows.runtime.variants``), or
    ``mode`` is ``compare`` and a verdict changed (VerdictChanged)."""
    from flows.runtime.tracking import register_champion

    if tracker is None:
        return
    candidates = {key.split(":")[0]: s["champion"] for key, s in results.items() if isinstance(s.get("champion"), dict)}
    why_not = "smoke profile" if profile == "smoke" else f"variant {variant}" if variant else None
    if why_not:  # the candidate stays on record (artifact champion/<model>.json) for whoever promotes it
        for model, champion in candidates.items():
            log.info("%s: @champion not moved (%s)", model, why_not)
            tracker.set_tag(f"champion.{model}", f"not moved: {why_not}")
            tracker.log_json(champion, f"champion/{model}.json")
        return
    verdicts = verdicts_of(claims_json) if claims_json is not None and claims_json.is_file() else None
    if verdicts is not None:
        before = accepted_verdicts(tracker.client, slug)
        changed = changes(before, verdicts) if before is not None else []
        if changed:
            tracker.set_tag("verdict_changes", "; ".join(changed)[:4000])
            if mode == "compare":
                raise VerdictChanged(f"{slug}: verdicts changed since the accepted run: " + "; ".join(changed))
            log.info("%s: verdicts changed since the accepted run (now accepted): %s", slug, "; ".join(changed))
    for model, champion in candidates.items():
        version = register_champion(tracker, model, champion)
        tracker.set_tag(f"champion.{model}", f"version {version}")
    if verdicts is not None:
        accept_verdicts(tracker.client, slug, verdicts, tracker.run_id)
