"""Params of the shared data stages (section ``shared`` of params.yaml)."""

from __future__ import annotations

from pydantic import Field, field_validator

from flows.runtime.params import ProjectPath, Section, check_known

ALL_SOURCES = ["gcide", "wordnet", "linux_docs", "austen", "shakespeare", "kjv", "web"]


class SourcesParams(Section):
    names: list[str] = Field(min_length=1, description="offline sources to extract")
    sources_dir: ProjectPath = Field(
        ".paperline/sources", description="where scripts/fetch_sources.sh puts non-Debian sources"
    )

    @field_validator("names")
    @classmethod
    def _known(cls, names: list[str]) -> list[str]:
        return check_known(names, ALL_SOURCES, "source")


class Params(Section):
    sources: SourcesParams


PRESETS = {
    "smoke": {"sources": {"names": ["wordnet", "austen", "shakespeare", "linux_docs"]}},
    "default": {"sources": {"names": ALL_SOURCES}},
    "full": {"sources": {"names": ALL_SOURCES}},
}
