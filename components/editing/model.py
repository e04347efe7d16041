"""The edited site (one MLP output projection), prompt encoding, keys and target log-probabilities.

Works with :class:`components.models.tiny_lm.TinyLM` (``blocks[l].mlp.down``) and Hugging Face
Llama-style (``model.layers[l].mlp.down_proj``) or GPT-2-style (``transformer.h[l].mlp.c_proj``, a Conv1D
whose weight is stored transposed) models. A *key* is the input of that projection (the MLP's hidden
activation) at the subject's last token; the *value* is its output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from components.errors import DataError, ParamsError

Encoder = Callable[[str], list[int]]


@dataclass
class EditSite:
    """The projection ``W`` (d_out x d_in) that an edit changes, and how it is stored in its module."""

    module: nn.Module
    layer: int
    transposed: bool  # GPT-2 Conv1D keeps W as (d_in, d_out)
    block: nn.Module | None = None  # the transformer block whose residual-stream output the edit shifts

    @property
    def weight(self) -> torch.Tensor:
        w = self.module.weight.detach()
        return w.T if self.transposed else w

    def set_weight(self, w: torch.Tensor) -> None:
        with torch.no_grad():
            self.module.weight.copy_(w.T if self.transposed else w)


def _blocks(model: nn.Module) -> tuple[Sequence[nn.Module], str]:
    if hasattr(model, "blocks") and hasattr(model, "config") and hasattr(model.config, "d_ff"):
        return model.blocks, "mlp.down"
    inner = getattr(model, "model", None)
    if inner is not None and hasattr(inner, "layers"):
        return inner.layers, "mlp.down_proj"
    tr = getattr(model, "transformer", None)
    if tr is not None and hasattr(tr, "h"):
        return tr.h, "mlp.c_proj"
    raise DataError(f"unsupported architecture {type(model).__name__}: expected a TinyLM, Llama-style or GPT-2 model")


def edit_site(model: nn.Module, layer: int) -> EditSite:
    """The MLP output projection of block ``layer``; an out-of-range index is a ParamsError naming the range."""
    blocks, path = _blocks(model)
    if not isinstance(layer, int) or isinstance(layer, bool) or not 0 <= layer < len(blocks):
        raise ParamsError(f"layer: {layer!r} is out of range; the model has layers 0..{len(blocks) - 1}")
    module = blocks[layer]
    for part in path.split("."):
        module = getattr(module, part)
    return EditSite(module, layer, transposed=path.endswith("c_proj"), block=blocks[layer])


def logits_of(model: nn.Module, ids: torch.Tensor) -> torch.Tensor:
    """Logits (B, T, V) for TinyLM (returns a tuple) and Hugging Face models (returns an object)."""
    out = model(ids)
    return out[0] if isinstance(out, tuple) else out.logits


def cached_encoder(encode: Encoder, maxsize: int = 1 << 18) -> Encoder:
    """``encode`` with its results remembered: the edit stage encodes the same few thousand prompts, subjects and
    objects for every method, m and seed (two million calls, 13 s of the default run, for ~20,000 distinct
    strings). Each call returns a fresh list, so a caller that changes it changes no other result."""
    from functools import lru_cache

    remembered = lru_cache(maxsize=maxsize)(lambda text: tuple(encode(text)))
    return lambda text: list(remembered(text))


@dataclass
class Encoded:
    """Prompts (+ targets) as one right-padded batch; ``subject_pos`` indexes the subject's last token."""

    ids: torch.Tensor  # (B, T) int64
    subject_pos: torch.Tensor  # (B,)
    target_start: torch.Tensor  # (B,) first target position (= prompt length)
    target_len: torch.Tensor  # (B,) 0 when no target was given


def subject_last_index(encode: Encoder, prompt: str, subject: str) -> int:
    """Index of the subject's last token in ``encode(prompt)`` (its last occurrence)."""
    at = prompt.rfind(subject)
    if at < 0:
        raise DataError(f"subject {subject!r} is not in prompt {prompt!r}")
    head = encode(prompt[: at + len(subject)])
    full = encode(prompt)
    if full[: len(head)] != head:
        raise DataError(f"prompt {prompt!r}: the tokenizer merges the subject's last token with what follows")
    return len(head) - 1


