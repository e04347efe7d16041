"""NeuralDB: edited facts stored as an explicit key-value table with non-linear gated retrieval.

The table holds each edit's key ``k_i`` (mean-centred with the generic-key mean ``mu`` and L2-normalised)
and residual ``r_i = v_hat_i - W k_i``. At inference, for every hidden key ``k`` entering the edited
projection: ``j = argmax_i cos(k - mu, k_i)`` and the output becomes ``W k + g * r_j`` with the hard gate
``g = 1[cos_j > gamma]`` (default) or the soft gate ``sigmoid((cos_j - gamma) / T)``. Below the threshold
the layer's output is returned unchanged (bit for bit: nothing is added there). No training; the base
weights never change, so removing an edit (or detaching the hook) restores the original model exactly.

The argmax is an exact search by default (``index="exact"``, a chunked matrix product). ``index="hnsw"``
searches a faiss HNSW graph over the same normalised keys (inner product = cosine): approximate, but its cost
grows with log N instead of N, which matters at 100,000 stored facts (``benchmarks/editing.py``). faiss is
used rather than a hand-written graph because it is the maintained reference implementation of HNSW.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn

from components.editing.model import EditSite
from components.errors import DataError, ParamsError

GATES = ("hard", "soft")
INDEXES = ("exact", "hnsw")


class NeuralKVDB:
    """Stored keys and residuals plus the gated retrieval applied as a forward hook on the edited projection."""

    def __init__(
        self,
        key_mean: torch.Tensor,
        *,
        gamma: float,
        gate: str = "hard",
        temperature: float = 0.02,
        chunk: int = 2048,
        index: str = "exact",
        hnsw_m: int = 32,
        ef_search: int = 64,
    ) -> None:
        if gate not in GATES:
            raise ParamsError(f"gate: expected one of {GATES}, got {gate!r}")
        if index not in INDEXES:
            raise ParamsError(f"index: expected one of {INDEXES}, got {index!r}")
        self.index, self.hnsw_m, self.ef_search, self._hnsw = index, int(hnsw_m), int(ef_search), None
        if not -1.0 <= gamma <= 1.0:
            raise ParamsError(f"gamma: a cosine threshold in [-1, 1], got {gamma}")
        if temperature <= 0:
            raise ParamsError(f"temperature: must be > 0, got {temperature}")
        self.mu = key_mean.detach().float().flatten()
        self.gamma, self.gate, self.temperature, self.chunk = float(gamma), gate, float(temperature), int(chunk)
        self.ids: list[str] = []
        self.keys = torch.zeros(0, self.mu.numel())
        self.residuals: torch.Tensor | None = None
        self._handle = None

    def __len__(self) -> int:
        return len(self.ids)

    def _normalise(self, k: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.normalize(k.float() - self.mu, dim=-1)

    def add(self, ids: Sequence[str], keys: torch.Tensor, residuals: torch.Tensor) -> None:
        """Store edits; an id already stored is overwritten (last wins)."""
        if len(ids) != keys.shape[0] or keys.shape[0] != residuals.shape[0]:
            raise DataError(f"add: {len(ids)} ids, {keys.shape[0]} keys and {residuals.shape[0]} residuals differ")
        if keys.shape[1] != self.mu.numel():
            raise DataError(f"add: keys have width {keys.shape[1]}, the table {self.mu.numel()}")
        if self.residuals is not None and residuals.shape[1] != self.residuals.shape[1]:
            raise DataError(f"add: residual width {residuals.shape[1]} != stored {self.residuals.shape[1]}")
        last = {i: n for n, i in enumerate(ids)}  # within one call the last request of an id wins too
        self.remove([i for i in last if i in set(self.ids)])
        order = sorted(last.values())
        self.ids += [ids[n] for n in order]
        self.keys = torch.cat([self.keys, self._normalise(keys[order])])
        new_r = residuals[order].detach().float()
        self.residuals = new_r if self.residuals is None else torch.cat([self.residuals, new_r])
        self._hnsw = None

    def remove(self, ids: Sequence[str]) -> int:
        """Delete stored edits by id; returns how many were removed (unknown ids are ignored)."""
        drop = set(ids)
        keep = [n for n, i in enumerate(self.ids) if i not in drop]
        removed = len(self.ids) - len(keep)
        self.ids = [self.ids[n] for n in keep]
        self.keys = self.keys[keep]
        if self.residuals is not None:
            self.residuals = self.residuals[keep]
        self._hnsw = None
        return removed

    def _hnsw_search(self, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Approximate best cosine and index per normalised query, from a faiss HNSW graph (built lazily)."""
        try:
            import faiss
        except ImportError:
            raise ParamsError("index 'hnsw' needs faiss-cpu (pip install faiss-cpu==1.15.1)") from None
        if self._hnsw is None:
            self._hnsw = faiss.IndexHNSWFlat(self.keys.shape[1], self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            self._hnsw.add(self.keys.numpy().astype("float32"))
        self._hnsw.hnsw.efSearch = self.ef_search
        d, i = self._hnsw.search(q.detach().numpy().astype("float32"), 1)
        return torch.from_numpy(d[:, 0]).float(), torch.from_numpy(i[:, 0]).long()

    def retrieve(self, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """For keys (N, d_in): best cosine, its index and the gate value (N,)."""
        if not self.ids:
            z = torch.zeros(k.shape[0])
            return z - 1, z.long(), z
        if self.index == "hnsw":
            b, j = self._hnsw_search(self._normalise(k))
        else:
            best, idx = [], []
            for i in range(0, k.shape[0], self.chunk):
                c = self._normalise(k[i : i + self.chunk]) @ self.keys.T
                bi, ji = c.max(dim=1)
                best.append(bi)
                idx.append(ji)
            b, j = torch.cat(best), torch.cat(idx)
        g = (b > self.gamma).float() if self.gate == "hard" else torch.sigmoid((b - self.gamma) / self.temperature)
        return b, j, g

    def delta(self, k: torch.Tensor) -> torch.Tensor:
        """The added output ``g * r_j`` for keys of any leading shape (..., d_in)."""
        flat = k.reshape(-1, k.shape[-1])
        _, j, g = self.retrieve(flat)
        d_out = self.residuals.shape[1] if self.residuals is not None else 0
        out = torch.zeros(flat.shape[0], d_out)
        on = g > 0
        if on.any():
            out[on] = g[on, None] * self.residuals[j[on]]
        return out.reshape(*k.shape[:-1], d_out)

    def _hook(self, module: nn.Module, args: tuple, out: torch.Tensor) -> torch.Tensor:
        if not self.ids:
            return out
        flat_in = args[0].reshape(-1, args[0].shape[-1])
        _, j, g = self.retrieve(flat_in)
        on = torch.nonzero(g > 0).flatten()
        if on.numel() == 0:
            return out  # nothing retrieved: the layer's output, untouched
        flat_out = out.reshape(-1, out.shape[-1]).clone()
        flat_out[on] = flat_out[on] + (g[on, None] * self.residuals[j[on]]).to(out.dtype)
        return flat_out.reshape(out.shape)

    def attach(self, site: EditSite) -> None:
        """Apply the table at ``site`` (a forward hook); call :meth:`detach` to restore the model."""
        if self._handle is not None:
            raise DataError("NeuralKVDB is already attached; detach it first")
        self._handle = site.module.register_forward_hook(self._hook)

    def detach(self) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def memory_bytes(self) -> int:
        """Bytes held by the stored keys and residuals, plus the HNSW graph (its own copy of the keys) once built."""
        r = self.residuals.numel() * self.residuals.element_size() if self.residuals is not None else 0
        graph = 0
        if self._hnsw is not None:
            import faiss

            graph = int(faiss.serialize_index(self._hnsw).nbytes)
        return self.keys.numel() * self.keys.element_size() + r + graph


# --- the edited model saved with its store (NeuralDB's edit state), loaded back without unpickling ---------------

STORE_WEIGHTS, STORE_CONFIG = "neuraldb.safetensors", "neuraldb.json"


def save_edited(model: nn.Module, db: NeuralKVDB, layer: int, folder) -> Path:
    """Write the unedited TinyLM (``config.json`` + ``model.safetensors``) and its NeuralDB store into ``folder``.

    The store is ``neuraldb.safetensors`` (the normalised keys, the residuals and the key mean ``mu``, float32,
    exactly as held in memory) and ``neuraldb.json`` (the edited layer, the gate, its threshold and the stored
    ids in order). :func:`load_edited` rebuilds the same edited model bit for bit.
    """
    from safetensors.torch import save_file

    from components.io import atomic_path, write_json
    from components.models.tiny_lm import save_model

    if db.index != "exact" or db.residuals is None:
        raise DataError("save_edited: needs a non-empty store with the exact search (an HNSW graph is not saved)")
    folder = save_model(model, folder)
    with atomic_path(folder / STORE_WEIGHTS) as tmp:
        save_file(
            {"keys": db.keys.contiguous(), "residuals": db.residuals.contiguous(), "mu": db.mu.contiguous()}, str(tmp)
        )
    write_json(
        folder / STORE_CONFIG,
        {
            "layer": int(layer),
            "gamma": db.gamma,
            "gate": db.gate,
            "temperature": db.temperature,
            "chunk": db.chunk,
            "ids": list(db.ids),
        },
    )
    return folder


def load_store(folder) -> tuple[NeuralKVDB, int]:
    """The NeuralDB store saved by :func:`save_edited` (detached) and its layer; safetensors + JSON only."""
    import json

    from safetensors.torch import load_file

    folder = Path(folder)
    cfg_path, w_path = folder / STORE_CONFIG, folder / STORE_WEIGHTS
    for p in (cfg_path, w_path):
        if not p.is_file():
            raise DataError(f"{p}: missing (expected an edited-model folder written by save_edited)")
    try:
        cfg, t = json.loads(cfg_path.read_text()), load_file(str(w_path))
        db = NeuralKVDB(
            t["mu"], gamma=cfg["gamma"], gate=cfg["gate"], temperature=cfg["temperature"], chunk=cfg["chunk"]
        )
        keys, residuals, ids, layer = t["keys"], t["residuals"], [str(i) for i in cfg["ids"]], int(cfg["layer"])
    except Exception as exc:
        raise DataError(f"{folder}: not a readable NeuralDB store ({type(exc).__name__}: {exc})") from None
    if not (len(ids) == keys.shape[0] == residuals.shape[0]) or keys.shape[1] != db.mu.numel():
        raise DataError(
            f"{folder}: store shapes disagree ({len(ids)} ids, keys {tuple(keys.shape)}, "
            f"residuals {tuple(residuals.shape)}, mu {tuple(db.mu.shape)})"
        )
    db.ids, db.keys, db.residuals = ids, keys, residuals  # already normalised: stored as they were held
    return db, layer


def load_edited(folder):
    """The TinyLM of ``folder`` with its NeuralDB store attached at the saved layer (MLflow's allow-listed loader).

    The store is also reachable as ``model.neuraldb`` (``model.neuraldb.detach()`` gives back the unedited model).
    """
    from components.editing.model import edit_site
    from components.models.tiny_lm import load_model

    model = load_model(folder)
    db, layer = load_store(folder)
    site = edit_site(model, layer)
    if site.weight.shape != (db.residuals.shape[1], db.keys.shape[1]):
        raise DataError(
            f"{folder}: store of width {tuple(db.keys.shape[1:])} -> {db.residuals.shape[1]} does not fit "
            f"layer {layer}'s projection {tuple(site.weight.shape)}"
        )
    db.attach(site)
    model.neuraldb = db
    return model
