"""Seeded batched sampling from a causal LM, prompts of different lengths in one batch.

Every row lives in one right-padded buffer and takes the logits at its own last position. A model with a
key-value cache (``prefill`` and ``step``, as :class:`~components.models.tiny_lm.TinyLM`) reads the prompts
once and then one new token per row per step, each row at its own position; any other model (a Hugging Face
one) rereads the whole buffer at each step, with no attention mask needed (a causal model never looks right).
Both give the same logits up to float rounding. Completion tokens after the first ``eos`` are masked out (the
eos itself is kept, as TRL does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from components.errors import ParamsError


def logits_of(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Logits of a model returning a tuple (``TinyLM``) or an object with ``.logits`` (Hugging Face)."""
    out = model(x)
    return out[0] if isinstance(out, tuple) else out.logits


@dataclass
class Rollouts:
    """A batch of completions: ``prompt_index[b]`` says which prompt of the step row b answers."""

    prompts: list[list[int]]  # one entry per row (the row's prompt ids)
    prompt_index: torch.Tensor  # (B,) long
    completions: torch.Tensor  # (B, T) long, right-padded with ``pad``
    mask: torch.Tensor  # (B, T) float, 1 on completion tokens up to and including eos
    max_new: int

    def texts(self, decode: Callable[[list[int]], str]) -> list[str]:
        return [decode(c[: int(m.sum())].tolist()) for c, m in zip(self.completions, self.mask)]


def expand(prompts: Sequence[Sequence[int]], group_sizes: Sequence[int]) -> tuple[list[list[int]], torch.Tensor]:
    """Repeat prompt i ``group_sizes[i]`` times; return the rows and each row's prompt index."""
    if len(prompts) != len(group_sizes):
        raise ParamsError(f"{len(prompts)} prompts but {len(group_sizes)} group sizes")
    if any(int(n) < 0 for n in group_sizes):
        raise ParamsError(f"group sizes must be >= 0, got {list(group_sizes)}")
    rows, index = [], []
    for i, (p, n) in enumerate(zip(prompts, group_sizes)):
        rows += [list(p)] * int(n)
        index += [i] * int(n)
    return rows, torch.tensor(index, dtype=torch.long)


@torch.no_grad()
def sample(
    model: nn.Module,
    prompts: Sequence[Sequence[int]],
    group_sizes: Sequence[int],
    *,
    max_new: int,
    eos: int,
    pad: int = 0,
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
    chunk: int = 1024,
) -> Rollouts:
    """Sample ``group_sizes[i]`` completions of prompt i (``temperature`` 0 is greedy); seeded by ``generator``."""
    if max_new < 1:
        raise ParamsError(f"max_new must be >= 1, got {max_new}")
    rows, index = expand(prompts, group_sizes)
    if not rows:
        raise ParamsError("sample: no rollouts requested (all group sizes are 0)")
    if any(len(r) == 0 for r in rows):
        raise ParamsError("sample: an empty prompt (a causal LM needs at least one context token)")
    was_training = model.training
    model.eval()
    outs = [
        _sample_chunk(model, rows[i : i + chunk], max_new, eos, pad, temperature, generator)
        for i in range(0, len(rows), chunk)
    ]
    model.train(was_training)
    comp = torch.cat([o[0] for o in outs])
    mask = torch.cat([o[1] for o in outs])
    return Rollouts(prompts=rows, prompt_index=index, completions=comp, mask=mask, max_new=max_new)


def _sample_chunk(model, rows, max_new, eos, pad, temperature, generator):
    b = len(rows)
    lens = torch.tensor([len(r) for r in rows])
    buf = torch.full((b, int(lens.max()) + max_new), pad, dtype=torch.long)
    for i, r in enumerate(rows):
        buf[i, : len(r)] = torch.tensor(r)
    comp = torch.full((b, max_new), pad, dtype=torch.long)
    alive = torch.ones(b, dtype=torch.bool)
    mask = torch.zeros(b, max_new)
    ar = torch.arange(b)
    cached = hasattr(model, "prefill") and hasattr(model, "step")
    for t in range(max_new):
        if not cached:
            logits = logits_of(model, buf[:, : int(lens.max()) + t])[ar, lens + t - 1].float()
        elif t == 0:
            full, cache = model.prefill(buf[:, : int(lens.max())], buf.shape[1])
            logits = full[ar, lens - 1].float()
        else:
            logits = model.step(buf[ar, lens + t - 1], lens + t - 1, cache).float()
        if temperature == 0:
            nxt = logits.argmax(-1)
        else:
            probs = F.softmax(logits / temperature, dim=-1)
            nxt = torch.multinomial(probs, 1, generator=generator).squeeze(1)
        nxt = torch.where(alive, nxt, torch.full_like(nxt, pad))
        comp[:, t] = nxt
        mask[:, t] = alive.float()
        buf[ar, lens + t] = nxt
        alive = alive & (nxt != eos)
        if not alive.any():
            break
    return comp, mask


def completion_logps(model: nn.Module, rollouts: Rollouts) -> torch.Tensor:
    """Log-probabilities (B, T) of each completion token under ``model`` (differentiable)."""
    rows, comp = rollouts.prompts, rollouts.completions
    b, t = comp.shape
    lens = torch.tensor([len(r) for r in rows])
    x = torch.zeros((b, int(lens.max()) + t), dtype=torch.long)
    for i, r in enumerate(rows):
        x[i, : len(r)] = torch.tensor(r)
    pos = lens.unsqueeze(1) + torch.arange(t).unsqueeze(0)  # (B, T) positions of completion tokens
    x[torch.arange(b).unsqueeze(1), pos] = comp
    logits = logits_of(model, x[:, :-1])
    pred = logits.gather(1, (pos - 1).unsqueeze(-1).expand(-1, -1, logits.shape[-1]))  # (B, T, V)
    logp = F.log_softmax(pred.float(), dim=-1)
    return logp.gather(-1, comp.unsqueeze(-1)).squeeze(-1)
