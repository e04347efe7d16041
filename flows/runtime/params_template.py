"""The params.yaml template: every key of a paper's params model, ``null`` meaning "the profile's preset".

A map-valued param (``methods: dict[str, MethodParams]``, ``seeds: dict[str, Seeds]``) is listed with the
entries its presets and default give (each entry's own keys null), so ``dvc exp run -S
optimistic-o2nc.methods.odog.eta=1.0`` finds the key (DVC refuses to set a key that params.yaml lacks). An entry
that some profile's preset lacks stays out of that profile's params while it is all null
(:func:`drop_unset_entries`), so the filled-in template resolves to exactly the preset. A list (CER-GOD's
``graphs``) stays one value: ``-S`` sets it whole.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel


class MapTemplate(dict):
    """The template of a map-valued param: its entries are names, not fixed keys, so regenerating params.yaml
    keeps a user's own entries (``_keep_known`` in ``flows.cli_views``)."""


def _model(ann: Any) -> type[BaseModel] | None:
    return ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None


def _map_value(ann: Any) -> tuple[bool, Any]:
    """(True, value type) for ``dict[str, X]`` (also inside ``Annotated`` or ``| None``), else (False, None)."""
    origin = typing.get_origin(ann)
    if origin is typing.Annotated:
        return _map_value(typing.get_args(ann)[0])
    if origin is dict:
        args = typing.get_args(ann)
        return True, args[1] if len(args) == 2 else Any
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(ann):
            found, value = _map_value(arg)
            if found:
                return True, value
    return False, None


def _mappings(values: Sequence[Any]) -> list[Mapping[str, Any]]:
    return [v for v in values if isinstance(v, Mapping)]


def null_template(model: type[BaseModel], presets: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The params.yaml section for a model: every leaf key present with ``null`` ("use the preset"); a
    map-valued field lists the entries of ``presets`` (the model's section in each profile) and of its default."""
    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        ann = field.annotation
        below = [p.get(name) for p in _mappings(presets)]
        sub = _model(ann)
        is_map, value_type = _map_value(ann)
        if sub is not None:
            out[name] = null_template(sub, _mappings(below))
        elif is_map:
            default = None if field.is_required() else field.get_default(call_default_factory=True)
            sources = _mappings([*below, default])
            keys = dict.fromkeys(str(k) for source in sources for k in source)
            entry = _model(value_type)
            entries = MapTemplate(
                (k, null_template(entry, _mappings([_dump(s.get(k)) for s in sources])) if entry else None)
                for k in keys
            )
            out[name] = entries or None  # a map no preset fills: one value, as before
        else:
            out[name] = None
    return out


def _dump(value: Any) -> Any:
    return value.model_dump() if isinstance(value, BaseModel) else value


def _all_null(node: Any) -> bool:
    if isinstance(node, Mapping):
        return all(_all_null(v) for v in node.values())
    return node is None


def drop_unset_entries(model: type[BaseModel], section: Mapping[str, Any], preset: Mapping[str, Any]) -> dict:
    """``section`` (params.yaml's, for ``model``) without the all-null entries of its map-valued params that
    ``preset`` lacks: a template entry listed for another profile adds nothing to this one."""
    out = dict(section)
    for name, field in model.model_fields.items():
        value = out.get(name)
        if not isinstance(value, Mapping):
            continue
        base = preset.get(name) if isinstance(preset.get(name), Mapping) else {}
        sub = _model(field.annotation)
        is_map, value_type = _map_value(field.annotation)
        if sub is not None:
            out[name] = drop_unset_entries(sub, value, base)
        elif is_map:
            entry = _model(value_type)
            out[name] = {
                k: drop_unset_entries(entry, v, base.get(k) or {}) if entry and isinstance(v, Mapping) else v
                for k, v in value.items()
                if k in base or not _all_null(v)
            }
            if not out[name] and name not in preset:  # nothing set: the field keeps its own default
                del out[name]
    return out
