"""Machine-unlearning methods behind one interface (framework-free).

Every method module exposes ``Config`` (a dataclass) and
``unlearn(model, *, forget_loss, retain_loss, batches, budget, cfg, callback, progress, ref_model)``
that updates ``model`` in place and spends exactly ``budget`` gradient
evaluations (see :mod:`components.unlearning.base` for the unit).
"""

from __future__ import annotations

import importlib
from dataclasses import fields
from typing import Any

from components.errors import ParamsError

METHODS = {"ga": "gradient_ascent", "graddiff": "graddiff", "npo": "npo", "ofmu": "ofmu"}


def method_module(kind: str):
    if kind not in METHODS:
        raise ParamsError(f"unknown unlearning method {kind!r}; use one of {list(METHODS)}")
    return importlib.import_module(f"components.unlearning.{METHODS[kind]}")


def make_config(kind: str, options: dict[str, Any]):
    """The method's Config from a dict, rejecting unknown keys by name."""
    mod = method_module(kind)
    known = {f.name for f in fields(mod.Config)}
    bad = sorted(set(options) - known)
    if bad:
        raise ParamsError(f"{kind}: unknown option(s) {bad}; known: {sorted(known)}")
    return mod.Config(**options)


def step_cost(kind: str, cfg) -> int:
    """Gradient evaluations per step (per round for OFMU): budgets must be multiples of it."""
    mod = method_module(kind)
    return mod.round_cost(cfg) if kind == "ofmu" else mod.COST


def run_method(kind: str, model, *, cfg=None, **kwargs):
    """Dispatch to ``components.unlearning.<method>.unlearn``."""
    return method_module(kind).unlearn(model, cfg=cfg, **kwargs)
