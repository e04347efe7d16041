"""One entry point per method: apply a batch edit to a model and undo it afterwards.

``apply_edit`` takes the keys and residuals of :mod:`components.editing.targets` and the generic-key
statistics, and returns an :class:`AppliedEdit` whose ``undo()`` restores the unedited model exactly
(MEMIT and AlphaEdit write ``W + D`` and keep the original ``W``; NeuralDB attaches a hook).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from components.editing.alphaedit import alphaedit_update, null_space_projector
from components.editing.memit import memit_update, second_moment
from components.editing.model import EditSite
from components.editing.neuraldb import NeuralKVDB
from components.errors import ParamsError

METHODS = ("unedited", "memit", "alphaedit", "neuraldb")


@dataclass
class KeyStats:
    """Generic-key statistics shared by the methods: second moment, mean, AlphaEdit's projector."""

    cov: torch.Tensor
    mean: torch.Tensor
    projector: torch.Tensor
    null_threshold: float = 1e-2
    _projectors: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_keys(cls, k0: torch.Tensor, *, null_threshold: float = 1e-2) -> KeyStats:
        cov = second_moment(k0)
        return cls(
            cov,
            k0.double().mean(0).float(),
            null_space_projector(cov, rel_threshold=null_threshold),
            float(null_threshold),
        )

    def projector_at(self, threshold: float | None) -> torch.Tensor:
        """AlphaEdit's projector at another relative threshold (``None``: the one built with the stats), cached."""
        if threshold is None or float(threshold) == self.null_threshold:
            return self.projector
        t = float(threshold)
        if t not in self._projectors:
            self._projectors[t] = null_space_projector(self.cov, rel_threshold=t)
        return self._projectors[t]

    def null_space(self, threshold: float | None = None) -> dict:
        """Dimension of AlphaEdit's null space and the share of the generic keys' energy E[|k|^2] inside it."""
        p = self.projector_at(threshold)
        c = self.cov.double()
        return {
            "dim": int(round(float(torch.trace(p)))),
            "key_dim": int(c.shape[0]),
            "energy_share": float(torch.trace(p.double() @ c) / torch.trace(c)),
        }


@dataclass
class AppliedEdit:
    method: str
    site: EditSite
    original: torch.Tensor | None = None
    db: NeuralKVDB | None = None
    info: dict = field(default_factory=dict)

    def undo(self) -> None:
        """Restore the unedited model."""
        if self.original is not None:
            self.site.set_weight(self.original)
            self.original = None
        if self.db is not None:
            self.db.detach()


def apply_edit(
    model: nn.Module,
    site: EditSite,
    method: str,
    *,
    ids: Sequence[str],
    keys: torch.Tensor,
    residuals: torch.Tensor,
    stats: KeyStats,
    mom2_weight: float = 15000.0,
    alpha: float = 10.0,
    gamma: float = 0.8,
    gate: str = "hard",
    temperature: float = 0.02,
    index: str = "exact",
    null_threshold: float | None = None,
) -> AppliedEdit:
    """Edit ``model`` at ``site`` with ``method`` (one of METHODS).

    ``null_threshold`` (AlphaEdit) picks the projector at that relative threshold; ``None`` keeps the stats' one.
    """
    if method not in METHODS:
        raise ParamsError(f"method: unknown {method!r}; use one of {METHODS}")
    edit = AppliedEdit(method, site)
    if method == "unedited":
        return edit
    if method == "neuraldb":
        db = NeuralKVDB(stats.mean, gamma=gamma, gate=gate, temperature=temperature, index=index)
        db.add(list(ids), keys, residuals)
        db.attach(site)
        edit.db = db
        edit.info = {"stored_facts": len(db), "memory_bytes": db.memory_bytes()}
        return edit
    w = site.weight.clone()
    if method == "memit":
        delta = memit_update(keys, residuals, stats.cov, lam=mom2_weight)
    else:
        delta = alphaedit_update(keys, residuals, stats.projector_at(null_threshold), alpha=alpha)
    site.set_weight((w.double() + delta).to(w.dtype))
    edit.original = w
    edit.info = {"update_norm": float(delta.norm()), "weight_norm": float(w.norm())}
    return edit


@contextlib.contextmanager
def edited(model: nn.Module, site: EditSite, method: str, **kw) -> Iterator[AppliedEdit]:
    """``with edited(model, site, "memit", ids=..., keys=..., residuals=..., stats=...):`` then undone."""
    edit = apply_edit(model, site, method, **kw)
    try:
        yield edit
    finally:
        edit.undo()
