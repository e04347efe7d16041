"""Params: profiles, params.yaml, ``--set`` overrides, and validation before any work.

Resolution order for one paper (later wins):
1. the profile's preset (``smoke``, ``default`` or ``full``), declared in the paper's params module;
2. explicit (non-null) values in the paper's section of ``params.yaml`` (``null`` means "the preset");
3. ``--set key=value`` on the command line.

The merged dict is validated by the paper's pydantic model (unknown keys are
forbidden), and any problem is reported as one line naming the key path.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from components.errors import ParamsError

PROFILES = ("smoke", "default", "full")


class Section(BaseModel):
    """Base for every params (sub)section: unknown keys are errors, values are validated on assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)


def check_known(values: list[str], allowed, what: str) -> list[str]:
    """For field validators: every value must be one of ``allowed`` (the error lists them)."""
    bad = [v for v in values if v not in allowed]
    if bad:
        raise ValueError(f"unknown {what}(s) {bad}; use {list(allowed)}")
    return values


def check_profile(profile: str) -> str:
    if profile not in PROFILES:
        raise ParamsError(f"unknown profile {profile!r}; choose one of: {', '.join(PROFILES)}")
    return profile


def load_params_file(path: Path) -> dict[str, Any]:
    """Read params.yaml; a missing file is an empty mapping, a corrupt one an error naming it."""
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ParamsError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise ParamsError(f"{path}: expected a mapping at the top level")
    return data


def parse_overrides(items: Iterable[str], slug: str) -> dict[str, Any]:
    """Turn ``["training.lr=3e-4", ...]`` into a nested dict; values are parsed as YAML scalars/lists."""
    nested: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ParamsError(f"--set {item!r}: expected KEY=VALUE (for example training.lr=3e-4)")
        key, raw = item.split("=", 1)
        key = key.strip()
        if key.startswith(slug + "."):
            key = key[len(slug) + 1 :]
        if not key or any(not part for part in key.split(".")):
            raise ParamsError(f"--set {item!r}: empty key")
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        _set_path(nested, key.split("."), value)
    return nested


def _set_path(tree: dict[str, Any], parts: list[str], value: Any) -> None:
    for part in parts[:-1]:
        tree = tree.setdefault(part, {})
        if not isinstance(tree, dict):
            raise ParamsError(f"--set {'.'.join(parts)}: {part!r} is not a section")
    tree[parts[-1]] = value


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any], *, skip_none: bool) -> dict[str, Any]:
    """Merge ``top`` onto ``base`` recursively; with ``skip_none`` a None in ``top`` keeps ``base``."""
    out = copy.deepcopy(dict(base))
    for key, value in top.items():
        if value is None and skip_none:
            continue
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value, skip_none=skip_none)
        else:
            out[key] = copy.deepcopy(value)
    return out


def format_validation_error(exc: ValidationError, slug: str) -> str:
    """One line per problem: ``slug.key.path: reason (got value)``."""
    lines = []
    for err in exc.errors():
        path = ".".join(str(p) for p in (slug, *err["loc"]))
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        got = err.get("input")
        suffix = f" (got {got!r})" if err["type"] != "extra_forbidden" and not isinstance(got, dict) else ""
        lines.append(f"{path}: {msg}{suffix}")
    return "; ".join(lines)


def resolve(
    model: type[BaseModel],
    presets: Mapping[str, Mapping[str, Any]],
    *,
    slug: str,
    profile: str,
    file_section: Mapping[str, Any] | None = None,
    overrides: Iterable[str] = (),
) -> BaseModel:
    """Validate preset ← params.yaml ← --set for one paper, failing before any work."""
    check_profile(profile)
    if file_section is not None and not isinstance(file_section, Mapping):
        raise ParamsError(f"params.yaml: section {slug!r} must be a mapping")
    merged = deep_merge(presets[profile], file_section or {}, skip_none=True)
    merged = deep_merge(merged, parse_overrides(overrides, slug), skip_none=False)
    try:
        return model.model_validate(merged)
    except ValidationError as exc:
        raise ParamsError(format_validation_error(exc, slug)) from None


def null_template(model: type[BaseModel]) -> dict[str, Any]:
    """The params.yaml section for a model: every leaf key present with ``null`` ("use the preset")."""
    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out[name] = null_template(ann)
        else:
            out[name] = None
    return out
