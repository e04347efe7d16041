"""Read and add residual-stream activations at chosen layers and positions, batched (plain PyTorch forward hooks).

Works on Hugging Face decoder-only LMs (``model.model.embed_tokens`` + ``model.model.layers``, as in Llama, Qwen,
Gemma) and on :class:`components.models.tiny_lm.TinyLM` (``embed`` + ``blocks``). Layer ``0`` is the embedding output
and layer ``l >= 1`` the output of block ``l - 1``: the same indexing as Hugging Face's ``output_hidden_states``
(whose last entry is taken *after* the final norm, so it differs from the hook's layer ``n_layers``).

Positions are per row: ``positions[b]`` is the index in row ``b`` of the padded batch that is read or changed.
Rows whose position is ``-1`` are left alone. Both context managers remove their hooks on exit, even on error.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch
from torch import nn

from components.errors import ParamsError


def residual_modules(model: nn.Module) -> list[nn.Module]:
    """``[embedding, block_0, ..., block_{L-1}]``: the modules whose outputs are residual layers ``0..L``."""
    if hasattr(model, "blocks") and hasattr(model, "embed"):  # TinyLM
        return [model.embed, *model.blocks]
    inner = getattr(model, "model", None)
    if inner is not None and hasattr(inner, "layers") and hasattr(inner, "embed_tokens"):
        return [inner.embed_tokens, *inner.layers]
    raise ParamsError(f"{type(model).__name__}: no embedding + decoder-layer list found (model.model.layers / blocks)")


def n_residual_layers(model: nn.Module) -> int:
    """Number of residual layers, the embedding output included (``L + 1``)."""
    return len(residual_modules(model))


def _module(model: nn.Module, layer: int) -> nn.Module:
    mods = residual_modules(model)
    if not 0 <= int(layer) < len(mods):
        raise ParamsError(f"layer {layer} out of range: the model has residual layers 0..{len(mods) - 1}")
    return mods[int(layer)]


def _hidden(output):
    return output[0] if isinstance(output, tuple) else output


def _replace(output, hidden: torch.Tensor):
    return (hidden, *output[1:]) if isinstance(output, tuple) else hidden


def _rows_positions(positions, batch: int, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    pos = torch.as_tensor(positions, dtype=torch.long).reshape(-1)
    if pos.numel() != batch:
        raise ParamsError(f"positions: {pos.numel()} entries for a batch of {batch} rows")
    if (pos >= width).any() or (pos < -1).any():
        raise ParamsError(f"positions: values must lie in -1..{width - 1}, got {pos.tolist()}")
    keep = pos >= 0
    return torch.arange(batch)[keep], pos[keep]


@contextmanager
def read_residual(model: nn.Module, layers: Sequence[int], positions=None) -> Iterator[dict[int, torch.Tensor]]:
    """Record the residual stream at ``layers`` during the forward passes inside the block.

    Yields a dict filled on each forward: ``{layer: (B, T, d)}`` if ``positions`` is None, else
    ``{layer: (B, d)}`` taken at ``positions[b]`` of each row (detached, float32 copies).
    """
    store: dict[int, torch.Tensor] = {}
    handles = []

    def make(layer: int):
        def hook(_module, _inputs, output):
            h = _hidden(output)
            if positions is None:
                store[layer] = h.detach().clone()
            else:
                rows, pos = _rows_positions(positions, h.shape[0], h.shape[1])
                out = torch.zeros(h.shape[0], h.shape[2], dtype=h.dtype)
                out[rows] = h[rows, pos].detach()
                store[layer] = out

        return hook

    try:
        for layer in layers:
            handles.append(_module(model, layer).register_forward_hook(make(int(layer))))
        yield store
    finally:
        for h in handles:
            h.remove()


@contextmanager
def add_to_residual(model: nn.Module, layer: int, vectors: torch.Tensor, positions) -> Iterator[None]:
    """Add ``vectors`` to the residual stream at ``layer`` and ``positions[b]`` of each row, on every forward inside.

    ``vectors`` is ``(d,)`` (the same for every row) or ``(B, d)``. A forward whose sequence is shorter than a row's
    position (an incremental decoding step) leaves that row alone, so keep the block around the prefill only.
    """
    vectors = torch.as_tensor(vectors, dtype=torch.float32)

    def hook(_module, _inputs, output):
        h = _hidden(output)
        b, t, d = h.shape
        vec = vectors.expand(b, d) if vectors.dim() == 1 else vectors
        if vec.shape != (b, d):
            raise ParamsError(f"vectors: shape {tuple(vectors.shape)} does not fit a batch of {b} rows of width {d}")
        pos = torch.as_tensor(positions, dtype=torch.long).reshape(-1)
        if pos.numel() != b:
            raise ParamsError(f"positions: {pos.numel()} entries for a batch of {b} rows")
        keep = (pos >= 0) & (pos < t)
        if not keep.any():
            return output
        rows = torch.arange(b)[keep]
        h = h.clone()
        h[rows, pos[keep]] = h[rows, pos[keep]] + vec[keep].to(h.dtype)
        return _replace(output, h)

    handle = _module(model, layer).register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()