def encode_batch(
    encode: Encoder,
    prompts: Sequence[str],
    subjects: Sequence[str] | None = None,
    targets: Sequence[str] | None = None,
    pad_id: int = 0,
) -> Encoded:
    """Encode ``prompt`` (+ ``" " + target``) rows into one padded batch."""
    rows, pos, starts, lens = [], [], [], []
    for i, p in enumerate(prompts):
        ids = encode(p)
        if not ids:
            raise DataError(f"prompt {p!r} encodes to no tokens")
        pos.append(subject_last_index(encode, p, subjects[i]) if subjects is not None else len(ids) - 1)
        tgt = encode(" " + targets[i]) if targets is not None else []
        starts.append(len(ids))
        lens.append(len(tgt))
        rows.append(ids + tgt)
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r, dtype=torch.long)
    return Encoded(ids, torch.tensor(pos), torch.tensor(starts), torch.tensor(lens))


def target_scores(logits: torch.Tensor, enc: Encoded) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row: summed log P(target tokens | prompt) and the fraction of target tokens that are top-1."""
    logp = F.log_softmax(logits.float(), dim=-1)
    b, t = enc.ids.shape
    pos = torch.arange(t - 1).unsqueeze(0)
    tok_pos = pos + 1  # the token predicted at position pos
    mask = (tok_pos >= enc.target_start[:, None]) & (tok_pos < (enc.target_start + enc.target_len)[:, None])
    tgt = enc.ids[:, 1:]
    lp = logp[:, :-1].gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
    hit = (logp[:, :-1].argmax(-1) == tgt).float()
    n = mask.sum(1).clamp(min=1)
    return (lp * mask).sum(1), (hit * mask).sum(1) / n


def logits_at(model: nn.Module, ids: torch.Tensor, rows: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Logits at ``(rows, pos)`` of ``ids`` (any broadcastable index tensors), e.g. each prompt's last position.

    For the tiny LM (a ``head`` module) a pre-hook hands the head just those rows: the vocabulary projection is a
    third of its per-token cost, so it is paid for the positions that are read instead of every position. Other
    models index their full logits. Same values.
    """
    head = getattr(model, "head", None)
    if isinstance(head, nn.Linear):
        handle = head.register_forward_pre_hook(lambda m, a: (a[0][rows, pos],))
        try:
            return logits_of(model, ids)
        finally:
            handle.remove()
    return logits_of(model, ids)[rows, pos]


