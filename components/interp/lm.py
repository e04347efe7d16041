"""One small interface over a Hugging Face causal LM and :class:`~components.models.tiny_lm.TinyLM`: batched
prefill + incremental sampling with an optional residual-stream addition at one position per row, teacher-forced
log-probabilities, and activation reads. Prompts are token-id lists; batches are padded inside (left for Hugging
Face, with attention mask and position ids; right for TinyLM, whose KV cache decodes each row at its own position),
so callers always speak in unpadded positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from components.errors import ParamsError
from components.interp.hooks import add_to_residual, n_residual_layers, read_residual


@dataclass(frozen=True)
class Steer:
    """Add ``vectors`` ((d,) or (B, d)) at residual ``layer`` and unpadded ``positions`` (B,) of the prompts."""

    layer: int
    vectors: torch.Tensor
    positions: Sequence[int]


class SteerableLM:
    """A causal LM with batched generation and steering; ``kind`` is ``"hf"`` or ``"tiny"``."""

    def __init__(self, model, *, pad_id: int = 0) -> None:
        self.model = model.eval()
        self.kind = "tiny" if hasattr(model, "blocks") else "hf"
        self.pad_id = int(pad_id)
        self.n_layers = n_residual_layers(model)  # embedding output included

    # ------------------------------------------------------------------ padding
    def _pad(self, seqs: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """ids (B, W), attention mask (B, W), offset (B,): padded index = unpadded index + offset."""
        if not seqs or any(len(s) == 0 for s in seqs):
            raise ParamsError("prompts: every row needs at least one token")
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        off = torch.zeros(len(seqs), dtype=torch.long)
        for b, s in enumerate(seqs):
            if self.kind == "hf":
                off[b] = width - len(s)
                ids[b, off[b] :] = torch.as_tensor(list(s))
                mask[b, off[b] :] = 1
            else:
                ids[b, : len(s)] = torch.as_tensor(list(s))
                mask[b, : len(s)] = 1
        return ids, mask, off

    def _ctx(self, steer: Steer | None, off: torch.Tensor):
        if steer is None:
            return nullcontext()
        pos = torch.as_tensor(list(steer.positions), dtype=torch.long)
        return add_to_residual(self.model, steer.layer, steer.vectors, torch.where(pos >= 0, pos + off, pos))

    def _forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.kind == "tiny":
            return self.model(ids)[0]
        pos_ids = (mask.cumsum(-1) - 1).clamp(min=0)
        return self.model(input_ids=ids, attention_mask=mask, position_ids=pos_ids, use_cache=False).logits

    # ------------------------------------------------------------------ reading
    @torch.no_grad()
    def read(self, seqs: Sequence[Sequence[int]], layers: Sequence[int], positions: Sequence[int]) -> torch.Tensor:
        """Residual activations (len(layers), B, d) at unpadded ``positions`` of each row."""
        ids, mask, off = self._pad(seqs)
        pos = torch.as_tensor(list(positions), dtype=torch.long)
        with read_residual(self.model, layers, positions=pos + off) as store:
            self._forward(ids, mask)
        return torch.stack([store[int(layer)] for layer in layers]).float()

    @torch.no_grad()
    def logprobs(self, seqs: Sequence[Sequence[int]], steer: Steer | None = None) -> list[torch.Tensor]:
        """Next-token log-probabilities of every position of each row, (len_i, V), under an optional steer."""
        ids, mask, off = self._pad(seqs)
        with self._ctx(steer, off):
            logits = self._forward(ids, mask)
        lp = F.log_softmax(logits.float(), dim=-1)
        return [lp[b, int(off[b]) : int(off[b]) + len(s)] for b, s in enumerate(seqs)]

    # ------------------------------------------------------------------ sampling
    @torch.no_grad()
    def generate(
        self,
        prompts: Sequence[Sequence[int]],
        *,
        max_new_tokens: int,
        stop_ids: Sequence[int] = (),
        steer: Steer | None = None,
        temperature: float = 1.0,
        generator: torch.Generator | None = None,
    ) -> list[list[int]]:
        """New tokens of each row (the stop token included when one is drawn); greedy when ``temperature == 0``.

        The steer acts in the prefill only (it sits at a prompt position); decoding steps run unhooked.
        """
        if max_new_tokens < 1:
            raise ParamsError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        ids, mask, off = self._pad(prompts)
        lengths = torch.as_tensor([len(p) for p in prompts])
        b = len(prompts)
        with self._ctx(steer, off):
            if self.kind == "tiny":
                width = ids.shape[1] + max_new_tokens
                logits, cache = self.model.prefill(ids, width)
                last = logits[torch.arange(b), lengths - 1]
            else:
                pos_ids = (mask.cumsum(-1) - 1).clamp(min=0)
                out = self.model(input_ids=ids, attention_mask=mask, position_ids=pos_ids, use_cache=True)
                last, cache = out.logits[:, -1], out.past_key_values
        stop = torch.as_tensor(list(stop_ids), dtype=torch.long)
        done = torch.zeros(b, dtype=torch.bool)
        new: list[list[int]] = [[] for _ in range(b)]
        pos = lengths.clone()  # position of the token being fed next (unpadded)
        for _ in range(max_new_tokens):
            tok = _sample(last, temperature, generator)
            for r in range(b):
                if not done[r]:
                    new[r].append(int(tok[r]))
            done |= torch.isin(tok, stop) if stop.numel() else torch.zeros_like(done)
            if bool(done.all()) or len(new[0]) >= max_new_tokens and all(len(n) >= max_new_tokens for n in new):
                break
            if self.kind == "tiny":
                last = self.model.step(tok, pos, cache)
            else:
                mask = torch.cat([mask, torch.ones(b, 1, dtype=torch.long)], dim=1)
                out = self.model(
                    input_ids=tok[:, None],
                    attention_mask=mask,
                    position_ids=pos[:, None],
                    past_key_values=cache,
                    use_cache=True,
                )
                last, cache = out.logits[:, -1], out.past_key_values
            pos = pos + 1
        return new


def _sample(logits: torch.Tensor, temperature: float, generator: torch.Generator | None) -> torch.Tensor:
    if temperature <= 0:
        return logits.argmax(-1)
    probs = F.softmax(logits.float() / temperature, dim=-1)
    return torch.multinomial(probs, 1, generator=generator)[:, 0]
