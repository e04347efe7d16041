"""A fixture policy for the known-answer test: a learnable chain head and a frozen renderer as the image head.

The chain head is a table of logits per (relation named in the prompt, chain position): each chain token is
drawn from its own categorical, so a chain is valid and correct only when every coordinate agrees. The image
head puts all mass on the cells the renderer draws from the chain already in the context (valid slots only), so
the picture follows the plan and GRPO's only lever is the plan. "SFT" sets the table to the log-frequencies of
planner chains whose relation is reversed half the time: a policy that is weak on position by construction.
The model answers ``forward(x) -> (logits, None)`` as ``TinyLM`` does, so ``components.rl_text`` trains it.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from components.got_r1.planner import OPPOSITE, _grid_boxes
from components.got_r1.render import render
from components.got_r1.tokens import PROMPT_LEN, Vocab, parse_chain
from components.got_r1.world import RELATIONS

SURE = 30.0  # the image head's logit margin


def fixture_specs(shape_a: str = "circle", shape_b: str = "square") -> list[dict]:
    """One position prompt per relation, same two shapes: 'a photo of a {b} {rel} a {a}'."""
    return [
        {
            "prompt": f"a photo of a {shape_b} {rel} a {shape_a}",
            "tag": "position",
            "include": [{"class": shape_a, "count": 1}, {"class": shape_b, "count": 1, "position": [rel, 0]}],
        }
        for rel in RELATIONS
    ]


class ToyChainPolicy(nn.Module):
    """Chain logits per (relation, chain position, code of the first box's corner (x0, y0)); image by rendering."""

    def __init__(self, vocab: Vocab) -> None:
        super().__init__()
        self.vocab = vocab
        self.n_chain = vocab.chain_len(True)
        s = vocab.size
        self.chain_logits = nn.Parameter(torch.zeros(len(RELATIONS) + 1, self.n_chain, s * s + 1, len(vocab)))
        self._rel_ids = {vocab.id(r.split()[0]): i for i, r in enumerate(RELATIONS)}  # left/right/above/below
        self._coord0 = vocab.id("c0")
        self._cache: dict[tuple, np.ndarray] = {}

    def relation(self, x: torch.Tensor) -> torch.Tensor:
        rel = torch.full((x.shape[0],), len(RELATIONS), dtype=torch.long)
        for tok, i in self._rel_ids.items():
            rel = torch.where((x[:, :PROMPT_LEN] == tok).any(1), torch.full_like(rel, i), rel)
        return rel

    def _code(self, x0: torch.Tensor, y0: torch.Tensor) -> torch.Tensor:
        s = self.vocab.size
        cx, cy = x0 - self._coord0, y0 - self._coord0
        ok = (cx >= 0) & (cx < s) & (cy >= 0) & (cy < s)
        return torch.where(ok, 1 + cx * s + cy, torch.zeros_like(cx))

    def _image(self, chain_ids: tuple) -> np.ndarray:
        if chain_ids not in self._cache:
            toks = [self.vocab.tokens[i] for i in chain_ids]
            objs = []
            for k in range(0, len(toks), 6):  # valid slots only
                o, ok = parse_chain(toks[k : k + 6] + ["<none>"] * (len(toks) - 6), self.vocab.size)
                objs += o if ok else []
            self._cache[chain_ids] = render(objs, self.vocab.size)
        return self._cache[chain_ids]

    def _at(self, x: torch.Tensor, pos: int) -> torch.Tensor:
        """Logits (B, V) for the token after position ``pos`` of every row of ``x`` (which holds 0..pos)."""
        v, n, b = self.vocab, self.n_chain, x.shape[0]
        j = pos - (PROMPT_LEN - 1)  # chain index being predicted
        img_pos = PROMPT_LEN + n
        if 0 <= j < n:
            code = (
                self._code(x[:, PROMPT_LEN + 2], x[:, PROMPT_LEN + 3]) if j >= 4 else torch.zeros(b, dtype=torch.long)
            )
            return self.chain_logits[self.relation(x), j, code]
        out = torch.full((b, len(v)), -SURE)
        k = pos + 1 - img_pos - 1  # image cell being predicted
        if pos + 1 == img_pos:
            out[:, v.id("<img>")] = SURE
        elif 0 <= k < v.size * v.size:
            for r in range(b):
                out[r, v.id(f"p{int(self._image(tuple(x[r, PROMPT_LEN:img_pos].tolist())).reshape(-1)[k])}")] = SURE
        else:
            out[:, v.eos] = SURE
        return out

    def forward(self, x: torch.Tensor, targets=None):
        """Logits (B, T, V): the chain positions from the table, every later position at once per row."""
        b, t = x.shape
        v, n = self.vocab, self.n_chain
        first = min(t, PROMPT_LEN - 1 + n)
        parts = [torch.full((b, PROMPT_LEN - 1, len(v)), -SURE)[:, :t]]
        parts += [self._at(x[:, : p + 1], p).unsqueeze(1) for p in range(PROMPT_LEN - 1, first)]
        if t > first:
            rest = torch.full((b, t - first, len(v)), -SURE)
            for r in range(b):
                img = self._image(tuple(x[r, PROMPT_LEN : PROMPT_LEN + n].tolist())).reshape(-1)
                ids = [v.id("<img>"), *(v.id(f"p{int(c)}") for c in img), v.eos]
                ids += [v.eos] * max(0, t - first - len(ids))
                rest[r, torch.arange(t - first), ids[: t - first]] = SURE
            parts.append(rest)
        return torch.cat(parts, 1), None

    def prefill(self, idx: torch.Tensor, width: int):
        buf = torch.zeros((idx.shape[0], width), dtype=torch.long)
        buf[:, : idx.shape[1]] = idx
        return self.forward(idx)[0], buf

    def step(self, tokens: torch.Tensor, pos: torch.Tensor, buf: torch.Tensor) -> torch.Tensor:
        buf[torch.arange(len(tokens)), pos] = tokens
        if bool((pos != pos[0]).any()):  # the fixed layout puts every row at the same position
            raise ValueError("ToyChainPolicy.step: rows at different positions")
        return self._at(buf, int(pos[0]))

    @torch.no_grad()
    def fit_weak_sft(self, specs: list[dict], reversed_share: float = 0.5, eps: float = 1e-6) -> None:
        """Log-frequencies of grid-layout chains, the relation reversed for ``reversed_share`` of them."""
        s = self.vocab.size
        for sp in specs:
            rel = sp["include"][1]["position"][0]
            counts = torch.full((self.n_chain, s * s + 1, len(self.vocab)), eps)
            for r, w in ((rel, 1 - reversed_share), (OPPOSITE[rel], reversed_share)):
                boxes = _grid_boxes(2, s, r)
                objs = [{"colour": "red", "shape": g["class"], "box": bx} for g, bx in zip(sp["include"], boxes)]
                ids = torch.tensor(self.vocab.encode_chain(objs))
                code = int(self._code(ids[2:3], ids[3:4]))
                counts[torch.arange(4), 0, ids[:4]] += w
                counts[torch.arange(4, self.n_chain), code, ids[4:]] += w
            self.chain_logits[RELATIONS.index(rel)] = counts.log()