def scores_at_targets(model: nn.Module, enc: Encoded) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`target_scores` with the LM head applied only at the positions that predict target tokens.

    The tiny LM gets :func:`logits_at` those positions and runs without the batch's last column: no position that
    predicts a target token reads it (a causal LM's output at a position does not depend on later tokens), and
    with one-token objects it is a sixth of the positions. Other models fall back to the full logits. Same values.
    """
    if not isinstance(getattr(model, "head", None), nn.Linear):
        return target_scores(logits_of(model, enc.ids), enc)
    b, t = enc.ids.shape
    width = max(int(enc.target_len.max()), 1)
    rows = torch.arange(b)[:, None]
    pos = (enc.target_start[:, None] - 1 + torch.arange(width)[None]).clamp(0, t - 2)
    logits = logits_at(model, enc.ids[:, : max(t - 1, 1)], rows, pos)
    logp = F.log_softmax(logits.float(), dim=-1)
    tgt = enc.ids[rows, pos + 1]
    mask = torch.arange(width)[None] < enc.target_len[:, None]
    lp = logp.gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
    hit = (logp.argmax(-1) == tgt).float()
    return (lp * mask).sum(1), (hit * mask).sum(1) / mask.sum(1).clamp(min=1)


class StopForward(Exception):
    """Raised by a capture hook that has what it needs: the layers after it (and the LM head) are skipped."""


def run_until_stopped(model: nn.Module, ids: torch.Tensor) -> None:
    """Run ``model`` on ``ids`` until a hook raises :class:`StopForward` (or to the end)."""
    try:
        logits_of(model, ids)
    except StopForward:
        pass


class KeyCapture:
    """Forward pre-hook on the edited projection that records its input at given positions; with ``stop`` the
    forward ends there (the key does not depend on anything after it)."""

    def __init__(self, site: EditSite, positions: torch.Tensor, stop: bool = False) -> None:
        self.positions, self.stop = positions, stop
        self.keys: torch.Tensor | None = None
        self.handle = site.module.register_forward_pre_hook(self._hook)

    def _hook(self, module: nn.Module, args: tuple) -> None:
        x = args[0]
        self.keys = x[torch.arange(x.shape[0]), self.positions].detach()
        if self.stop:
            raise StopForward

    def remove(self) -> None:
        self.handle.remove()


def length_order(encode: Encoder, prompts: Sequence[str]) -> np.ndarray:
    """Indices of ``prompts`` sorted by token length (stable): batches of similar length pad less.

    A right-padded causal LM's outputs at a row's own positions do not depend on the padding after them, so
    scoring in this order and scattering back gives the same values (up to float rounding) for about 3/4 of
    the compute on prompts whose lengths differ (measured on NeuralDB's default prompts: 76% of the padded
    positions are real tokens in prompt order, 99% in this order).
    """
    return np.argsort([len(encode(p)) for p in prompts], kind="stable")


def inverse(order: np.ndarray) -> np.ndarray:
    """The permutation that undoes ``order``: ``values_in_order[inverse(order)]`` is in the original order."""
    inv = np.empty_like(order)
    inv[order] = np.arange(len(order))
    return inv


@torch.no_grad()
def compute_keys(
    model: nn.Module,
    site: EditSite,
    encode: Encoder,
    prompts: Sequence[str],
    subjects: Sequence[str],
    batch_size: int = 256,
) -> torch.Tensor:
    """Keys (N, d_in) at the subject's last token of each prompt (batched by prompt length, returned in order)."""
    order = length_order(encode, prompts)
    out = []
    for i in range(0, len(prompts), batch_size):
        rows = order[i : i + batch_size]
        enc = encode_batch(encode, [prompts[j] for j in rows], [subjects[j] for j in rows])
        cap = KeyCapture(site, enc.subject_pos, stop=True)
        try:
            run_until_stopped(model, enc.ids)
        finally:
            cap.remove()
        out.append(cap.keys.float())
    if not out:
        return torch.zeros(0, site.weight.shape[1])
    return torch.cat(out)[torch.from_numpy(inverse(order))]


@torch.no_grad()
def hidden_norms(model: nn.Module, site: EditSite, ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Norm of the block's residual-stream output at ``positions`` (MEMIT's reference scale for the clamp)."""
    store: list[torch.Tensor] = []

    def grab(m, a, o):
        h = o[0] if isinstance(o, tuple) else o
        store.append(h[torch.arange(h.shape[0]), positions].norm(dim=-1))
        raise StopForward

    handle = site.block.register_forward_hook(grab)
    try:
        run_until_stopped(model, ids)
    finally:
        handle.remove()
    return store[0].float()


@torch.no_grad()
def generic_keys(
    model: nn.Module, site: EditSite, tokens: torch.Tensor, *, n_keys: int, seq_len: int, batch_size: int = 32
) -> torch.Tensor:
    """K0: keys at every position of consecutive ``seq_len`` windows of generic text, up to ``n_keys``."""
    n_win = min(len(tokens) // seq_len, -(-n_keys // seq_len))
    if n_win < 1:
        raise DataError(f"generic text has {len(tokens)} tokens; need at least seq_len={seq_len}")
    wins = tokens[: n_win * seq_len].view(n_win, seq_len).long()
    store: list[torch.Tensor] = []

    def grab(m, a):
        store.append(a[0].detach().reshape(-1, a[0].shape[-1]))
        raise StopForward

    handle = site.module.register_forward_pre_hook(grab)
    try:
        for i in range(0, n_win, batch_size):
            run_until_stopped(model, wins[i : i + batch_size])
    finally:
        handle.remove()
    return torch.cat(store)[:n_keys].float()
