"""Shared data stages that several papers read."""

from __future__ import annotations

from flows.specs import StageSpec

STAGES = (
    StageSpec(
        name="sources",
        module="flows.shared.sources",
        deps=("flows/shared/sources.py", "flows/shared/params.py", "components/data/corpus"),
        params=("profile", "shared.sources"),
        outs=("data/sources",),
        summary="extract the offline English sources (Debian docs, GCIDE, WordNet, Austen, Shakespeare, Bibles) "
        "to JSONL",
    ),
)
